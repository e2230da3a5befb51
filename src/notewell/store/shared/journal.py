"""The journal of note writes, in SQL both backends run: append-only rows, the bytes before each change.

The bytes a write replaced are kept (``{blob}``: BLOB on SQLite, BYTEA on PostgreSQL) so an undo can put
them back byte for byte; listing never reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from notewell.records.journal import JournalAction, JournalEntry
from notewell.store.shared.dialect import Dialect
from notewell.store.shared.migrations import Migration

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE note_journal (
            id {serial},
            at {key} NOT NULL,
            user_id TEXT NOT NULL,
            token_id TEXT,
            tool TEXT NOT NULL,
            action TEXT NOT NULL,
            project {key} NOT NULL,
            path {key} NOT NULL,
            new_path {key},
            before_version TEXT,
            after_version TEXT,
            undoes {int64},
            before_bytes {blob}
        )
        """,
        "CREATE INDEX note_journal_place ON note_journal (project, path, id)",
        "CREATE INDEX note_journal_undoes ON note_journal (undoes)",
    ),
]

_COLUMNS = "id, at, user_id, token_id, tool, action, project, path, new_path, before_version, after_version, undoes"


class SqlJournal:
    def __init__(self, dialect: Dialect) -> None:
        self.sql = dialect
        dialect.migrate("journal", dialect.rendered(MIGRATIONS))

    def append(self, entry: JournalEntry) -> JournalEntry:
        """Keep ``entry`` (its id and any ``undoes`` are set by the store); the entry as stored."""
        with self.sql.transaction() as conn:
            row = conn.execute(
                "INSERT INTO note_journal (at, user_id, token_id, tool, action, project, path, new_path,"
                " before_version, after_version, undoes, before_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " RETURNING id",
                (entry.at, entry.user_id, entry.token_id, entry.tool, entry.action, entry.project, entry.path,
                 entry.new_path, entry.before_version, entry.after_version, entry.undoes, entry.before)).fetchone()
        return JournalEntry(int(row[0]), *_fields(entry))

    def get(self, entry_id: int) -> JournalEntry | None:
        """The entry with the bytes it replaced."""
        with self.sql.reading() as conn:
            row = conn.execute(f"SELECT {_COLUMNS}, before_bytes FROM note_journal WHERE id = ?",
                               (entry_id,)).fetchone()
        return None if row is None else _entry(row, with_bytes=True)

    def undone(self, entry_id: int) -> JournalEntry | None:
        """The undo of ``entry_id``, when there is one."""
        with self.sql.reading() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM note_journal WHERE undoes = ? ORDER BY id LIMIT 1",
                               (entry_id,)).fetchone()
        return None if row is None else _entry(row)

    def entries(self, projects: Sequence[str], *, paths: Sequence[str] | None = None, since: str | None = None,
                before: int | None = None, limit: int) -> list[JournalEntry]:
        """The newest ``limit`` entries in ``projects`` (at or after ``since``; older than entry ``before``;
        touching one of ``paths`` as a note's place before or after), newest first, without their bytes."""
        if not projects:
            return []
        where, params = self.sql.one_of("project", projects)
        sql = f"SELECT {_COLUMNS} FROM note_journal WHERE {where}"
        if paths is not None:
            at, at_params = self.sql.one_of("path", paths)
            to, to_params = self.sql.one_of("new_path", paths)
            sql += f" AND ({at} OR {to})"
            params += at_params + to_params
        if since is not None:
            sql += " AND at >= ?"
            params.append(since)
        if before is not None:
            sql += " AND id < ?"
            params.append(before)
        sql += " ORDER BY id DESC LIMIT ?"
        params.append(limit)
        with self.sql.reading() as conn:
            return [_entry(r) for r in conn.execute(sql, params).fetchall()]


def _fields(entry: JournalEntry) -> tuple[Any, ...]:
    return (entry.at, entry.user_id, entry.token_id, entry.tool, entry.action, entry.project, entry.path,
            entry.new_path, entry.before_version, entry.after_version, entry.undoes, entry.before)


def _entry(row: Sequence[Any], *, with_bytes: bool = False) -> JournalEntry:
    action: JournalAction = row[5]
    before = bytes(row[12]) if with_bytes and row[12] is not None else None
    return JournalEntry(int(row[0]), row[1], row[2], row[3], row[4], action, row[6], row[7], row[8], row[9],
                        row[10], None if row[11] is None else int(row[11]), before)
