"""The PostgreSQL dialect of the shared repositories: ``%s`` placeholders, BOOLEAN flags, keys in
COLLATE "C" (so lists sort by code point, as on SQLite), pooled connections."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import psycopg

from notewell.store.postgres.database import PostgresDatabase
from notewell.store.postgres.documents import pg_text
from notewell.store.shared.dialect import Cursor, Executor

_WORDS = {"key": 'TEXT COLLATE "C"', "flag": "BOOLEAN", "true": "TRUE", "false": "FALSE",
          "serial": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"}


@lru_cache(maxsize=512)
def _bound(sql: str) -> str:
    """The statement with psycopg's placeholders (a literal % doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class _Connection:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Cursor:
        return self.conn.execute(_bound(sql), params)


class PostgresDialect:
    integrity_error = psycopg.errors.IntegrityError

    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db

    def render(self, template: str) -> str:
        return template.format_map(_WORDS)

    def migrate(self, component: str, migrations: Sequence[str]) -> None:
        self.db.migrate(component, migrations)

    @contextmanager
    def reading(self) -> Iterator[Executor]:
        with self.db.connection() as conn:
            yield _Connection(conn)

    @contextmanager
    def transaction(self) -> Iterator[Executor]:
        with self.db.transaction() as conn:
            yield _Connection(conn)

    def text(self, value: str) -> str:
        return pg_text(value)
