"""The audit log, in SQL both backends run: append-only rows of who did what to which target, when.

``detail`` is stored as JSON text (keys sorted, so equal details store equally).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from notewell.records.identity import AuditEntry
from notewell.store.shared.dialect import Dialect
from notewell.store.shared.migrations import Migration

TYPED_TARGETS_NAME_NO_ONE = ("UPDATE audit_log SET target = '(no such user)' WHERE action = 'auth.sign_in_failed'"
                             " AND user_id = '-' AND target <> 'link'")
"""Failed sign-ins an earlier version audited with what was typed for no user (an import of its export too)."""

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE audit_log (
            id {serial},
            at {key} NOT NULL,
            user_id TEXT NOT NULL,
            token_id TEXT,
            action TEXT NOT NULL,
            target TEXT NOT NULL,
            detail TEXT NOT NULL
        )
        """,
        "CREATE INDEX audit_log_at ON audit_log (at)",
    ),
    # A failed password sign-in for no user kept what was typed as the email (maybe a password typed into that
    # field): such entries name no one now ("(no such user)", access/sign_in.py), and those written before too.
    (TYPED_TARGETS_NAME_NO_ONE,),
]

AUDIT_COLUMNS = "id, at, user_id, token_id, action, target, detail"


class SqlAudit:
    def __init__(self, dialect: Dialect) -> None:
        self.sql = dialect
        dialect.migrate("audit", dialect.rendered(MIGRATIONS))

    def append(self, at: str, user_id: str, token_id: str | None, action: str, target: str,
               detail: dict[str, object] | None = None) -> AuditEntry:
        # JSON escapes NUL inside strings; the target is kept as the backend's text can hold it
        text = json.dumps(detail or {}, ensure_ascii=False, sort_keys=True)
        target = self.sql.text(target)
        with self.sql.transaction() as conn:
            row = conn.execute(
                "INSERT INTO audit_log (at, user_id, token_id, action, target, detail)"
                " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (at, user_id, token_id, action, target, text)).fetchone()
        return AuditEntry(int(row[0]), at, user_id, token_id, action, target, json.loads(text))

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
        with self.sql.reading() as conn:
            return [_entry(r) for r in conn.execute(sql, params).fetchall()]

    def newest(self, since: str | None, action: str, user_id: str | None, limit: int,
               offset: int) -> list[AuditEntry]:
        """A page of the entries at or after ``since`` whose action starts with ``action`` (case and all; "" for any)
        and, unless None, whose actor is ``user_id``: newest first, ``limit`` of them from the ``offset``-th (a page
        reads its own rows alone)."""
        where: list[str] = []
        params: list[Any] = []
        if since is not None:
            where.append("at >= ?")
            params.append(since)
        if action:  # not LIKE: SQLite's ignores ASCII case, and _ and % would need escaping
            where.append("substr(action, 1, ?) = ?")
            params += [len(action), action]
        if user_id is not None:
            where.append("user_id = ?")
            params.append(user_id)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        with self.sql.reading() as conn:
            return [_entry(r) for r in conn.execute(
                f"SELECT {AUDIT_COLUMNS} FROM audit_log{clause} ORDER BY id DESC LIMIT ? OFFSET ?",
                [*params, limit, offset]).fetchall()]


def _entry(row: Sequence[Any]) -> AuditEntry:
    return AuditEntry(id=row[0], at=row[1], user_id=row[2], token_id=row[3], action=row[4], target=row[5],
                      detail=json.loads(row[6]))
