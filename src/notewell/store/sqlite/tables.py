"""The table walk on SQLite: the catalog from sqlite_master and PRAGMAs, a read transaction for the snapshot
(WAL keeps it whole while others write), and the memories' FTS5 indexes rebuilt after a load."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from notewell.errors import StoreCannotWrite
from notewell.store.shared.dialect import Executor
from notewell.store.shared.tables import AfterLoad, Column, SqlTables
from notewell.store.sqlite.database import (
    FULL_BELOW_BYTES,
    WORD_TEXT_SQL,
    SqliteDatabase,
    disk_full,
    free_bytes,
    read_only,
)
from notewell.store.sqlite.dialect import SqliteDialect
from notewell.store.sqlite.memories import REINDEX_MEMORIES

_KINDS = {"TEXT": "text", "INTEGER": "integer", "REAL": "real", "BLOB": "blob", "": "text"}  # FTS5's columns: ""
_FTS5_SHADOWS = ("config", "content", "data", "docsize", "idx")


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class SqliteTables(SqlTables):
    def __init__(self, db: SqliteDatabase, after_load: AfterLoad | None = None) -> None:
        self.db = db
        super().__init__(SqliteDialect(db), after_load)

    def cannot_write(self) -> StoreCannotWrite | None:
        """A filesystem (nearly) full or read-only, a file the process may not write, or a write refused lately
        (a full disk is only seen as a write needs space, and SQLite's write lock is not taken here)."""
        path = self.db.path
        free = free_bytes(path.parent)
        if free is not None and free < FULL_BELOW_BYTES:
            return disk_full(path)
        wal = path.with_name(path.name + "-wal")
        if not all(os.access(p, os.W_OK) for p in (path, path.parent, wal) if p.exists()):
            return read_only(path)
        return self.db.wal_deleted() or self.db.refused()

    def _table_names(self, conn: Executor) -> list[str]:
        return [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").fetchall()]

    def _shadows(self, conn: Executor) -> set[str]:
        virtual = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                              " AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'").fetchall()]
        return {f"{name}_{part}" for name in virtual for part in _FTS5_SHADOWS}

    def _columns(self, conn: Executor, table: str) -> list[Column]:
        return [Column(r[1], _KINDS.get(str(r[2]).upper(), str(r[2])))
                for r in conn.execute(f"PRAGMA table_info({_quoted(table)})").fetchall()]

    def _key(self, conn: Executor, table: str) -> list[str]:
        rows = conn.execute(f"PRAGMA table_info({_quoted(table)})").fetchall()
        return [r[1] for r in sorted((r for r in rows if r[5]), key=lambda r: r[5])]

    def _references(self, conn: Executor) -> list[tuple[str, str]]:
        return [(table, r[2]) for table in self._table_names(conn)
                for r in conn.execute(f"PRAGMA foreign_key_list({_quoted(table)})").fetchall()]

    @contextmanager
    def _snapshot(self) -> Iterator[Executor]:
        conn = self.db.conn
        conn.execute("BEGIN")  # deferred: the first read fixes the snapshot, and no write lock is taken
        try:
            yield conn
        finally:
            conn.execute("ROLLBACK")

    def _walk(self, conn: Executor, sql: str, params: Sequence[Any] = ()) -> Iterator[Sequence[Any]]:
        yield from self.db.stream(sql, params)

    def _ordered(self, column: Column) -> str:
        return column.name  # BINARY: code point order, as UTF-8 bytes compare

    def _after_load(self, conn: Executor, tables: Sequence[str]) -> None:
        """The memories' word indexes hold live rows only, each field read through word_text as
        store/sqlite/memories.py indexes it (never 'rebuild', which reads the fields as they are). The session
        pieces were inserted into their FTS5 table directly, as another backend or an older version kept them:
        read through word_text too. AUTOINCREMENT keys follow explicit ones by themselves."""
        if "memories" in tables:
            for statement in REINDEX_MEMORIES:
                conn.execute(statement)
        if "brain_session_words" in tables:
            conn.execute(f"UPDATE brain_session_words SET body = {WORD_TEXT_SQL}(body)"
                         f" WHERE body <> {WORD_TEXT_SQL}(body)")
