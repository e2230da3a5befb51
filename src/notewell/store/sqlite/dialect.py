"""The SQLite dialect of the shared repositories: ``?`` as written, INTEGER flags, the thread's connection."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ClassVar

from notewell.store.shared.dialect import Dialect, Executor
from notewell.store.sqlite.database import SqliteDatabase


class SqliteDialect(Dialect):
    integrity_error = sqlite3.IntegrityError
    words: ClassVar[Mapping[str, str]] = {
        "int64": "INTEGER", "blob": "BLOB", "key": "TEXT", "flag": "INTEGER", "true": "1", "false": "0",
        "real": "REAL", "serial": "INTEGER PRIMARY KEY AUTOINCREMENT", "rowid": "INTEGER PRIMARY KEY",
        "without_rowid": " WITHOUT ROWID", "by_code": ""}
    position = "instr"
    lock = ""  # BEGIN IMMEDIATE holds the whole database
    share_lock = ""

    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def migrating(self) -> AbstractContextManager[Executor]:
        return self.transaction()  # BEGIN IMMEDIATE: a second process waits for the first's commit

    @contextmanager
    def reading(self) -> Iterator[Executor]:
        yield self.db.conn

    def unindexed(self, column: str) -> str:
        return f"+{column}"  # SQLite's way to keep a term from choosing the index

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[Any]:
        """Rows as SQLite steps to them, on the thread's own connection."""
        yield from self.db.stream(sql, params)

    @contextmanager
    def transaction(self) -> Iterator[Executor]:
        with self.db.transaction() as conn:
            yield conn

    def instance(self) -> str | None:
        """The file's device and inode: a copy (cp, a backup file used as a store) is another file, while a
        symlink or another spelling of the path reaches the same one."""
        try:
            found = os.stat(self.db.path)
        except OSError:
            return None
        return f"sqlite:{found.st_dev}:{found.st_ino}"
