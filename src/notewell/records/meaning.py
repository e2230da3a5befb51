"""The records of the embedding queue: a job to embed, and how far the queue has come."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    kind: str  # "memory" (taught knowledge included) or "session"
    item_id: int
    attempts: int
    text: str  # what is embedded; empty when the item is gone (its queue row is then just dropped)


@dataclass(frozen=True)
class QueueState:
    queued: int  # waiting, due or not
    failing: int  # of those, how many failed at least once
    vectors: int  # items embedded with the current model
    items: int  # live memories and sessions, embedded or not
    last_error: str | None
