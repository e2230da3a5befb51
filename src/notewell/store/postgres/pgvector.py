"""pgvector on PostgreSQL: the memories' vectors also as ``halfvec(384)`` under an HNSW index, searched in SQL.

Used when the database has the ``vector`` extension, version 0.8 or later (iterative index scans); Notewell
never creates it (pgvector is not a trusted extension: a superuser runs ``CREATE EXTENSION vector`` once,
docs/operations.md). Without it the app's exact search stays (store/vector_cache.py).

The float16 bytes of ``vectors.vector`` stay what the store keeps (both backends, the embedding queue, the
sessions' exact search); the column ``near`` holds the same values as a halfvec for the index, written in the
same transaction as the bytes. A store made before (or while the extension was absent, or by an older server
in a rolling upgrade) has memory vectors without ``near``: they are filled from the bytes, no model involved,
when the store opens and whenever a search finds one missing, and until then that search is exact.

The search asks for the scope's nearest in one statement: the scope's conditions (projects, the viewer's
private memories, path, type, live, not expired) are in its WHERE, so permissions apply before the ranking
(a filter applied after a top-k index search silently drops allowed results: mcp-memory-service #214). An
HNSW scan under a WHERE stops at ``hnsw.ef_search`` candidates, of which the WHERE may keep few; pgvector
0.8's iterative scan (``hnsw.iterative_scan = relaxed_order``) goes on scanning until enough rows pass, up to
``hnsw.max_scan_tuples`` (20,000 by default). Relaxed order is enough: the candidates (10 more than the limit,
at least 40, found with ``ef_search`` 160) are scored again in the app with the exact arithmetic of the other
path (vector_search.nearest_rows: the same similarities, ties to the lower id), so both backends give the
same top results whenever the index finds them. HNSW is approximate: at 100k memories it found 94% of the
exact 10 nearest (bench/meaning_latency.py, docs/performance.md). When fewer candidates than asked come back
(a scope smaller than that, or so sparse that the scan gave up), the scope is read and scored exactly.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Sequence

import numpy as np
import psycopg
from psycopg.adapt import Dumper
from psycopg.pq import Format

from notewell.meaning.model import DIMENSIONS
from notewell.records.memories import MemoryQuery
from notewell.store.postgres.database import PostgresDatabase, lock_key
from notewell.store.postgres.dialect import MIGRATION_LOCK  # one process at a time adds the column, the index
from notewell.store.shared.dialect import Dialect, Executor
from notewell.store.shared.memories import LIVE, search_conditions
from notewell.store.vector_search import HALF, nearest_rows

_log = logging.getLogger("notewell.store")

MIN_VERSION = (0, 8)
FILL_BATCH = 1000
EF_SEARCH = 160
EF_SEARCH_MAX = 1000  # pgvector's ceiling for hnsw.ef_search

_COLUMN = (
    f"ALTER TABLE vectors ADD COLUMN near halfvec({DIMENSIONS})",
    # the memory vectors still to fill from their bytes: found at once whatever the store's size
    "CREATE INDEX vectors_near_missing ON vectors (item_id) WHERE kind = 'memory' AND near IS NULL",
)
_NEAR_COLUMN = ("SELECT 1 FROM pg_attribute WHERE attrelid = 'vectors'::regclass AND attname = 'near'"
                " AND NOT attisdropped")
# Made after the column is filled (built over every vector at once is faster than one insert each); m and
# ef_construction are pgvector's defaults (16, 64).
_HNSW = "CREATE INDEX vectors_near ON vectors USING hnsw (near halfvec_cosine_ops) WHERE kind = 'memory'"


class HalfVector(bytes):
    """A vector's float16 little-endian bytes (as the store keeps them), sent to PostgreSQL as a halfvec."""


class _HalfVectorDumper(Dumper):
    """halfvec's binary input: the dimension count and a zero (uint16 each, big-endian), then the float16
    values big-endian. No type oid (the extension's differs per database): each statement casts to halfvec."""

    format = Format.BINARY
    oid = 0

    def dump(self, obj: HalfVector) -> bytes:
        values = np.frombuffer(obj, dtype=HALF)
        return struct.pack(">HH", len(values), 0) + values.astype(">f2").tobytes()


psycopg.adapters.register_dumper(HalfVector, _HalfVectorDumper)


def candidates(limit: int) -> int:
    """How many nearest rows the index is asked for, to be scored again exactly: 10 more than the limit, at
    least 40, within ef_search's ceiling (a larger limit is answered from that many)."""
    return min(max(limit + 10, 40), EF_SEARCH_MAX)


def ef_search(take: int) -> int:
    """The HNSW search's breadth for ``take`` rows: at least EF_SEARCH (bench/meaning_latency.py measures what
    it finds of the exact top 10)."""
    return min(max(take, EF_SEARCH), EF_SEARCH_MAX)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2] if part.isdigit())


class PgVectorIndex:
    """The ``near`` column and its HNSW index of one database (``attach`` makes one where pgvector is)."""

    def __init__(self, db: PostgresDatabase, version: str) -> None:
        self.db = db
        self.version = version

    @classmethod
    def attach(cls, db: PostgresDatabase) -> PgVectorIndex | None:
        """The index, its column added and filled where missing, or None (the extension is not created in
        this database, or too old: logged with the fix)."""
        with db.transaction() as conn:
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            if row is None:
                available = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
                if available is not None:
                    _log.info("pgvector is installed on the server but not created in this database: meaning "
                              "is searched exactly in the app; a superuser runs CREATE EXTENSION vector to index it")
                return None
            if _version(str(row[0])) < MIN_VERSION:
                _log.warning("pgvector %s is older than 0.8 (no iterative index scans): meaning is searched exactly "
                             "in the app; ALTER EXTENSION vector UPDATE after installing 0.8 or later", row[0])
                return None
            if conn.execute("SELECT current_setting('transaction_read_only') = 'on'").fetchone() == (True,):
                return cls._as_it_is(conn, str(row[0]), db)
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(MIGRATION_LOCK),))
            present = conn.execute(_NEAR_COLUMN).fetchone()
            if present is None:
                for statement in _COLUMN:
                    conn.execute(statement)
        index = cls(db, str(row[0]))
        filled = index.fill_missing()
        with db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(MIGRATION_LOCK),))
            if conn.execute("SELECT 1 WHERE to_regclass('vectors_near') IS NULL").fetchone() is not None:
                conn.execute(_HNSW)
                _log.info("pgvector: the index was built over %d memory vectors", filled)
        return index

    @classmethod
    def _as_it_is(cls, conn: psycopg.Connection, version: str, db: PostgresDatabase) -> PgVectorIndex | None:
        """In a database that refuses writes (a standby, default_transaction_read_only): its index as it is, or None
        (exact search in the app) where its column or index was never made."""
        if conn.execute(_NEAR_COLUMN).fetchone() is None or conn.execute(
                "SELECT 1 WHERE to_regclass('vectors_near') IS NULL").fetchone() is not None:
            _log.warning("pgvector: the database is read-only and its index was never built: meaning is searched "
                         "exactly in the app until a writable open builds it")
            return None
        return cls(db, version)

    def write(self, conn: Executor, vectors: Sequence[tuple[str, int, bytes]]) -> None:
        """The halfvec of each memory vector just written (in the writer's transaction), in one statement (the
        writer passes at most shared/meaning.py's ROWS)."""
        rows = [(i, HalfVector(v)) for kind, i, v in vectors if kind == "memory"]
        if rows:
            conn.execute("UPDATE vectors SET near = d.near FROM (VALUES"
                         f" {', '.join(['(CAST(? AS bigint), CAST(? AS halfvec))'] * len(rows))}) AS d (item_id, near)"
                         " WHERE vectors.kind = 'memory' AND vectors.item_id = d.item_id",
                         [value for row in rows for value in row])

    def fill_missing(self) -> int:
        """Copy every memory vector without its halfvec into it, a batch per transaction; how many."""
        filled = 0
        while True:
            with self.db.transaction() as conn:
                rows = conn.execute("SELECT item_id, vector FROM vectors WHERE kind = 'memory' AND near IS NULL"
                                    " ORDER BY item_id LIMIT %s FOR UPDATE SKIP LOCKED", (FILL_BATCH,)).fetchall()
                if rows:
                    conn.cursor().executemany(
                        "UPDATE vectors SET near = %s::halfvec WHERE kind = 'memory' AND item_id = %s",
                        [(HalfVector(bytes(v)), int(i)) for i, v in rows])
            filled += len(rows)
            if len(rows) < FILL_BATCH:
                return filled

    def nearest(self, dialect: Dialect, query: MemoryQuery, vector: bytes, model: str) -> list[tuple[int, float]]:
        """The (id, similarity) of the ``query.limit`` memories of ``query``'s scope nearest to ``vector``, best
        first: the index's nearest allowed candidates scored again exactly, or the whole scope scored exactly
        when the index gives fewer than asked."""
        where, params = search_conditions(query, dialect)
        scope = (f"FROM vectors v JOIN memories m ON m.id = v.item_id WHERE v.kind = 'memory' AND v.model = ?"
                 f" AND {LIVE} AND {' AND '.join(where)}")
        take = candidates(query.limit)
        with dialect.transaction() as conn:
            # set_config(..., true) is SET LOCAL: the settings end with this transaction; one round trip with
            # the check for vectors not yet copied into the index (an older server wrote them meanwhile), which a
            # database refusing writes leaves as they are
            missing = conn.execute(
                "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', ?,"
                " true), EXISTS (SELECT 1 FROM vectors WHERE kind = 'memory' AND near IS NULL)"
                " AND current_setting('transaction_read_only') = 'off'", (str(ef_search(take)),)
            ).fetchone()[2]
            if missing:
                self.fill_missing()
            rows = conn.execute(f"SELECT v.item_id, v.vector {scope} ORDER BY v.near <=> ?::halfvec LIMIT ?",
                                [model, *params, HalfVector(vector), take]).fetchall()
            if len(rows) < take:
                _log.debug("pgvector: the search gave %d of %d candidates; the scope is scored exactly", len(rows),
                           take)
                rows = conn.execute(f"SELECT v.item_id, v.vector {scope}", [model, *params]).fetchall()
        return nearest_rows([(int(i), bytes(v)) for i, v in rows], vector, query.limit)
