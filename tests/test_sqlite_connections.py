"""Each thread's SQLite connection is bounded: its own page cache, no memory map, and one soft heap limit for
the whole process, so that many worker threads do not each hold a full cache (docs/performance.md, "A
server's memory")."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from conftest import make_vault
from notewell.indexer import sync
from notewell.records.documents import Scope
from notewell.runtime import open_runtime
from notewell.search.engine import SearchRequest
from notewell.store.sqlite import database
from notewell.store.sqlite.database import HEAP_LIMIT_BYTES, PAGE_BYTES, PAGE_CACHE_KIB, SqliteDatabase


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


def _page_size(path: Path) -> int:
    db = SqliteDatabase(path)
    try:
        size: int = db.conn.execute("PRAGMA page_size").fetchone()[0]
        return size
    finally:
        db.close()


def _found(vault: Path, db: Path, text: str) -> list[str]:
    rt = open_runtime(str(vault), str(db))
    try:
        sync(rt.settings, rt.store)
        found = rt.engine.search(SearchRequest(query=text, scope=Scope(projects=["notes"])))
        return [f"{hit.project}/{hit.path}" for hit in found.matches]
    finally:
        rt.close()


def test_a_new_store_has_large_pages_and_an_older_store_keeps_its_own(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """16 KB pages for a store made now (fewer pages through the WAL and its checkpoint in a build); a store
    an older version made with 4 KB pages keeps them, and is read, searched and written as before."""
    vault = make_vault(tmp_path, {"notes/a.md": "# A\nthe levenshtein distance\n", "notes/b.md": "# B\nnothing\n"})
    assert _found(vault, tmp_path / "new.db", "levenshtein") == ["notes/a.md"]
    assert _page_size(tmp_path / "new.db") == PAGE_BYTES == 16_384

    with monkeypatch.context() as older:
        older.setattr(database, "PAGE_BYTES", 4096)
        assert _found(vault, tmp_path / "old.db", "levenshtein") == ["notes/a.md"]
    (vault / "notes" / "c.md").write_text("# C\nlevenshtein again\n", encoding="utf-8")
    assert _found(vault, tmp_path / "old.db", "levenshtein") == ["notes/a.md", "notes/c.md"]
    assert _page_size(tmp_path / "old.db") == 4096


def test_a_connection_left_inside_a_dead_transaction_is_never_joined_again(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """When even the ROLLBACK after a failed write fails (the disk full, the file read-only), the connection stays
    in its transaction, and the thread's next transaction() joined it: its writes were never committed."""
    db = SqliteDatabase(tmp_path / "index.db")
    with db.transaction() as conn:
        conn.execute("CREATE TABLE t (x INTEGER)")
    monkeypatch.setattr(database, "_roll_back", lambda conn: None)  # a ROLLBACK that failed
    with pytest.raises(RuntimeError), db.transaction() as conn:
        conn.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError("the write failed")
    monkeypatch.undo()
    assert not db.conn.in_transaction  # a new connection for this thread
    with db.transaction() as conn:
        conn.execute("INSERT INTO t VALUES (2)")
    other = SqliteDatabase(tmp_path / "index.db")  # another process's view: committed
    assert [r[0] for r in other.conn.execute("SELECT x FROM t")] == [2]
    other.close()
    db.close()
