"""PostgreSQL connections: a psycopg 3 pool (the migrations: store/shared/migrations.py).

Connections run in autocommit mode; ``transaction()`` opens an explicit transaction and binds its
connection to the calling thread, so that reads made inside it (``connection()``) see its own
uncommitted writes, as on SQLite where a thread always uses the same connection.

A write the database refuses (a read-only database or standby, a full disk on its server) is raised as
StoreCannotWrite naming the cause and its fix, here alone (``_pooled``, which every statement passes through),
and remembered a while for /readyz and doctor (``refused``).
"""

from __future__ import annotations

import select
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from notewell.errors import ConfigError, InvalidArgument, StoreCannotWrite, Unavailable
from notewell.log_lines import mask_in_library_lines
from notewell.store.postgres.url_secrets import misread, reason, redact, scrub

POOL_MIN = 1
POOL_MAX = 16
POOL_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 10
REFUSAL_KEPT_S = 60.0  # a refused write is reported (readiness, doctor) this long, or until a write commits if
# the database was read-only (on a full disk a small write may still fit where a larger one does not)
ENCODE = ("write it as postgresql://user:password@host:port/dbname with the password's special characters "
          "percent-encoded (@ as %40, / as %2F, : as %3A, # as %23, ? as %3F, % as %25, a space as %20), or leave "
          "the password out of the URL and put it in ~/.pgpass or PGPASSWORD")


def read_only(url: str) -> StoreCannotWrite:
    return StoreCannotWrite(f"the database at {redact(url)} is read-only (a standby?)", "point --db at the "
                            "primary, or make the database writable (ALTER DATABASE name SET "
                            "default_transaction_read_only = off)", cause="read-only")


def refusal(exc: psycopg.Error, url: str) -> StoreCannotWrite | None:
    """The StoreCannotWrite a driver error stands for (None: some other error)."""
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return read_only(url)
    if isinstance(exc, psycopg.errors.DiskFull):
        return StoreCannotWrite(f"the store's disk is full (the PostgreSQL server of {redact(url)} has no space "
                                "left)", "free space on the database server's disk, then retry", cause="full")
    return None


def check_idle(conn: psycopg.Connection) -> None:
    """The pool's check of a connection it hands out, without a round trip when nothing is amiss. An idle
    connection's socket has nothing to read unless the server spoke: a restart, a failover or
    pg_terminate_backend sends an error and closes it, so a readable socket (or a connection psycopg knows
    is closed) gets the full check, an empty query, which fails on a dead one and the pool replaces it.
    The empty query on every checkout cost a round trip each (four a search on PostgreSQL)."""
    if not conn.closed and not conn.broken and not select.select([conn.fileno()], [], [], 0)[0]:
        return
    ConnectionPool.check_connection(conn)


class PostgresDatabase:
    """A PostgreSQL database shared by threads through a connection pool."""

    def __init__(self, url: str, *, min_size: int = POOL_MIN, max_size: int = POOL_MAX) -> None:
        self.url = url
        self._local = threading.local()
        self._refused: tuple[StoreCannotWrite, float] | None = None
        # the pool's own log lines quote libpq, which names a host as it read the URL: masked there too
        mask_in_library_lines(url, lambda text: scrub(text, url))
        try:
            psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.ProgrammingError:  # libpq's reason quotes the URL, or the piece of the password it stopped at
            raise ConfigError(f"--db: not a valid PostgreSQL URL (not shown: it may hold a password); {ENCODE}"
                              ) from None
        try:  # one direct attempt first: a wrong URL fails at once with PostgreSQL's reason, not after retries
            with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S) as first:
                encoding = first.info.parameter_status("server_encoding") or ""
        except psycopg.Error as exc:
            hint = (f"; the password seems to hold a character the URL reads as a separator: {ENCODE}"
                    if misread(url) else "")
            raise ConfigError(
                f"--db: cannot connect to {redact(url)} ({reason(exc, url)}); check that PostgreSQL runs there and "
                f"that the database, user and password are right{hint}"
            ) from None
        if encoding.upper() != "UTF8":  # SQL_ASCII: psycopg hands back bytes, and folding non-ASCII text is wrong
            raise ConfigError(
                f"--db: the database of {redact(url)} is encoded {encoding or 'unknown'}; Notewell needs UTF8: create "
                "it with CREATE DATABASE name ENCODING 'UTF8' TEMPLATE template0 (or initdb --encoding=UTF8)")
        self.pool = ConnectionPool(
            url, min_size=min_size, max_size=max_size, timeout=POOL_TIMEOUT_S, open=False,
            # no JIT: Notewell's queries take milliseconds, and a planner's overestimate of one (a range
            # of region ids) once spent 400 ms compiling it
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S, "application_name": "notewell",
                    "options": "-c jit=off"},
            # after a database restart or failover, a dead pooled connection is replaced instead of failing
            # the next request (check_idle)
            check=check_idle, name="notewell",
        )
        try:
            self.pool.open(wait=True, timeout=CONNECT_TIMEOUT_S + 5)
        except PoolTimeout as exc:
            self.pool.close()
            raise ConfigError(f"--db: cannot open a connection pool to {redact(url)} in time") from exc

    def refused(self) -> StoreCannotWrite | None:
        """The write this database refused in the last ``REFUSAL_KEPT_S``, if any (see REFUSAL_KEPT_S)."""
        last = self._refused
        return last[0] if last is not None and time.monotonic() - last[1] < REFUSAL_KEPT_S else None

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """The thread's open transaction if there is one, otherwise a pooled autocommit connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            self._write_held()
            yield conn
            return
        with self._pooled() as conn:
            yield conn

    @contextmanager
    def _pooled(self) -> Iterator[psycopg.Connection]:
        """A pooled connection; Unavailable when the pool gives none in POOL_TIMEOUT_S (the database is down, or
        every connection is busy) or the connection breaks under the request (the database went away), where a
        request answered 500 with a traceback in the log."""
        try:
            with self.pool.connection() as conn:
                try:
                    yield conn
                except psycopg.OperationalError as exc:
                    if conn.broken or conn.closed:
                        raise Unavailable(f"the database at {redact(self.url)} went away during the request "
                                          f"({type(exc).__name__}); nothing was done: retry") from exc
                    refused = refusal(exc, self.url)  # a full disk
                    if refused is None:
                        raise
                    self._refused = (refused, time.monotonic())
                    raise refused from exc
                except psycopg.DataError as exc:
                    if "cannot contain NUL" not in str(exc):  # psycopg's own refusal, before anything is sent
                        raise
                    # a text holding NUL, which PostgreSQL cannot hold nor compare, that no service refused first:
                    # the caller's argument, never an internal error (a service names the field where it can)
                    raise InvalidArgument("text", "contains a NUL character (\\x00), which no text may hold "
                                                  "here; remove it") from exc
                except psycopg.Error as exc:
                    refused = refusal(exc, self.url)  # a read-only database
                    if refused is None:
                        raise
                    self._refused = (refused, time.monotonic())
                    raise refused from exc
        except PoolTimeout as exc:
            raise Unavailable(f"the database at {redact(self.url)} gave no connection in {POOL_TIMEOUT_S:.0f} s "
                              "(it is down or every connection is busy); nothing was done: retry") from exc

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """A transaction: committed on success, rolled back on error. Nested calls join the outer one."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            self._write_held()
            yield conn
            return
        with self._pooled() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None
        if self._refused is not None and self._refused[0].cause == "read-only":
            self._refused = None  # a write committed: the database is writable again

    def own_connection(self) -> psycopg.Connection:
        """An autocommit connection outside the pool, for a step a transaction's holder must not wait for the
        pool to give (other threads may hold every pooled connection while they wait for that transaction's
        locks). The caller closes it. A connection not made is Unavailable (503), its reason scrubbed: libpq's text
        names hosts as it read the URL, a mistyped password's pieces among them (url_secrets.py)."""
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                                   application_name="notewell")
        except psycopg.OperationalError as exc:
            raise Unavailable(f"the database at {redact(self.url)} gave no connection for a load's own step "
                              f"({reason(exc, self.url)}); retry") from None

    def hold_writes(self, flush: Callable[[], None] | None) -> None:
        """Writes the thread's transaction holds back (a writer's buffered rows), written by ``flush``
        before anything else uses its connection, so that every read inside it still sees them."""
        self._local.flush = flush

    def _write_held(self) -> None:
        flush: Callable[[], None] | None = getattr(self._local, "flush", None)
        if flush is not None:
            flush()

    def close(self) -> None:
        self.pool.close()


def lock_key(name: str) -> int:
    """A stable signed 64-bit key for pg_advisory_xact_lock."""
    return zlib.crc32(name.encode()) - (1 << 31)
