"""A first build's regions loaded into a table of their own, its indexes built once at the end, then swapped in.

Kept up row by row through a build, the GIN indexes over each region's trigrams and grams cost the
server most of its time (170 MB of text: 58 s, 43 s of it in the one backend) and come out two to six
times larger than when built once from every row (trigrams 123 MB against 55, grams 78 against 12).
When a sync finds the store's regions empty and has more to write than one COPY holds, its writer goes
on in a table of the same shape with only its primary key, in a schema of its own that comes first in
the transaction's search path, so every statement of the transaction (the writer's, and the reads the
indexer makes within it) finds the new table by the same name. At the end the indexes are built on it,
the empty table is dropped and the new one takes its place, in the same transaction: PostgreSQL's DDL is
transactional, so a crash or an error leaves the store as it was, and readers meanwhile read the old
(empty) table without waiting. Only the swap takes the old table's exclusive lock, for the moments
before the commit. A role that may not create a schema in the database builds as later syncs do, its
index entries kept up as the rows come (docs/operations.md).
"""

from __future__ import annotations

import re

import psycopg
from psycopg import sql

TABLE = "document_regions"
_INDEX_MEMORY = "256MB"  # for building the GIN indexes once (fewer passes over the rows); this transaction only
_ON_TABLE = re.compile(rf" ON (?:\S+\.)?{TABLE} USING ")


def regions_empty(conn: psycopg.Connection) -> bool:
    return conn.execute(f"SELECT NOT EXISTS (SELECT 1 FROM {TABLE})").fetchone() == (True,)


class RegionLoad:
    """The load of one writer's transaction (``begin`` once it has much to write; ``finish`` before its commit)."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn
        self.schema: str | None = None  # the load's own schema, once begun
        self.refused = False  # the role may not create the schema: the build goes on in the store's table
        self._home = ""  # the schema of the store's table
        self._path = ""  # the transaction's search path before the load

    @property
    def begun(self) -> bool:
        return self.schema is not None

    def begin(self) -> None:
        """The table in its own schema, found first from now on; rows already written move into it. Refused
        (no CREATE on the database), the transaction goes on as before (the attempt was a savepoint's)."""
        try:
            with self.conn.transaction():
                self._begin()
        except psycopg.errors.InsufficientPrivilege:
            self.schema, self.refused = None, True

    def _begin(self) -> None:
        row = self.conn.execute("SELECT n.nspname, current_setting('search_path') FROM pg_class c JOIN pg_namespace n"
                                f" ON n.oid = c.relnamespace WHERE c.oid = '{TABLE}'::regclass").fetchone()
        assert row is not None
        self._home, self._path = row
        self.schema = f"{self._home}_notewell_load"
        load, home = sql.Identifier(self.schema), sql.Identifier(self._home)
        table = sql.Identifier(TABLE)
        self.conn.execute(sql.SQL("CREATE SCHEMA {}").format(load))
        self.conn.execute(sql.SQL("CREATE TABLE {}.{} (LIKE {}.{} INCLUDING ALL EXCLUDING INDEXES)")
                          .format(load, table, home, table))
        self.conn.execute(sql.SQL("ALTER TABLE {}.{} ADD PRIMARY KEY (id)").format(load, table))
        self.conn.execute(sql.SQL("INSERT INTO {}.{} SELECT * FROM {}.{}").format(load, table, home, table))
        self.conn.execute(sql.SQL("SELECT set_config('search_path', {}, true)")
                          .format(sql.Literal(f"{load.as_string(self.conn)}, {self._path}")))

    def finish(self) -> None:
        """The old table's other indexes built on the new one, then the new one in its place."""
        assert self.schema is not None
        load, home, table = sql.Identifier(self.schema), sql.Identifier(self._home), sql.Identifier(TABLE)
        on_load = f" ON {load.as_string(self.conn)}.{TABLE} USING "
        definitions = [definition for (definition,) in self.conn.execute(
            "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = %s AND n.nspname = %s"
            " AND NOT i.indisprimary ORDER BY i.indexrelid", (TABLE, self._home))]
        memory = self.conn.execute("SELECT current_setting('maintenance_work_mem')").fetchone()
        assert memory is not None
        self.conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (_INDEX_MEMORY,))
        for definition in definitions:
            self.conn.execute(_ON_TABLE.sub(lambda _: on_load, definition, count=1))
        self.conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", memory)
        self.conn.execute(sql.SQL("DROP TABLE {}.{}").format(home, table))
        self.conn.execute(sql.SQL("ALTER TABLE {}.{} SET SCHEMA {}").format(load, table, home))
        self.conn.execute(sql.SQL("DROP SCHEMA {}").format(load))
        self.conn.execute("SELECT set_config('search_path', %s, true)", (self._path,))
        self.schema = None
