"""Idempotency keys on SQLite: the first answer to each (owner, key), kept for a day."""

from __future__ import annotations

from notewell.records.idempotency import StoredAnswer
from notewell.store import idempotency_rows as q
from notewell.store.sqlite.database import SqliteDatabase

MIGRATIONS = [
    """
    CREATE TABLE idempotency_keys (
        owner TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        status INTEGER,
        location TEXT,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (owner, key)
    );
    CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)
    """,
]


class SqliteIdempotency:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        db.migrate("idempotency", MIGRATIONS)

    def reserve(self, owner: str, key: str, fingerprint: str, at: str, *, stale_before: str,
                expired_before: str) -> StoredAnswer | None:
        with self.db.transaction() as conn:
            conn.execute(q.DROP_EXPIRED, (expired_before,))
            conn.execute(q.DROP_STALE, (owner, key, stale_before))
            if conn.execute(q.RESERVE, (owner, key, fingerprint, at)).rowcount == 1:
                return None
            return q.answer_from_row(conn.execute(q.SELECT, (owner, key)).fetchone())

    def complete(self, owner: str, key: str, status: int, location: str | None, body: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(q.COMPLETE, (status, location, body, owner, key))

    def release(self, owner: str, key: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(q.RELEASE, (owner, key))
