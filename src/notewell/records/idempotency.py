"""The first answer to a create request, kept for repeats with the same Idempotency-Key."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StoredAnswer:
    """The first answer to a request sent with an Idempotency-Key, as kept for its repeats."""

    fingerprint: str  # what the first request asked (method, path, body), hashed
    status: int | None  # None while the first request is still running
    location: str | None
    body: str  # the answer's JSON ("" while running)
    created_at: str
