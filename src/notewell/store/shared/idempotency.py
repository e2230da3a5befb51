"""Idempotency keys, in SQL both backends run: the first answer to each (owner, key), kept for a day."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from notewell.records.idempotency import StoredAnswer
from notewell.store.shared.dialect import Dialect
from notewell.store.shared.migrations import Migration

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE idempotency_keys (
            owner TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            status INTEGER,
            location TEXT,
            body TEXT NOT NULL,
            created_at {key} NOT NULL,
            PRIMARY KEY (owner, key)
        )
        """,
        "CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)",
    ),
]


class SqlIdempotency:
    def __init__(self, dialect: Dialect) -> None:
        self.sql = dialect
        dialect.migrate("idempotency", dialect.rendered(MIGRATIONS))

    def reserve(self, owner: str, key: str, fingerprint: str, at: str, *, stale_before: str,
                expired_before: str) -> StoredAnswer | None:
        with self.sql.transaction() as conn:
            conn.execute("DELETE FROM idempotency_keys WHERE created_at < ?", (expired_before,))
            conn.execute("DELETE FROM idempotency_keys WHERE owner = ? AND key = ? AND status IS NULL"
                         " AND created_at < ?", (owner, key, stale_before))
            if conn.execute("INSERT INTO idempotency_keys (owner, key, fingerprint, body, created_at)"
                            " VALUES (?, ?, ?, '', ?) ON CONFLICT (owner, key) DO NOTHING",
                            (owner, key, fingerprint, at)).rowcount == 1:
                return None
            return _answer(conn.execute("SELECT fingerprint, status, location, body, created_at"
                                        " FROM idempotency_keys WHERE owner = ? AND key = ?", (owner, key)).fetchone())

    def complete(self, owner: str, key: str, status: int, location: str | None, body: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("UPDATE idempotency_keys SET status = ?, location = ?, body = ? WHERE owner = ? AND key = ?",
                         (status, location, body, owner, key))

    def release(self, owner: str, key: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("DELETE FROM idempotency_keys WHERE owner = ? AND key = ? AND status IS NULL", (owner, key))


def _answer(row: Sequence[Any]) -> StoredAnswer:
    fingerprint, status, location, body, created_at = row
    return StoredAnswer(fingerprint, None if status is None else int(status), location, body, created_at)
