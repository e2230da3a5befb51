"""SQLite connections: one per thread, WAL (the migrations: store/shared/migrations.py).

A thread's connection lives in its thread-local storage, inside a holder that closes it when dropped:
when the thread ends (a server's idle worker thread retires), Python drops its thread-local storage and
the connection is closed with it, so open files and memory stay flat however many threads come and go.

A write the store refuses (its disk full, its file, folder or filesystem read-only) is raised as
StoreCannotWrite naming the cause and its fix, here alone: every connection is a ``_Connection``, whose
statements translate SQLite's SQLITE_FULL and SQLITE_READONLY, and the database remembers the refusal a while
for /readyz and doctor (``refusal``). A damaged file (SQLITE_CORRUPT, SQLITE_NOTADB) is raised as StoreDamaged
the same way (store/sqlite/integrity.py finds and mends it).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NoReturn

from notewell.errors import ConfigError, NotewellError, StoreCannotWrite, StoreDamaged, Unavailable
from notewell.store.sqlite.deleted_wal import DeletedWal, FileId
from notewell.word_breaks import word_text

_log = logging.getLogger("notewell.store")
BUSY_TIMEOUT_MS = 30_000
PAGE_CACHE_KIB = 16_384
PAGE_BYTES = 16_384  # a new store's page size (an existing store keeps its own); see _connect
HEAP_LIMIT_BYTES = 48 * 1024 * 1024  # all connections of the process together (see _connect)
WORD_TEXT_SQL = "notewell_word_text"  # word_breaks.word_text, for the word indexes' SQL
REFUSAL_KEPT_S = 60.0  # a refused write is reported (readiness, doctor) this long (see _Refusals)
FULL_BELOW_BYTES = 64 * 1024  # a store's filesystem with less free space than this is taken for full


def free_bytes(folder: Path) -> int | None:
    """The space this process may still write in ``folder``'s filesystem (root may use the reserved blocks),
    None when it cannot be read."""
    try:
        stat = os.statvfs(folder)
    except OSError:
        return None
    return (stat.f_bfree if os.geteuid() == 0 else stat.f_bavail) * stat.f_frsize


def disk_full(path: Path) -> StoreCannotWrite:
    return StoreCannotWrite(f"the store's disk is full ({path})", "free space on the disk holding it (or, with its "
                            "servers stopped, move the store's file and its -wal file to a larger disk and name the "
                            "new place with --db), then retry", cause="full")


def read_only(path: Path) -> StoreCannotWrite:
    return StoreCannotWrite(f"the store {path} is read-only (the file, its folder or its filesystem cannot be "
                            "written)", "make the file, its -wal and -shm files and its folder writable by the user "
                            "running Notewell (or mount the filesystem read-write)", cause="read-only")


def refusal(exc: sqlite3.Error, path: Path) -> StoreCannotWrite | None:
    """The StoreCannotWrite a driver error stands for (None: some other error): SQLITE_FULL, SQLITE_READONLY
    (any of its extended codes), or an I/O error on a filesystem that is full or read-only."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if primary == sqlite3.SQLITE_FULL or "database or disk is full" in text:
        return disk_full(path)
    if primary == sqlite3.SQLITE_READONLY or "readonly database" in text:
        return read_only(path)
    if primary in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN) or "disk I/O error" in text:
        free = free_bytes(path.parent)
        if free is not None and free < FULL_BELOW_BYTES:
            return disk_full(path)
        if path.parent.is_dir() and not os.access(path.parent, os.W_OK):  # a read-only mount answers EROFS
            return read_only(path)
    return None


def locked(path: Path) -> Unavailable:
    """The store's write lock held by another process past the busy timeout: nothing was done, try again."""
    return Unavailable(f"--db: {path} stayed locked by another process for {BUSY_TIMEOUT_MS // 1000} s (a long "
                       "write, or a process stopped mid-write); nothing was done: try again, or find the process "
                       "holding it (fuser)")


def damaged(exc: sqlite3.Error, path: Path | None) -> StoreDamaged | None:
    """The StoreDamaged a driver error stands for (None: some other error): SQLITE_CORRUPT (any of its extended
    codes: an index, a virtual table, a sequence) or SQLITE_NOTADB met after the file opened."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if primary in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) or "disk image is malformed" in text:
        return StoreDamaged(path, text)
    if text.startswith("Could not decode to UTF-8"):  # Notewell writes only UTF-8: the bytes of a row were changed
        return StoreDamaged(path, text.split(" with text ", 1)[0] + " (its bytes are not UTF-8)")
    return None


class _Refusals:
    """The last write the database refused, and when: kept ``REFUSAL_KEPT_S``, or until a write commits if the
    store was read-only (on a full disk a small write may still fit where a larger one does not)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last: tuple[StoreCannotWrite, float] | None = None

    def translated(self, exc: sqlite3.Error) -> StoreCannotWrite | None:
        refused = refusal(exc, self.path)
        if refused is not None:
            self.last = (refused, time.monotonic())
        return refused

    def committed(self) -> None:
        last = self.last
        if last is not None and last[0].cause == "read-only":
            self.last = None

    def current(self) -> StoreCannotWrite | None:
        last = self.last
        return last[0] if last is not None and time.monotonic() - last[1] < REFUSAL_KEPT_S else None


def _reraise(conn: _Connection, exc: sqlite3.DatabaseError) -> NoReturn:
    """``exc`` raised as what it stands for (an interrupt, or ``translated``), or as itself."""
    if interrupted(exc):  # raised as Ctrl-C is everywhere else: what handles it (rollbacks, the CLI) needs no more
        raise KeyboardInterrupt from exc
    translated = conn.translated(exc)
    if translated is None:
        raise exc
    raise translated from exc


class _Cursor(sqlite3.Cursor):
    """A cursor whose fetches raise StoreDamaged for a damaged file, as its connection's statements do (a row is
    read as it is fetched: the damage may lie past the first one). Iterating a cursor row by row is left as it
    is: a Python frame per row would slow every long read."""

    connection: _Connection

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.DatabaseError as exc:
            self._failed(exc)

    def fetchmany(self, size: int | None = None) -> list[Any]:
        try:
            return super().fetchmany(self.arraysize if size is None else size)
        except sqlite3.DatabaseError as exc:
            self._failed(exc)

    def _failed(self, exc: sqlite3.DatabaseError) -> NoReturn:
        """The statement closed (an open statement holds its read snapshot for as long as something keeps the
        exception, and the cursor with it), then ``exc`` raised as what it stands for."""
        self.close()
        _reraise(self.connection, exc)

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.DatabaseError as exc:
            self._failed(exc)


class _Connection(sqlite3.Connection):
    """A connection whose statements raise StoreCannotWrite for a write the store refuses, and StoreDamaged for a
    damaged file."""

    refusals: _Refusals

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return self.cursor(_Cursor).execute(sql, parameters)  # as Connection.execute does, with a _Cursor
        except sqlite3.DatabaseError as exc:
            _reraise(self, exc)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, parameters)
        except sqlite3.DatabaseError as exc:
            _reraise(self, exc)

    def executescript(self, sql_script: str, /) -> sqlite3.Cursor:
        try:
            return super().executescript(sql_script)
        except sqlite3.DatabaseError as exc:
            _reraise(self, exc)

    def translated(self, exc: sqlite3.DatabaseError) -> NotewellError | None:
        """What ``exc`` stands for; None when it is none of the errors translated here (a constraint failed, a
        lock not taken in time, ...)."""
        if isinstance(exc, sqlite3.OperationalError):
            refused = self.refusals.translated(exc)
            if refused is not None:
                return refused
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY:
                return locked(self.refusals.path)
        return damaged(exc, self.refusals.path)


def _word_text(text: str | None) -> str | None:
    return word_text(text) if isinstance(text, str) else text


FUNCTION_FAILED = "user-defined function raised exception"  # what SQLite raises for any error of a function it calls
_interrupts = threading.local()


def sql_function(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` as SQLite is given it (``create_function``). Ctrl-C raises KeyboardInterrupt wherever Python
    runs, and a long write spends most of its Python time in these functions (a word index's text, row by row);
    SQLite drops what a function raises and fails the statement with FUNCTION_FAILED instead, so the interrupt is
    noted here (per thread) for ``interrupted`` to read the failure as the interrupt it was."""
    def called(*args: Any) -> Any:
        try:
            return function(*args)
        except KeyboardInterrupt:
            _interrupts.seen = True
            raise
    return called


def failed_in_a_function(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's failure of a statement for an error of a function it called (FUNCTION_FAILED)."""
    return isinstance(exc, sqlite3.OperationalError) and str(exc) == FUNCTION_FAILED


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is a Ctrl-C: a KeyboardInterrupt, or the failure of a statement in which one landed inside a
    function SQLite called (``sql_function``; the note is taken, so a later failure is read for itself)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if failed_in_a_function(exc) and getattr(_interrupts, "seen", False):
        _interrupts.seen = False
        return True
    return False


class _Held:
    """One thread's connection: closed when the holder is dropped with the thread's local storage."""

    __slots__ = ("__weakref__", "closed", "closing", "conn", "wal_file")

    def __init__(self, conn: sqlite3.Connection, wal_file: FileId | None, closing: Callable[[_Held], bool]) -> None:
        self.conn = conn
        self.wal_file = wal_file  # the -wal file there as it was opened (None: none yet): see deleted_wal.py
        self.closing = closing  # whether it may close now (False: it is kept to copy a deleted -wal)
        self.closed = False

    def close(self) -> None:
        if not self.closed and self.closing(self):
            self.closed = True
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
        self._lock = threading.RLock()  # (a holder dropped by the garbage collector inside it takes it again)
        self.refusals = _Refusals(path)
        self.opened = False  # a connection opened once: a later failure to open is no bad --db (see _connect)
        self.wal = False  # in WAL mode (a store that cannot write may be read in another: _connect)
        self.deleted_wal = DeletedWal(path)

    def refused(self) -> StoreCannotWrite | None:
        """The write this database refused in the last ``REFUSAL_KEPT_S``, if any (see _Refusals)."""
        return self.refusals.current()

    def _connect(self, again: bool = False) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=False, factory=_Connection)
            conn.refusals = self.refusals
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute(f"PRAGMA page_size={PAGE_BYTES}")  # takes effect only as the file is created
            conn.execute("PRAGMA schema_version")  # a file that is not a database fails here
            with suppress(StoreCannotWrite):  # a store that cannot be written (a backup file on a read-only disk)
                if conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal":  # is read in its own journal
                    self.wal = True  # mode: its writes are refused
        except StoreCannotWrite:
            raise
        except (sqlite3.DatabaseError, StoreDamaged) as exc:  # damaged from the first page: not a database at all
            refused = self.refusals.translated(exc) if isinstance(exc, sqlite3.DatabaseError) else None
            if refused is not None:
                raise refused from exc
            if self.opened and self.wal and self.deleted_wal.seen(self._connections):  # its -shm names frames of
                if self.deleted_wal.copied and not again:  # a deleted -wal ('disk I/O error'), all in the store's
                    return self._connect(again=True)  # file now: it reads there
                raise self.deleted_wal.refusal() from exc
            if isinstance(exc, StoreDamaged) and self.opened:  # its header damaged under a running process: it
                raise  # is there and no flag is at fault, as a connection opened earlier says
            reason = exc.reason if isinstance(exc, StoreDamaged) else str(exc)
            if self.opened:  # it opened before: the file went away under a running process, no flag is at fault
                raise Unavailable(f"the store {self.path} cannot be opened now ({reason}): was it moved or deleted "
                                  "while this process ran? Nothing was done: put it back, or start again with "
                                  "--db at its new place") from exc
            raise ConfigError(f"--db: cannot open {self.path} ({reason}); check the path and its permissions, "
                              "or pass another --db") from exc
        self.opened = True
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
        conn.create_function(WORD_TEXT_SQL, 1, sql_function(_word_text), deterministic=True)
        return conn

    def _hold(self, conn: sqlite3.Connection) -> _Held:
        held = _Held(conn, self.deleted_wal.file(), self._closing)
        with self._lock:
            self._all.add(held)
        return held

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[Any]:
        """Rows as SQLite steps to them, on the thread's own connection; a damaged row raises StoreDamaged."""
        conn = self.conn
        cursor = conn.execute(sql, params)
        try:
            for row in cursor:  # noqa: UP028  (``yield from`` would close the cursor as this generator is closed,
                yield row  # which raises once the database is closed: an export a full disk stopped)
        except sqlite3.DatabaseError as exc:
            cursor.close()  # its read snapshot ends with it (_Cursor._failed)
            if not isinstance(conn, _Connection):
                raise
            _reraise(conn, exc)

    @property
    def conn(self) -> sqlite3.Connection:
        held: _Held | None = getattr(self._local, "held", None)
        if held is None:
            held = self._hold(self._connect())
            self._local.held = held
        return held.conn

    def wal_deleted(self) -> StoreCannotWrite | None:
        """The refusal of every write once the store's -wal file was deleted under this process (deleted_wal.py):
        SQLite goes on writing into the deleted file, and what it acknowledged is lost as it closes. It holds
        until the process restarts, even once a -wal is there again (made by a connection opened since)."""
        if not self.wal or not self.deleted_wal.seen(self._connections):
            return None
        return self.deleted_wal.refusal()

    def _connections(self) -> list[_Held]:
        with self._lock:
            return list(self._all)

    def _closing(self, held: _Held) -> bool:
        with self._lock:
            self._all.discard(held)
        return not self.wal or self.deleted_wal.closing(held)

    def _refuse_without_wal(self) -> None:
        gone = self.wal_deleted()
        if gone is not None:
            self.refusals.last = (gone, time.monotonic())
            raise gone

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE): committed on success, rolled back on error; refused once the
        store's -wal file was deleted under this process (``wal_deleted``)."""
        conn = self.conn
        if conn.in_transaction:
            yield conn
            return
        self._refuse_without_wal()
        try:
            with _immediate(conn):
                yield conn
        finally:
            if conn.in_transaction:  # even its ROLLBACK failed: never joined again, this thread gets a new one
                held: _Held | None = getattr(self._local, "held", None)
                if held is not None and held.conn is conn:
                    self._local.held = None
                    held.close()
        self.refusals.committed()

    @contextmanager
    def isolated_transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction on a new connection, standing in as this thread's connection meanwhile.

        For a transaction that writes FTS5 shadow tables directly: FTS5 caches an index's structure in
        each connection and reads it again only after another connection commits, so the connection
        that copies an index in must be one that never opened it, and every other connection (this
        thread's usual one included) sees the commit as another connection's.
        """
        self._refuse_without_wal()
        previous: _Held | None = getattr(self._local, "held", None)
        held = self._hold(self._connect())
        self._local.held = held
        try:
            with _immediate(held.conn):
                yield held.conn
        finally:
            self._local.held = previous
            held.close()

    def close(self) -> None:
        for held in self._connections():
            held.close()
        self.deleted_wal.release()
        self._local = threading.local()


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE on ``conn``: committed on success, rolled back on error. A failed COMMIT (the disk full)
    is rolled back too, where SQLite has not already: the connection never stays inside a dead transaction,
    which its thread's next transaction would join."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        _roll_back(conn)
        raise
    try:
        conn.execute("COMMIT")
    except BaseException:
        _roll_back(conn)
        raise


def _roll_back(conn: sqlite3.Connection) -> None:
    """ROLLBACK where SQLite has not rolled back already (SQLITE_FULL does), never raising over the error that
    led here: the caller sees whether the connection is still inside the transaction (``in_transaction``)."""
    if conn.in_transaction:
        with suppress(Exception):  # StoreCannotWrite as well as sqlite3.Error
            sqlite3.Connection.execute(conn, "ROLLBACK")

