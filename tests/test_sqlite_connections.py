"""Each thread's SQLite connection is bounded: its own page cache, no memory map, and one soft heap limit for
the whole process, so that many worker threads do not each hold a full cache (docs/performance.md, "A
server's memory")."""

from __future__ import annotations

import threading
from pathlib import Path

from notewell.store.sqlite.database import HEAP_LIMIT_BYTES, PAGE_CACHE_KIB, SqliteDatabase


def test_every_thread_connection_is_bounded(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "index.db")
    seen: list[tuple[int, int, int]] = []

    def read_pragmas() -> None:
        conn = db.conn
        seen.append(tuple(conn.execute(f"PRAGMA {name}").fetchone()[0]
                          for name in ("cache_size", "mmap_size", "soft_heap_limit")))

    read_pragmas()  # the store made first, as a server does before its workers start
    threads = [threading.Thread(target=read_pragmas) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [(-PAGE_CACHE_KIB, 0, HEAP_LIMIT_BYTES)] * 4
    assert 0 < HEAP_LIMIT_BYTES < 4 * PAGE_CACHE_KIB * 1024  # a few threads' caches, not one per thread
    db.close()
