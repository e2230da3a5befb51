"""A first build's regions loaded into a table of their own, its indexes built once at the end, then swapped in.

Kept up row by row through a build, the GIN indexes over each region's trigrams and grams cost the
server most of its time (170 MB of text: 58 s, 43 s of it in the one backend) and come out two to six
times larger than when built once from every row (trigrams 123 MB against 55, grams 78 against 12).
When a sync finds the store's regions empty and writes more than one COPY's worth, its writer goes on in
a table of the same shape with only its primary key, in a schema of its own that comes first in the
transaction's search path, so every statement of the transaction (the writer's, and the reads the
indexer makes within it) finds the new table by the same name. At the end the indexes are built on it
and it is analyzed; then the old, empty table is dropped and the new one takes its place, in the same
transaction, so a failed build leaves the store as it was.

The schema and the empty table are created and committed beforehand on a connection of their own: a
table created inside a transaction that a crash ends leaves its data files behind for good, while a
committed one is dropped by the next writer (``for_writer``) with its files. Readers meanwhile read the
old (empty) table without waiting. Only the swap takes the old table's exclusive lock, asked for in
turns that give way to readers (``_take_table``), and held for the moments before the commit.

A table an operator changed (owner or grants, storage settings, statistics objects, triggers, policies,
views or foreign keys on it, constraints other than the key) keeps its indexes up row by row instead: the
swap would lose what the new table cannot copy. So does a role that may not create a schema.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager

import psycopg
from psycopg import sql

TABLE = "document_regions"
INDEX_MEMORY = "256MB"  # at least this maintenance_work_mem for building the indexes once (this transaction only)
LOCK_TRY = "200ms"  # each try for the old table's exclusive lock; between tries readers go on
LOCK_PAUSE_S = (0.05, 2.0)  # the pause after a try that timed out, doubling from the first to the last

Connect = Callable[[], AbstractContextManager[psycopg.Connection]]

# Why the table cannot be swapped for a plain copy: each condition true makes it so.
_CHANGED = [
    ("another owner", "c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = current_user)"),
    ("grants", "c.relacl IS NOT NULL"),
    ("storage settings", "c.reloptions IS NOT NULL OR c.reltablespace <> 0 OR c.relpersistence <> 'p'"),
    ("row security", "c.relrowsecurity OR EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid)"),
    ("statistics objects", "EXISTS (SELECT 1 FROM pg_statistic_ext s WHERE s.stxrelid = c.oid)"),
    ("column statistics targets", "EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0"
                                  " AND a.attstattarget >= 0)"),
    ("triggers", "EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid)"),
    ("constraints", "EXISTS (SELECT 1 FROM pg_constraint k WHERE (k.conrelid = c.oid AND k.contype <> 'p'"
                    " AND k.contype <> 'n') OR k.confrelid = c.oid)"),
    ("views", "EXISTS (SELECT 1 FROM pg_depend d JOIN pg_rewrite w ON w.oid = d.objid"
              " WHERE d.refobjid = c.oid AND d.classid = 'pg_rewrite'::regclass AND w.ev_class <> c.oid)"),
    ("publications", "EXISTS (SELECT 1 FROM pg_publication_rel p WHERE p.prrelid = c.oid)"),
    ("a comment", "obj_description(c.oid, 'pg_class') IS NOT NULL"),
]
_HOME = (f"SELECT c.oid, n.nspname, current_setting('search_path'), NOT EXISTS (SELECT 1 FROM {TABLE}),"
         f" {', '.join(f'({condition})' for _, condition in _CHANGED)}"
         f" FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = '{TABLE}'::regclass")
# the table's other indexes as created, and the text naming the table in each (to name the new one instead)
_INDEXES = ("SELECT pg_get_indexdef(i.indexrelid), ' ON ' || quote_ident(n.nspname) || '.' || quote_ident(c.relname)"
            " || ' USING ' FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n"
            " ON n.oid = c.relnamespace WHERE i.indrelid = %s AND NOT i.indisprimary ORDER BY i.indexrelid")


def _load_schema(home_oid: int) -> str:
    """The load's schema: named for the store's table (short whatever the store's schema is called)."""
    return f"notewell_region_load_{home_oid}"


class RegionLoad:
    """The load of one writer's transaction (``begin`` once it has much to write; ``finish`` before its
    commit; ``abandon`` after a rollback)."""

    def __init__(self, conn: psycopg.Connection, connect: Connect, home_oid: int, home: str, path: str) -> None:
        self.conn = conn
        self.connect = connect  # an autocommit connection of the pool, not the transaction's
        self.schema = _load_schema(home_oid)
        self.home = home  # the schema of the store's table
        self.path = path  # the transaction's search path before the load
        self.home_oid = home_oid
        self.begun = False
        self.refused = False  # the role may not create the schema: the build goes on in the store's table
        self._indexes: list[str] = []  # the home table's other indexes, each as created on the new table

    @classmethod
    def for_writer(cls, conn: psycopg.Connection, connect: Connect) -> RegionLoad | None:
        """A load for a writer that found the regions empty and the table as the migrations left it, else
        None. A load schema a crashed writer left is dropped first (the writer's lock is held)."""
        row = conn.execute(_HOME).fetchone()
        assert row is not None
        home_oid, home, path, empty, *changed = row
        load = cls(conn, connect, home_oid, home, path)
        if conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (load.schema,)).fetchone():
            load.abandon()
        return load if empty and not any(changed) else None

    def begin(self) -> None:
        """The new table, committed empty in its own schema, found first from now on; rows already written
        move into it. Refused (no CREATE on the database), the transaction goes on as before."""
        load, table = sql.Identifier(self.schema), sql.Identifier(TABLE)
        on_load = f" ON {load.as_string(self.conn)}.{TABLE} USING "
        indexes = self.conn.execute(_INDEXES, (self.home_oid,)).fetchall()
        if any(definition.count(on_home) != 1 for definition, on_home in indexes):
            self.refused = True  # an index this cannot name again on the new table
            return
        try:
            with self.connect() as other:
                other.execute(sql.SQL("CREATE SCHEMA {}").format(load))
                other.execute(sql.SQL("CREATE TABLE {}.{} (LIKE {}.{} INCLUDING ALL EXCLUDING INDEXES)")
                              .format(load, table, sql.Identifier(self.home), table))
                other.execute(sql.SQL("ALTER TABLE {}.{} ADD PRIMARY KEY (id)").format(load, table))
        except psycopg.errors.InsufficientPrivilege:
            self.refused = True
            return
        self._indexes = [definition.replace(on_home, on_load) for definition, on_home in indexes]
        self.begun = True
        self.conn.execute(sql.SQL("INSERT INTO {}.{} SELECT * FROM {}.{}").format(
            load, table, sql.Identifier(self.home), table))
        self.conn.execute("SELECT set_config('search_path', %s, true)", (f"{load.as_string(self.conn)}, {self.path}",))

    def finish(self, analyze: bool) -> None:
        """The indexes built on the new table (and its statistics gathered), then the new table in the old
        one's place."""
        load, home, table = sql.Identifier(self.schema), sql.Identifier(self.home), sql.Identifier(TABLE)
        memory = self.conn.execute(
            "SELECT current_setting('maintenance_work_mem'), set_config('maintenance_work_mem', CASE WHEN"
            " pg_size_bytes(current_setting('maintenance_work_mem')) < pg_size_bytes(%s) THEN %s"
            " ELSE current_setting('maintenance_work_mem') END, true)", (INDEX_MEMORY, INDEX_MEMORY)).fetchone()
        assert memory is not None
        for definition in self._indexes:
            self.conn.execute(definition)
        self.conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (memory[0],))
        if analyze:  # before the swap: readers wait for none of it
            self.conn.execute(sql.SQL("ANALYZE {}.{}").format(load, table))
        self._take_table()
        self.conn.execute(sql.SQL("DROP TABLE {}.{}").format(home, table))
        self.conn.execute(sql.SQL("ALTER TABLE {}.{} SET SCHEMA {}").format(load, table, home))
        self.conn.execute(sql.SQL("DROP SCHEMA {}").format(load))
        self.conn.execute("SELECT set_config('search_path', %s, true)", (self.path,))
        self.begun = False

    def _take_table(self) -> None:
        """The old table's exclusive lock, asked for ``LOCK_TRY`` at a time: a request waiting behind a long
        reader (a backup's dump, a regex's walk) would make every new reader wait behind it."""
        pause = LOCK_PAUSE_S[0]
        timeout = self.conn.execute("SELECT current_setting('lock_timeout')").fetchone()
        assert timeout is not None
        while True:
            try:
                with self.conn.transaction():  # a savepoint: a try that times out is undone alone
                    self.conn.execute("SELECT set_config('lock_timeout', %s, true)", (LOCK_TRY,))
                    self.conn.execute(sql.SQL("LOCK TABLE {}.{} IN ACCESS EXCLUSIVE MODE").format(
                        sql.Identifier(self.home), sql.Identifier(TABLE)))
                    self.conn.execute("SELECT set_config('lock_timeout', %s, true)", timeout)
                return
            except psycopg.errors.LockNotAvailable:
                time.sleep(pause)
                pause = min(pause * 2, LOCK_PAUSE_S[1])

    def abandon(self) -> None:
        """The committed schema and table dropped: after the writer's rollback (their rows went with it), or
        as a dead writer left them."""
        with self.connect() as other:
            other.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self.schema)))
