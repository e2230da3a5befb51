"""The audit log on SQLite: append-only rows of who did what to which target, when."""

from __future__ import annotations

import json
from typing import Any

from notewell.records.identity import AuditEntry
from notewell.store.audit_rows import AUDIT_COLUMNS, detail_json, entry_from_row
from notewell.store.sqlite.database import SqliteDatabase

MIGRATIONS = [
    """
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        user_id TEXT NOT NULL,
        token_id TEXT,
        action TEXT NOT NULL,
        target TEXT NOT NULL,
        detail TEXT NOT NULL
    );
    CREATE INDEX audit_log_at ON audit_log (at)
    """,
]

class SqliteAudit:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        db.migrate("audit", MIGRATIONS)

    def append(self, at: str, user_id: str, token_id: str | None, action: str, target: str,
               detail: dict[str, object] | None = None) -> AuditEntry:
        text = detail_json(detail)
        with self.db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO audit_log (at, user_id, token_id, action, target, detail) VALUES (?, ?, ?, ?, ?, ?)",
                (at, user_id, token_id, action, target, text))
            entry_id = int(cur.lastrowid or 0)
        return AuditEntry(entry_id, at, user_id, token_id, action, target, json.loads(text))

    def list_since(self, at: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        """Entries at or after ``at`` (ISO 8601 UTC; None: all), oldest first, at most ``limit``."""
        sql = f"SELECT {AUDIT_COLUMNS} FROM audit_log"
        params: list[Any] = []
        if at is not None:
            sql += " WHERE at >= ?"
            params.append(at)
        sql += " ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [entry_from_row(r) for r in self.db.conn.execute(sql, params)]
