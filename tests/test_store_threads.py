"""Connections do not outlive the threads that used them (issue 14, defect 4).

The server answers each call in a worker thread, and idle workers retire; on the code before the fix
each retired thread left its SQLite connection open (6 cycles: 2 to 92 open index.db handles). Both
backends: PostgreSQL shares a bounded pool, whatever the threads do.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from notewell.store import Store, open_store

THREADS_PER_BURST = 12
BURSTS = 6


def _burst(store: Store) -> None:
    """Like a burst of tool calls: fresh threads, each reading the store once, then retiring."""
    threads = [threading.Thread(target=store.documents.vault_projects) for _ in range(THREADS_PER_BURST)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _open_handles(db: Path) -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(db):
                count += 1
        except OSError:
            continue
    return count


def test_sqlite_connections_close_when_their_threads_retire(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    store = open_store(str(db))
    try:
        store.documents.vault_projects()
        baseline = _open_handles(db)
        for _ in range(BURSTS):
            _burst(store)
        # SQLite keeps a closed connection's descriptor while another connection of the process holds a
        # lock on the file, and reuses it for the next connection: at most one per concurrent thread.
        assert _open_handles(db) <= baseline + THREADS_PER_BURST
        store.documents.vault_projects()  # this thread's connection still works
    finally:
        store.close()
    assert _open_handles(db) == 0


def test_postgres_connections_stay_within_the_pool(pg_url: str) -> None:
    from notewell.store.postgres import PostgresStore

    store = open_store(pg_url)
    assert isinstance(store, PostgresStore)
    try:
        pool = store.db.pool
        for _ in range(BURSTS):
            _burst(store)
        assert pool.get_stats()["pool_size"] <= pool.max_size
    finally:
        store.close()
