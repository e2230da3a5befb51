"""The sharded trigram index: a fresh store is built in parallel and copied in; later syncs write in place."""

from __future__ import annotations

import gc
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.conftest import IndexedVault, make_vault

from notewell.records.documents import DocumentInput, Scope
from notewell.search.literals import plain_plan
from notewell.store.sqlite import trigram_shards
from notewell.store.sqlite.trigram_shards import SHARDS, shard_name

FILES = {f"p{n % 3}/doc{n:03}.md": f"# Doc {n}\n\nshared words\nunique token zq{n:03}x\n" for n in range(60)}


def _integrity(db: str) -> None:
    conn = sqlite3.connect(db)
    try:
        for shard in range(SHARDS):
            conn.execute(f"INSERT INTO {shard_name(shard)} ({shard_name(shard)}) VALUES ('integrity-check')")
    finally:
        conn.close()


def _indexed_regions(db: str, text: str) -> int:
    """How many regions the shards' index itself holds all of ``text``'s trigrams for (a search reads each
    candidate's text, so a stale index entry would not show in its answer)."""
    every_trigram = " ".join(f'"{text[i:i + 3]}"' for i in range(len(text) - 2))
    conn = sqlite3.connect(db)
    try:
        return sum(conn.execute(f"SELECT count(*) FROM {shard_name(shard)} WHERE {shard_name(shard)} MATCH ?",
                                (every_trigram,)).fetchone()[0] for shard in range(SHARDS))
    finally:
        conn.close()


def _paths(indexed: IndexedVault, query: str) -> list[str]:
    return [m.vault_path for m in indexed.search(query, all_lines=False, limit=100).matches]


def test_parallel_build_finds_every_document(tmp_path: Path, index_vault: Callable[[Path], IndexedVault]) -> None:
    indexed = index_vault(make_vault(tmp_path, FILES))
    assert indexed.report.added == len(FILES)
    _integrity(indexed.db)
    assert len(_paths(indexed, "shared words")) == len(FILES)
    for n in (0, 1, 31, 59):
        assert _paths(indexed, f"zq{n:03}x") == [f"p{n % 3}/doc{n:03}.md"]
    assert not list(tmp_path.rglob("*.shard*.tmp"))
    with sqlite3.connect(indexed.db) as conn:  # the merge settings of a fill are not left to later syncs
        for shard in range(SHARDS):
            config = dict(conn.execute(f"SELECT k, v FROM {shard_name(shard)}_config WHERE k LIKE '%merge'"))
            assert config == {"automerge": 4, "crisismerge": 16}


def test_connection_that_searched_before_the_build_sees_it(tmp_path: Path,
                                                           index_vault: Callable[[Path], IndexedVault]) -> None:
    """FTS5 caches an index's structure per connection; the build must not leave this thread's stale."""
    vault = make_vault(tmp_path, {"p0/first.md": "nothing yet\n"})
    indexed = index_vault(vault)
    (vault / "p0" / "first.md").unlink()
    assert indexed.sync().removed == 1
    conn = indexed.store.documents.db.conn  # type: ignore[attr-defined]
    for shard in range(SHARDS):  # this thread's connection reads the (empty) shards: FTS5 caches them
        assert conn.execute(f"SELECT rowid FROM {shard_name(shard)} WHERE {shard_name(shard)} MATCH '\"zq0\"'"
                            ).fetchall() == []
    make_vault(tmp_path, FILES)
    assert indexed.sync().added == len(FILES)  # the store was empty again: a parallel build
    assert _paths(indexed, "zq007x") == ["p1/doc007.md"]
    (vault / "p1" / "doc007.md").write_text("# Doc 7\n\nchanged zq999x\n")
    assert indexed.sync().changed == 1  # in place, on the shards the build copied in
    assert _paths(indexed, "zq007x") == []
    assert _paths(indexed, "zq999x") == ["p1/doc007.md"]
    _integrity(indexed.db)


def test_failed_build_leaves_the_store_empty_and_no_scratch_files(
    tmp_path: Path, index_vault: Callable[[Path], IndexedVault]
) -> None:
    indexed = index_vault(make_vault(tmp_path, {"p0/seed.md": "seed\n"}))
    (tmp_path / "vault" / "p0" / "seed.md").unlink()
    indexed.sync()
    with pytest.raises(RuntimeError, match="stop here"), indexed.store.documents.writer() as writer:
        for n in range(10):
            writer.upsert(DocumentInput("p0", f"d{n}.md", "t", "", 5, 1, f"sha{n}", f"text zq{n:03}x\n"))
        raise RuntimeError("stop here")
    assert indexed.store.documents.candidates(Scope(projects=["p0"]), None) == []
    assert not list(tmp_path.rglob("*.shard*.tmp"))
    _integrity(indexed.db)


@pytest.mark.parametrize(("rows", "text_bytes"), [(1, 1 << 20), (3, 1 << 20), (1000, 40), (1000, 1 << 20)])
def test_a_build_rewriting_documents_keeps_each_shards_rows_in_order_at_any_batch_size(
    tmp_path: Path, index_vault: Callable[[Path], IndexedVault], monkeypatch: pytest.MonkeyPatch,
    rows: int, text_bytes: int,
) -> None:
    """Rows reach a shard's thread in batches (by count or by bytes of text); a document written twice in one
    build deletes its first regions' rows before adding the new ones, in that order, whatever the batches."""
    monkeypatch.setattr(trigram_shards, "BATCH_ROWS", rows)
    monkeypatch.setattr(trigram_shards, "BATCH_BYTES", text_bytes)
    indexed = index_vault(make_vault(tmp_path, {"p0/seed.md": "seed\n"}))
    (tmp_path / "vault" / "p0" / "seed.md").unlink()
    indexed.sync()  # empty again: the next writer builds in parallel
    with indexed.store.documents.writer() as writer:
        assert writer.build is not None
        for n in range(12):
            writer.upsert(DocumentInput("p0", f"d{n:02}.md", "t", "", 5, 1, f"sha{n}", f"first zq{n:03}a\n"))
        for n in range(0, 12, 2):  # half of them rewritten, each a delete of the old rows and an insert
            writer.upsert(DocumentInput("p0", f"d{n:02}.md", "t", "", 5, 2, f"sha{n}b", f"second zq{n:03}b\n"))
        writer.delete(("p0", "d11.md"))
    _integrity(indexed.db)
    for n in range(12):
        assert _paths(indexed, f"zq{n:03}a") == ([] if n % 2 == 0 or n == 11 else [f"p0/d{n:02}.md"])
        assert _paths(indexed, f"zq{n:03}b") == ([f"p0/d{n:02}.md"] if n % 2 == 0 else [])
        assert _indexed_regions(indexed.db, f"zq{n:03}a") == (0 if n % 2 == 0 or n == 11 else 1)
        assert _indexed_regions(indexed.db, f"zq{n:03}b") == (1 if n % 2 == 0 else 0)
    assert len(_paths(indexed, "first")) == 5 and len(_paths(indexed, "second")) == 6


def _wait_until_blocked_at_begin(thread: threading.Thread, seconds: float = 30) -> None:
    """Poll the thread's stack until it stands in ``_immediate`` (BEGIN IMMEDIATE, which blocks while
    another connection holds the write lock): it has made its emptiness check and is now waiting."""
    deadline = time.monotonic() + seconds
    # No garbage collection while sys._current_frames() runs: CPython 3.11 can collect inside it, holding its
    # lock on the threads, and a finaliser there (a SQLite connection closed) deadlocked this test with the
    # thread it watches (seen once in CI, both stacks waiting on a lock).
    collecting = gc.isenabled()
    gc.disable()
    try:
        while time.monotonic() < deadline:
            frame = sys._current_frames().get(thread.ident or -1)
            while frame is not None:
                if frame.f_code.co_name == "_immediate":
                    return
                frame = frame.f_back
            time.sleep(0.005)
    finally:
        if collecting:
            gc.enable()
    raise AssertionError("the second indexer never reached BEGIN IMMEDIATE")


def test_a_store_filled_while_waiting_for_the_lock_is_written_in_place(tmp_path: Path) -> None:
    """Two first indexings at once: the second sees an empty store, waits for the write lock, finds
    documents once it holds it, and writes in place instead of replacing the index the first built."""
    from notewell.store.sqlite import SqliteStore

    db = tmp_path / "index.db"
    first, second = SqliteStore.open(db), SqliteStore.open(db)
    modes: list[bool] = []

    def second_indexer() -> None:
        with second.documents.writer() as writer:  # checks (empty), then waits at BEGIN IMMEDIATE
            modes.append(writer.build is None)
            writer.upsert(DocumentInput("p", "b.md", "b", "", 12, 1, "sha-b", "bravo zqb02x\n"))

    try:
        with first.documents.writer() as writer:
            assert writer.build is not None  # the first: a parallel build
            writer.upsert(DocumentInput("p", "a.md", "a", "", 12, 1, "sha-a", "alpha zqa01x\n"))
            waiting = threading.Thread(target=second_indexer)
            waiting.start()
            _wait_until_blocked_at_begin(waiting)  # the second indexer now waits for the lock this one holds
        waiting.join(timeout=60)
        assert modes == [True]  # decided under the lock: in place
        for token, path in (("zqa01x", "a.md"), ("zqb02x", "b.md")):
            found = first.documents.candidates(Scope(projects=["p"]), plain_plan(token))
            assert [c.path for c in found] == [path]
        _integrity(str(db))
    finally:
        first.close()
        second.close()
