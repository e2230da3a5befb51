"""The audit log on PostgreSQL: append-only rows of who did what to which target, when."""

from __future__ import annotations

import json
from typing import Any

from notewell.records.identity import AuditEntry
from notewell.store.audit_rows import AUDIT_COLUMNS, detail_json, entry_from_row
from notewell.store.postgres.database import PostgresDatabase
from notewell.store.postgres.documents import pg_text

MIGRATIONS = [
    """
    CREATE TABLE audit_log (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at TEXT COLLATE "C" NOT NULL,
        user_id TEXT NOT NULL,
        token_id TEXT,
        action TEXT NOT NULL,
        target TEXT NOT NULL,
        detail TEXT NOT NULL
    );
    CREATE INDEX audit_log_at ON audit_log (at)
    """,
]

class PostgresAudit:
    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db
        db.migrate("audit", MIGRATIONS)

    def append(self, at: str, user_id: str, token_id: str | None, action: str, target: str,
               detail: dict[str, object] | None = None) -> AuditEntry:
        # JSON escapes NUL inside strings; a NUL in the target is shown as U+FFFD (text cannot hold NUL)
        text = detail_json(detail)
        with self.db.transaction() as conn:
            row = conn.execute(
                "INSERT INTO audit_log (at, user_id, token_id, action, target, detail)"
                " VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                (at, user_id, token_id, action, pg_text(target), text)).fetchone()
        assert row is not None
        return AuditEntry(int(row[0]), at, user_id, token_id, action, pg_text(target), json.loads(text))

    def list_since(self, at: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        """Entries at or after ``at`` (ISO 8601 UTC; None: all), oldest first, at most ``limit``."""
        sql = f"SELECT {AUDIT_COLUMNS} FROM audit_log"
        params: list[Any] = []
        if at is not None:
            sql += " WHERE at >= %s"
            params.append(at)
        sql += " ORDER BY id"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        with self.db.connection() as conn:
            return [entry_from_row(r) for r in conn.execute(sql, params).fetchall()]
