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

The schema and the empty table are created and committed beforehand, on a connection of its own (not
the pool's, which other writes waiting for the writer's lock may hold): a table created inside a
transaction that a crash of the database ends leaves its data files behind for good, while a committed
one is dropped by the next writer with its files. Readers meanwhile read the old (empty) table without
waiting. The swap takes both tables' exclusive locks, asked for ``LOCK_TRY`` at a time so that a long
reader (a backup's dump) delays it without making every other reader queue behind it, and holds them for
the moments before the commit. A swap that cannot be made within ``SWAP_WAIT_S`` (a session idle in a
transaction that once read the table), or that PostgreSQL refuses (an object depending on the table),
copies the rows into the old table instead: the build ends as one kept up row by row would.

A table an operator changed (owner or grants, storage or replication settings, statistics, triggers,
policies, publications, objects depending on it, constraints other than the key) keeps its indexes up row
by row from the start: the swap would lose what a new table cannot copy. So does a role that may not
create a schema.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, suppress

import psycopg
from psycopg import sql

from notewell.log_lines import line

TABLE = "document_regions"
INDEX_MEMORY = "256MB"  # at least this maintenance_work_mem for building the indexes once (this transaction only)
LOCK_TRY = "200ms"  # each try for the tables' exclusive locks; between tries readers go on
LOCK_PAUSE_S = (0.05, 2.0)  # the pause after a try that timed out, doubling from the first to the last
SWAP_WAIT_S = 300.0  # then the rows are copied into the old table instead
LEFTOVER_LOCK = "1s"  # dropping a dead writer's schema waits at most this (else the next writer does)
_SCHEMA_PREFIX = "notewell_region_load_"
_log = logging.getLogger("notewell.index")

Connect = Callable[[], AbstractContextManager[psycopg.Connection]]

# Why the table cannot be swapped for a plain copy: each condition true makes it so.
_CHANGED = [
    ("another owner", "c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = current_user)"),
    ("grants", "c.relacl IS NOT NULL OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid"
               " AND a.attacl IS NOT NULL)"),
    ("storage settings", "c.reloptions IS NOT NULL OR c.reltablespace <> 0 OR c.relpersistence <> 'p'"
                         " OR c.relreplident <> 'd'"),
    ("row security", "c.relrowsecurity OR EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid)"),
    ("statistics", "EXISTS (SELECT 1 FROM pg_statistic_ext s WHERE s.stxrelid = c.oid)"
                   " OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0"
                   " AND NOT a.attisdropped AND (a.attstattarget >= 0 OR array_to_string(a.attoptions, ',')"
                   " LIKE '%n_distinct%'))"),
    ("triggers", "EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid)"),
    ("constraints", "EXISTS (SELECT 1 FROM pg_constraint k WHERE (k.conrelid = c.oid AND k.contype <> 'p')"
                    " OR k.confrelid = c.oid)"),
    ("dependent objects", "EXISTS (SELECT 1 FROM pg_depend d WHERE d.deptype = 'n' AND ((d.refclassid ="
                          " 'pg_class'::regclass AND d.refobjid = c.oid) OR (d.refclassid = 'pg_type'::regclass"
                          " AND d.refobjid = c.reltype)) AND NOT (d.classid = 'pg_rewrite'::regclass AND d.objid"
                          " IN (SELECT w.oid FROM pg_rewrite w WHERE w.ev_class = c.oid)))"
                          " OR EXISTS (SELECT 1 FROM pg_depend d JOIN pg_class s ON s.oid = d.objid"
                          " WHERE d.refobjid = c.oid AND d.classid = 'pg_class'::regclass AND s.relkind = 'S')"),
    ("publications", "EXISTS (SELECT 1 FROM pg_publication_tables p WHERE p.schemaname = n.nspname"
                     " AND p.tablename = c.relname) OR EXISTS (SELECT 1 FROM pg_publication p WHERE p.puballtables)"),
    ("index settings", "EXISTS (SELECT 1 FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid"
                       " WHERE i.indrelid = c.oid AND (i.indisclustered OR x.reltablespace <> 0"
                       " OR x.reloptions IS NOT NULL OR obj_description(x.oid, 'pg_class') IS NOT NULL))"),
    ("a comment", "obj_description(c.oid, 'pg_class') IS NOT NULL OR EXISTS (SELECT 1 FROM pg_description e"
                  " WHERE e.objoid = c.oid AND e.classoid = 'pg_class'::regclass AND e.objsubid > 0)"),
]
_HOME = (f"SELECT c.oid, n.nspname, current_setting('search_path'), NOT EXISTS (SELECT 1 FROM {TABLE}),"
         f" ARRAY(SELECT nspname FROM pg_namespace WHERE nspname ~ '^{_SCHEMA_PREFIX}[0-9]+$'),"
         f" {', '.join(f'({condition})' for _, condition in _CHANGED)}"
         f" FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = '{TABLE}'::regclass")
# the table's other indexes as created, and the text naming the table in each (to name the new one instead)
_INDEXES = ("SELECT pg_get_indexdef(i.indexrelid), ' ON ' || quote_ident(n.nspname) || '.' || quote_ident(c.relname)"
            " || ' USING ' FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n"
            " ON n.oid = c.relnamespace WHERE i.indrelid = %s AND NOT i.indisprimary ORDER BY i.indexrelid")


class RegionLoad:
    """The load of one writer's transaction (``begin`` once it has much to write; ``finish`` before its
    commit; ``abandon`` after a rollback)."""

    def __init__(self, conn: psycopg.Connection, connect: Connect, writer_lock: int, home_oid: int, home: str,
                 path: str) -> None:
        self.conn = conn
        self.connect = connect  # an autocommit connection of its own
        self.writer_lock = writer_lock  # the advisory lock every writer holds
        self.schema = f"{_SCHEMA_PREFIX}{home_oid}"
        self.home = home  # the schema of the store's table
        self.path = path  # the transaction's search path before the load
        self.home_oid = home_oid
        self.begun = False
        self.refused = False  # the load could not begin: the build goes on in the store's table
        self._indexes: list[str] = []  # the home table's other indexes, each as created on the new table

    @classmethod
    def for_writer(cls, conn: psycopg.Connection, connect: Connect, writer_lock: int) -> RegionLoad | None:
        """A load for a writer (holding ``writer_lock``) that found the regions empty and the table as the
        migrations left it, else None. Load schemas that dead writers left (a kill -9, the database's crash,
        a backup taken during a load) are dropped first, if nothing holds them (no other writer can be using
        one: this one holds the writer's lock)."""
        row = conn.execute(_HOME).fetchone()
        assert row is not None
        home_oid, home, path, empty, leftovers, *changed = row
        if leftovers:
            # committed at once, on a connection of its own: dropped by this transaction instead, a schema of
            # the same name could not be made again until it ends (begin would wait on it for good)
            with connect() as other:
                other.execute("SELECT set_config('lock_timeout', %s, false)", (LEFTOVER_LOCK,))  # else the next tries
                for name in leftovers:
                    with suppress(psycopg.errors.LockNotAvailable):
                        other.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))
        return cls(conn, connect, writer_lock, home_oid, home, path) if empty and not any(changed) else None

    def begin(self) -> None:
        """The new table, committed empty in its own schema, found first from now on; rows already written
        move into it. Refused (no CREATE on the database, no connection), the transaction goes on as before."""
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
        except psycopg.Error as exc:  # what it made before the error, the next writer drops
            _log.info(line("index.load", outcome="refused", error=type(exc).__name__))
            self.refused = True
            return
        self._indexes = [definition.replace(on_home, on_load) for definition, on_home in indexes]
        self.begun = True
        self.conn.execute(sql.SQL("WITH moved AS (DELETE FROM {}.{} RETURNING *) INSERT INTO {}.{} SELECT * FROM moved")
                          .format(sql.Identifier(self.home), table, load, table))
        self.conn.execute("SELECT set_config('search_path', %s, true)", (f"{load.as_string(self.conn)}, {self.path}",))

    def finish(self, analyze: bool) -> bool:
        """The indexes built on the new table (and its statistics gathered), then the new table in the old
        one's place; if it cannot be, its rows copied into the old one (False: the caller then finishes as
        after a build kept up row by row)."""
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
        swapped = self._swap()
        self.conn.execute("SELECT set_config('search_path', %s, true)", (self.path,))
        if not swapped:
            self.conn.execute(sql.SQL("INSERT INTO {}.{} SELECT * FROM {}.{}").format(home, table, load, table))
            self.conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(load))
        self.begun = False
        return swapped

    def _swap(self) -> bool:
        """The old table dropped and the new one in its place, under both tables' exclusive locks, asked for
        ``LOCK_TRY`` at a time for up to ``SWAP_WAIT_S``; False (and nothing changed) when it cannot be."""
        load, home, table = sql.Identifier(self.schema), sql.Identifier(self.home), sql.Identifier(TABLE)
        timeout = _setting(self.conn, "lock_timeout")
        pause, deadline = LOCK_PAUSE_S[0], time.monotonic() + SWAP_WAIT_S
        while True:
            try:
                with self.conn.transaction():  # a savepoint: a try that fails is undone alone
                    self.conn.execute("SELECT set_config('lock_timeout', %s, true)", (LOCK_TRY,))
                    self.conn.execute(sql.SQL("LOCK TABLE {}.{}, {}.{} IN ACCESS EXCLUSIVE MODE").format(
                        home, table, load, table))
                    self.conn.execute("SELECT set_config('lock_timeout', %s, true)", (timeout,))
                    self.conn.execute(sql.SQL("DROP TABLE {}.{}").format(home, table))
                    self.conn.execute(sql.SQL("ALTER TABLE {}.{} SET SCHEMA {}").format(load, table, home))
                    self.conn.execute(sql.SQL("DROP SCHEMA {}").format(load))
                return True
            except psycopg.errors.LockNotAvailable:
                if time.monotonic() > deadline:
                    _log.warning(line("index.load", outcome="copied", reason="the table stayed in use"))
                    return False
                time.sleep(pause)
                pause = min(pause * 2, LOCK_PAUSE_S[1])
            except psycopg.errors.DependentObjectsStillExist as exc:
                _log.warning(line("index.load", outcome="copied", reason=str(exc).splitlines()[0]))
                return False

    def abandon(self) -> None:
        """After the writer's rollback: the committed empty schema and table dropped, unless another writer
        holds the writer's lock by now (it or the next one drops them)."""
        with self.connect() as other, other.transaction():
            held = other.execute("SELECT pg_try_advisory_xact_lock(%s)", (self.writer_lock,)).fetchone()
            if held is not None and held[0]:
                other.execute("SELECT set_config('lock_timeout', %s, true)", (LEFTOVER_LOCK,))
                other.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self.schema)))


def _setting(conn: psycopg.Connection, name: str) -> str:
    row = conn.execute("SELECT current_setting(%s)", (name,)).fetchone()
    assert row is not None
    return str(row[0])
