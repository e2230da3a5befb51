"""The PostgreSQL dialect of the shared repositories: ``%s`` placeholders, BOOLEAN flags, keys in
COLLATE "C" (so lists sort by code point, as on SQLite), pooled connections."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, ClassVar

import psycopg

from notewell.store.postgres.database import PostgresDatabase, lock_key
from notewell.store.shared.dialect import Cursor, Dialect, Executor

_MIGRATION_LOCK = "notewell:migrate"


def pg_text(value: str) -> str:
    """``value`` fit for a PostgreSQL text column, which cannot hold NUL (shown as U+FFFD instead)."""
    return value.replace("\x00", "\ufffd")


@lru_cache(maxsize=512)
def _bound(sql: str) -> str:
    """The statement with psycopg's placeholders (a literal % doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class PgExecutor:
    """A psycopg connection taking ``?`` placeholders; a statement without parameters goes as written."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Cursor:
        if not params:
            return self.conn.execute(sql)
        return self.conn.execute(_bound(sql), params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(_bound(sql), rows)


class PostgresDialect(Dialect):
    integrity_error = psycopg.errors.IntegrityError
    words: ClassVar[Mapping[str, str]] = {
        "key": 'TEXT COLLATE "C"', "flag": "BOOLEAN", "true": "TRUE", "false": "FALSE",
        "serial": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"}

    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db

    @contextmanager
    def migrating(self) -> Iterator[Executor]:
        """A transaction-scoped advisory lock serialises servers that start at once: the second waits, then
        finds the steps done. DDL is transactional on PostgreSQL, so a failed step leaves nothing."""
        with self.db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(_MIGRATION_LOCK),))
            yield PgExecutor(conn)

    @contextmanager
    def reading(self) -> Iterator[Executor]:
        with self.db.connection() as conn:
            yield PgExecutor(conn)

    @contextmanager
    def transaction(self) -> Iterator[Executor]:
        with self.db.transaction() as conn:
            yield PgExecutor(conn)

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(?)", [list(values)]  # one parameter, whatever the number of values

    def text(self, value: str) -> str:
        return pg_text(value)
