"""Idempotency keys as rows: the statements both backends share, written with ``?`` placeholders.

PostgreSQL's driver wants ``%s``: ``for_postgres`` rewrites a statement (none of them holds a literal
question mark). The backends differ only in how they open a transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from notewell.records.idempotency import StoredAnswer

DROP_EXPIRED = "DELETE FROM idempotency_keys WHERE created_at < ?"
DROP_STALE = "DELETE FROM idempotency_keys WHERE owner = ? AND key = ? AND status IS NULL AND created_at < ?"
RESERVE = ("INSERT INTO idempotency_keys (owner, key, fingerprint, body, created_at) VALUES (?, ?, ?, '', ?)"
           " ON CONFLICT (owner, key) DO NOTHING")
SELECT = "SELECT fingerprint, status, location, body, created_at FROM idempotency_keys WHERE owner = ? AND key = ?"
COMPLETE = "UPDATE idempotency_keys SET status = ?, location = ?, body = ? WHERE owner = ? AND key = ?"
RELEASE = "DELETE FROM idempotency_keys WHERE owner = ? AND key = ? AND status IS NULL"


def for_postgres(statement: str) -> str:
    return statement.replace("?", "%s")


def answer_from_row(row: Sequence[Any]) -> StoredAnswer:
    fingerprint, status, location, body, created_at = row
    return StoredAnswer(fingerprint, None if status is None else int(status), location, body, created_at)
