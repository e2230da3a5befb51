"""The trigram index in shards, and building the shards of a fresh store in parallel.

The FTS5 trigram index is the bulk of an index build's time, and one SQLite file has one writer at a
time. The index is therefore split by document id into ``SHARDS`` FTS5 tables (a row is a region of a
document, store/regions.py; a document's regions share its shard). When a store is
empty, an index build hands each shard's inserts to a thread of its own that fills a scratch SQLite
file (SQLite releases the GIL while it works, so the shards fill on separate cores); at the end the
scratch tables' rows are copied into the store's shadow tables inside the build's one transaction.
Later, smaller syncs write the store's shards directly.

Rows go to a shard's thread in batches (``BATCH_ROWS`` rows or ``BATCH_BYTES`` of text, whichever comes
first), and up to ``QUEUE_BATCHES`` batches wait for each thread. Row by row through a queue of 64, the
threads spent a sixth of the build's CPU in Python around each insert, and a large document (all its
regions go to one shard) stopped the reader while the other shard's thread waited: batched, a 10 GB build
took 12% less time and 6% less CPU (at 1 GB the difference is within the runs' spread; docs/performance.md).
A batch is inserted by one statement of many rows (``_many_rows``), which SQLite runs in one step: the
thread takes the interpreter's lock back, from a main thread that holds it most of the time, once a batch
rather than once a row as ``executemany`` does. What waits is bounded: at most ``QUEUE_BATCHES + 1``
batches a shard, about 8 MB.

While a scratch shard fills, FTS5 merges no segments of its own accord (``automerge`` 0) and is forced to
only when a level holds ``_FILLING_CRISIS_MERGE`` segments rather than 16, so each trigram's rows are
rewritten fewer times before the one ``optimize`` at the end: 7% less CPU for a 1 GB build and 6% for
10 GB. Each thread then counts its shard's trigrams (trigram_counts.py) on its own core.
"""

from __future__ import annotations

import heapq
import queue
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import suppress
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from types import TracebackType

from notewell.store.regions import REGION_BITS, doc_of

SHARDS = 2
_SHADOW_SUFFIXES = ("data", "idx", "docsize", "config")  # FTS5's tables behind a contentless index
_AUTOMERGE = 4  # FTS5's default
_CRISIS_MERGE = 16  # FTS5's default: a level's segments are merged, whatever automerge says, once it holds this many
_FILLING_CRISIS_MERGE = 1000  # while a scratch shard fills (FTS5 allows up to 1999): each level rewritten less often
BATCH_ROWS = 32
BATCH_BYTES = 512 * 1024  # of text (a region's indexed words are at most a region, 16 KB, or one long line)
QUEUE_BATCHES = 16
_PUT_WAIT_S = 0.5
_COUNTS = "shard_trigram_counts"  # in a scratch file: how many of its regions hold each trigram
_Row = tuple[str, int, str]  # ("insert" | "delete", rowid, indexed text)


def shard_name(shard: int) -> str:
    return f"document_trigrams_{shard}"


def reindex_shard(shard: int) -> tuple[str, str]:
    """The statements that empty a shard and index its regions again from ``document_regions`` (a migration that
    changed how regions are indexed, a repair); they need ``notewell_region_words`` (SqliteDocuments registers it)."""
    name = shard_name(shard)
    return (f"INSERT INTO {name} ({name}) VALUES ('delete-all')",
            f"INSERT INTO {name} (rowid, body) SELECT id, notewell_region_words(body) FROM document_regions"
            f" WHERE (id >> {REGION_BITS}) % {SHARDS} = {shard} ORDER BY id")


def shard_of(doc_id: int) -> str:
    return shard_name(doc_id % SHARDS)


def shard_ddl(name: str) -> str:
    return (f"CREATE VIRTUAL TABLE {name} USING fts5 ("
            "body, tokenize = 'trigram case_sensitive 1', detail = none, content = '')")


def match_any_shard(column: str = "rowid") -> str:
    """A subquery of the region ids (or ``column``) whose trigrams match, between two region ids; it takes
    the MATCH expression and the two ids once per shard (``shard_params``). FTS5 seeks to the first id
    and stops after the last, so a scope whose documents lie together reads only its part of each
    trigram's rows."""
    return " UNION ALL ".join(f"SELECT {column} FROM {shard_name(n)} WHERE {shard_name(n)} MATCH ?"
                              " AND rowid BETWEEN ? AND ?" for n in range(SHARDS))


def shard_params(match: str, first: int, last: int) -> list[object]:
    """The parameters of ``match_any_shard``."""
    return [match, first, last] * SHARDS


def _many_rows(op: str, count: int) -> str:
    """One INSERT of ``count`` rows of ``op`` (an insert or FTS5's delete), its parameters rowid, text, rowid, ..."""
    row = "(?, ?)" if op == "insert" else "('delete', ?, ?)"
    columns = "(rowid, body)" if op == "insert" else "(shard, rowid, body)"
    return f"INSERT INTO shard {columns} VALUES {', '.join([row] * count)}"


class _ShardBuilder(threading.Thread):
    """Fills one scratch FTS5 table from a queue of batches of rows, in order."""

    def __init__(self, path: Path) -> None:
        super().__init__(name=f"notewell-{path.name}", daemon=True)
        self.path = path
        self.inbox: queue.Queue[list[_Row] | None] = queue.Queue(maxsize=QUEUE_BATCHES)
        self.error: BaseException | None = None
        self.batch: list[_Row] = []  # rows not handed over yet (the writer's thread only)
        self.batch_bytes = 0

    def add(self, row: _Row) -> None:
        """Add a row to the batch, and hand the batch over once it is full."""
        self.batch.append(row)
        self.batch_bytes += len(row[2])
        if len(self.batch) >= BATCH_ROWS or self.batch_bytes >= BATCH_BYTES:
            self.hand_over()

    def hand_over(self) -> None:
        if self.batch:
            self.put(self.batch)
            self.batch, self.batch_bytes = [], 0

    def run(self) -> None:
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            try:
                conn.execute("PRAGMA journal_mode=OFF")
                conn.execute("PRAGMA synchronous=OFF")
                conn.execute(shard_ddl("shard"))
                # no merging of segments while filling, and a forced merge only once a level holds
                # _FILLING_CRISIS_MERGE segments; one optimize at the end (one segment per shard). The
                # config rows are copied into the store: FTS5's defaults back for the syncs that follow.
                conn.execute("INSERT INTO shard (shard, rank) VALUES ('automerge', 0)")
                conn.execute(f"INSERT INTO shard (shard, rank) VALUES ('crisismerge', {_FILLING_CRISIS_MERGE})")
                conn.execute("BEGIN")
                while (batch := self.inbox.get()) is not None:
                    for op, rows in groupby(batch, key=itemgetter(0)):  # in order: a delete may follow an insert
                        values = [value for _, rowid, body in rows for value in (rowid, body)]
                        conn.execute(_many_rows(op, len(values) // 2), values)
                conn.execute("INSERT INTO shard (shard) VALUES ('optimize')")
                conn.execute(f"INSERT INTO shard (shard, rank) VALUES ('automerge', {_AUTOMERGE})")
                conn.execute(f"INSERT INTO shard (shard, rank) VALUES ('crisismerge', {_CRISIS_MERGE})")
                conn.execute("CREATE VIRTUAL TABLE temp.vocabulary USING fts5vocab(main, shard, row)")
                conn.execute(f"CREATE TABLE {_COUNTS} (trigram TEXT PRIMARY KEY, regions INTEGER) WITHOUT ROWID")
                conn.execute(f"INSERT INTO {_COUNTS} SELECT term, doc FROM temp.vocabulary")
                conn.execute("COMMIT")
            finally:
                conn.close()
        except BaseException as exc:  # handed to the writer, which raises it in its own thread
            self.error = exc

    def put(self, item: list[_Row] | None) -> None:
        while True:
            if self.error is not None or not self.is_alive():
                raise RuntimeError(f"building the trigram index failed: {self.error}") from self.error
            with suppress(queue.Full):
                self.inbox.put(item, timeout=_PUT_WAIT_S)
                return


class ParallelShardBuild:
    """Scratch shards filled by one thread each, then copied into a store's empty shards."""

    def __init__(self, db_path: Path) -> None:
        self.paths = [db_path.with_name(f"{db_path.name}.shard{n}.tmp") for n in range(SHARDS)]
        self.builders: Sequence[_ShardBuilder] = ()

    def __enter__(self) -> ParallelShardBuild:
        for path in self.paths:
            path.unlink(missing_ok=True)
        self.builders = [_ShardBuilder(path) for path in self.paths]
        for builder in self.builders:
            builder.start()
        return self

    def insert(self, rowid: int, indexed: str) -> None:
        self.builders[doc_of(rowid) % SHARDS].add(("insert", rowid, indexed))

    def delete(self, rowid: int, indexed: str) -> None:
        self.builders[doc_of(rowid) % SHARDS].add(("delete", rowid, indexed))

    def copy_into(self, conn: sqlite3.Connection) -> None:
        """Finish every shard and replace the store's (empty) shards with them, in ``conn``'s transaction."""
        for builder in self.builders:
            builder.hand_over()
            builder.put(None)
        for builder in self.builders:
            builder.join()
            if builder.error is not None:
                raise RuntimeError(f"building the trigram index failed: {builder.error}") from builder.error
        for shard, path in enumerate(self.paths):
            source = sqlite3.connect(path)
            try:
                for suffix in _SHADOW_SUFFIXES:
                    target = f"{shard_name(shard)}_{suffix}"
                    rows = source.execute(f"SELECT * FROM shard_{suffix}")
                    marks = ", ".join("?" * len(rows.description))
                    conn.execute(f"DELETE FROM {target}")
                    conn.executemany(f"INSERT INTO {target} VALUES ({marks})", rows)
            finally:
                source.close()

    def trigram_counts(self) -> Iterator[tuple[str, int]]:
        """How many regions of all the shards hold each trigram, in the trigrams' order, once ``copy_into``
        has finished the shards. Each shard's thread counted its own (fts5vocab) after its ``optimize``,
        so the two counts run on two cores rather than on the store's connection after the copy (31 s on
        one core at 10 GB: the build's tail after its reading went from 102 to 82 s)."""
        sources = [sqlite3.connect(path) for path in self.paths]
        try:
            runs = [source.execute(f"SELECT trigram, regions FROM {_COUNTS} ORDER BY trigram") for source in sources]
            for trigram, counted in groupby(heapq.merge(*runs, key=itemgetter(0)), key=itemgetter(0)):
                yield trigram, sum(regions for _, regions in counted)
        finally:
            for source in sources:
                source.close()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for builder in self.builders:
            if builder.is_alive():
                with suppress(RuntimeError):
                    builder.put(None)
                builder.join()
        for path in self.paths:
            path.unlink(missing_ok=True)
