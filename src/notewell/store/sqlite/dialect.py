"""The SQLite dialect of the shared repositories: ``?`` as written, INTEGER flags, the thread's connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from notewell.store.shared.dialect import Executor
from notewell.store.sqlite.database import SqliteDatabase

_WORDS = {"key": "TEXT", "flag": "INTEGER", "true": "1", "false": "0",
          "serial": "INTEGER PRIMARY KEY AUTOINCREMENT"}


class SqliteDialect:
    integrity_error = sqlite3.IntegrityError

    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def render(self, template: str) -> str:
        return template.format_map(_WORDS)

    def migrate(self, component: str, migrations: Sequence[str]) -> None:
        self.db.migrate(component, migrations)

    @contextmanager
    def reading(self) -> Iterator[Executor]:
        yield self.db.conn

    @contextmanager
    def transaction(self) -> Iterator[Executor]:
        with self.db.transaction() as conn:
            yield conn

    def text(self, value: str) -> str:
        return value
