"""A SQLite store's damage, found and mended: `notewell doctor` checks, `notewell repair` rebuilds.

Damage shows as SQLite's "database disk image is malformed". Most of it can be mended in place, because
every full-text index of the store is derived from rows the store keeps: the documents' trigram shards from
``document_regions``, the memories' word indexes from ``memories``, the session pieces' index from its own
content table. Rebuilding those is index_rebuild.py's. Damage to the tables themselves (what ``PRAGMA quick_check``
finds) cannot be rebuilt from anything: a backup, or an export into a new store, is the way out.

The checks read every page, which takes seconds per gigabyte: a budget stops them (SQLite's progress
handler interrupts the statement), and the report says what was left unchecked.
"""

from __future__ import annotations

import sqlite3
import time

from notewell.errors import StoreCannotWrite, StoreDamaged, Unavailable
from notewell.records.integrity import Integrity
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.trigram_shards import SHARDS, shard_name

# Each full-text index, and what it indexes (doctor names it so)
INDEXES: dict[str, str] = {
    **{shard_name(s): "the documents' trigram index" for s in range(SHARDS)},
    "memory_words": "the memories' word index",
    "memory_stems": "the memories' stem index",
    "brain_session_words": "the coding sessions' word index",
}
_PROGRESS_STEPS = 10_000  # SQLite virtual machine steps between two looks at the clock
_LOCK_WAIT_MS = 1000  # how long an index's check waits for another process's write lock


def check(db: SqliteDatabase, budget_s: float | None) -> Integrity:
    """The tables' ``PRAGMA quick_check`` (a read), then each index's FTS5 integrity-check, within ``budget_s``
    in all (None: no limit). Nothing is changed, but FTS5's check is an INSERT: it takes the store's write lock
    while it runs (a server's writes wait meanwhile); an index whose lock another process holds for a second (or
    for what is left of the budget) is left unchecked (``busy``) rather than waited for."""
    conn = db.conn
    found = Integrity()
    deadline = None if budget_s is None else time.monotonic() + budget_s
    parts = ["tables", *(name for name in INDEXES if _exists(conn, name))]
    waited_ms = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    if deadline is not None:
        conn.set_progress_handler(lambda: time.monotonic() > deadline, _PROGRESS_STEPS)
    try:
        for part in parts:
            left_ms = _LOCK_WAIT_MS if deadline is None else int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                found.unchecked.append(part)
                continue
            conn.execute(f"PRAGMA busy_timeout={min(_LOCK_WAIT_MS, left_ms)}")
            try:
                problem = _problem(conn, "PRAGMA quick_check(5)" if part == "tables"
                                   else f"INSERT INTO {part} ({part}) VALUES ('integrity-check')")
            except sqlite3.OperationalError as exc:
                if "interrupted" not in str(exc):
                    raise
                found.unchecked.append(part)
                continue
            except StoreCannotWrite:  # FTS5's integrity-check is an INSERT: refused on a read-only store or full disk
                found.unwritable.append(part)
                continue
            except Unavailable:  # another process writes: its write lock is not waited for
                found.busy.append(part)
                continue
            if problem is not None:
                found.damaged[part] = problem
    finally:
        conn.execute(f"PRAGMA busy_timeout={int(waited_ms)}")
        if deadline is not None:
            conn.set_progress_handler(None, 0)
    return found


def _exists(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def _problem(conn: sqlite3.Connection, sql: str) -> str | None:
    """What the check ``sql`` found wrong (None: nothing). An index's integrity-check answers no row and fails
    on damage; quick_check answers "ok" or a row per fault. An interruption (the budget) is raised."""
    try:
        rows = [r[0] for r in conn.execute(sql).fetchall()]
    except StoreDamaged as exc:
        return exc.reason
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and "interrupted" in str(exc):
            raise
        return str(exc)
    return None if rows in ([], ["ok"]) else "; ".join(map(str, rows))
