"""SQLite connections: one per thread, WAL (the migrations: store/shared/migrations.py).

A thread's connection lives in its thread-local storage, inside a holder that closes it when dropped:
when the thread ends (a server's idle worker thread retires), Python drops its thread-local storage and
the connection is closed with it, so open files and memory stay flat however many threads come and go.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from notewell.errors import ConfigError
from notewell.word_breaks import word_text

BUSY_TIMEOUT_MS = 30_000
PAGE_CACHE_KIB = 16_384
PAGE_BYTES = 16_384  # a new store's page size (an existing store keeps its own); see _connect
HEAP_LIMIT_BYTES = 48 * 1024 * 1024  # all connections of the process together (see _connect)
WORD_TEXT_SQL = "notewell_word_text"  # word_breaks.word_text, for the word indexes' SQL


def _word_text(text: str | None) -> str | None:
    return word_text(text) if isinstance(text, str) else text


class _Held:
    """One thread's connection: closed when the holder is dropped with the thread's local storage."""

    __slots__ = ("__weakref__", "conn")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def close(self) -> None:
        with suppress(sqlite3.Error):
            self.conn.close()

    def __del__(self) -> None:
        self.close()


class SqliteDatabase:
    """A database file shared by threads: each thread gets its own connection, closed when the thread ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: weakref.WeakSet[_Held] = weakref.WeakSet()  # every live connection, for close()
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute(f"PRAGMA page_size={PAGE_BYTES}")  # takes effect only as the file is created
            conn.execute("PRAGMA journal_mode=WAL")  # a file that is not a database fails here
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"--db: cannot open {self.path} ({exc}); check the path and its permissions, "
                              "or pass another --db") from exc
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        # A server holds a connection per worker thread: a bounded page cache each, and no memory map,
        # whose touched pages count as the process's memory (the operating system caches the file anyway).
        # The soft heap limit is the process's: past it, a connection reuses its own cached pages instead
        # of taking more, so 8 concurrent clients no longer mean 8 full caches (a server at 1 GB: 304 MB
        # after 1,000 calls from 8 clients, 192 MB with the limit; one client and builds as fast).
        conn.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
        conn.execute(f"PRAGMA soft_heap_limit={HEAP_LIMIT_BYTES}")
        conn.execute("PRAGMA mmap_size=0")
        conn.create_function(WORD_TEXT_SQL, 1, _word_text, deterministic=True)
        return conn

    def _hold(self, conn: sqlite3.Connection) -> _Held:
        held = _Held(conn)
        with self._lock:
            self._all.add(held)
        return held

    @property
    def conn(self) -> sqlite3.Connection:
        held: _Held | None = getattr(self._local, "held", None)
        if held is None:
            held = self._hold(self._connect())
            self._local.held = held
        return held.conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE): committed on success, rolled back on error."""
        conn = self.conn
        if conn.in_transaction:
            yield conn
            return
        with _immediate(conn):
            yield conn

    @contextmanager
    def isolated_transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction on a new connection, standing in as this thread's connection meanwhile.

        For a transaction that writes FTS5 shadow tables directly: FTS5 caches an index's structure in
        each connection and reads it again only after another connection commits, so the connection
        that copies an index in must be one that never opened it, and every other connection (this
        thread's usual one included) sees the commit as another connection's.
        """
        previous: _Held | None = getattr(self._local, "held", None)
        held = self._hold(self._connect())
        self._local.held = held
        try:
            with _immediate(held.conn):
                yield held.conn
        finally:
            self._local.held = previous
            with self._lock:
                self._all.discard(held)
            held.close()

    def close(self) -> None:
        with self._lock:
            for held in list(self._all):
                held.close()
            self._all.clear()
        self._local = threading.local()


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE on ``conn``: committed on success, rolled back on error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")

