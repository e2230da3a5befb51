"""The audit log, in SQL both backends run: append-only rows of who did what to which target, when.

``detail`` is stored as JSON text (keys sorted, so equal details store equally).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from notewell.records.identity import AuditEntry
from notewell.store.path_range import path_bounds
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
    # The readers' filters, each an index (issue 27): /admin/audit's user (and a person's export) walks the user's
    # entries newest first; its action, a prefix, is a range of the actions compared by code point.
    (
        "CREATE INDEX audit_log_user ON audit_log (user_id, id)",
        "CREATE INDEX audit_log_action ON audit_log (action{by_code}, id)",
    ),
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

    def list_since(self, at: str | None = None, limit: int | None = None, *,
                   after: int | None = None) -> list[AuditEntry]:
        """Entries at or after ``at`` (ISO 8601 UTC; None: all), oldest first (by id), at most ``limit``; with
        ``after``, those whose id is above it: a page read along the primary key from there, ``at`` checked on
        each row it passes (not a range of the ``at`` index, which a sort of every entry since would follow)."""
        where: list[str] = []
        params: list[Any] = []
        if after is not None:
            where.append("id > ?")
            params.append(after)
        if at is not None:
            where.append(f"{self.sql.unindexed('at') if after is not None else 'at'} >= ?")
            params.append(at)
        sql = f"SELECT {AUDIT_COLUMNS} FROM audit_log{' WHERE ' + ' AND '.join(where) if where else ''} ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self.sql.reading() as conn:
            return [_entry(r) for r in conn.execute(sql, params).fetchall()]

    def first_since(self, at: str | None) -> int | None:
        """The least id of the entries at or after ``at`` (None: of all), read off the ``at`` index; None if none.
        ``id + 0``, since a plain min(id) is read along the primary key from the oldest entry, every entry before
        the first at or after ``at`` passed over (the times need not grow with the ids: a merged entry's is older)."""
        sql, params = ("SELECT min(id) FROM audit_log", []) if at is None else (
            "SELECT min(id + 0) FROM audit_log WHERE at >= ?", [at])
        with self.sql.reading() as conn:
            found = conn.execute(sql, params).fetchone()[0]
        return None if found is None else int(found)

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
        if action:  # a range of the action index, not LIKE: SQLite's ignores ASCII case, and _ and % mean themselves
            by_code = self.sql.words["by_code"]
            where.append(f"action{by_code} >= ? AND action{by_code} < ?")
            params += path_bounds(action, partial=True)[1:]
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
