"""PostgreSQL's narrow table of the live memories' stems (store/postgres/live_stems.py), which the tolerant search
walks: a trigger keeps it equal to the live memories through every write (add, supersede, forget, restore, move,
a private memory, a working one), a load fills it once at the end, a store made before it fills it as it opens;
and the tolerant search over it answers as SQLite's does after the same writes."""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from conftest import run_cli
from notewell.records.memories import MemoryInput
from notewell.store import Store, open_store
from notewell.store.postgres import lexemes, live_stems
from test_word_rank import NOW, _answers, _memory, _queries, _same

LATER = "2026-11-30T12:00:00.000000Z"
WAIT_S = 20.0


def _held(pg_url: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The narrow table's rows, and what it should hold: the live memories' columns."""
    columns = ", ".join(live_stems.COLUMNS)
    with psycopg.connect(pg_url) as conn:
        table = conn.execute(f"SELECT {columns} FROM {live_stems.TABLE} ORDER BY id").fetchall()
        live = conn.execute(f"SELECT {columns} FROM memories WHERE {live_stems.LIVE} ORDER BY id").fetchall()
    return table, live


def _assert_kept(pg_url: str) -> int:
    table, live = _held(pg_url)
    assert table == live
    return len(table)


def _input(ref: str, content: str, **changes: Any) -> MemoryInput:
    fields: dict[str, Any] = dict(ref=ref, project="apollo", author_user_id="u1", author_token_id=None,
                                  memory_type="durable", path="ops", title="a title", content=content, tags=("deploy",),
                                  content_hash=hashlib.sha256(content.encode()).hexdigest(), created=NOW)
    fields.update(changes)
    return MemoryInput(**fields)


def _writes(store: Store, check: Any) -> None:
    """Every kind of write a memory gets, ``check`` called after each."""
    rng = random.Random(3)
    for i in range(30):
        store.memories.add(_memory(i, rng, "apollo" if i % 3 else "hermes"))
    check()
    store.memories.add(_input("mem_priv", "release train private notes", private_to="u1"))
    store.memories.add(_input("mem_work", "release train working notes", memory_type="working",
                              expires_at="2026-12-01T00:00:00.000000Z", author_token_id="tok1"))
    check()
    store.memories.add(_input("mem_new", "release train supersedes the first"), supersedes="mem_0001")
    check()
    assert store.memories.forget("mem_0002", "u1", "test", LATER) is not None
    check()
    assert store.memories.forget("mem_new", "u1", "test", LATER) is not None  # superseding, then forgotten
    check()
    assert store.memories.restore("mem_0002", LATER) is not None
    check()
    assert store.memories.move("mem_0003", "finance/moved", "moved release train content", "h-moved")
    check()
    assert store.memories.move("mem_0002", "ops/deploy", "moved again", "h-again")
    check()
    assert store.memories.forget("mem_0004", "u1", "test", LATER) is not None
    assert store.memories.move("mem_0004", "ops", "moved while forgotten", "h-forgotten")  # stays out
    check()


@pytest.fixture()
def pg_store(pg_url: str) -> Iterator[Store]:
    store = open_store(pg_url)
    try:
        yield store
    finally:
        store.close()


def test_the_trigger_keeps_the_live_memories_through_every_write(pg_url: str, pg_store: Store) -> None:
    counts: list[int] = []
    _writes(pg_store, lambda: counts.append(_assert_kept(pg_url)))
    assert counts == [30, 32, 32, 31, 30, 31, 31, 31, 30]  # superseded, forgotten and moved rows in and out


def test_a_write_of_another_column_leaves_the_row_as_it_was(pg_url: str, pg_store: Store) -> None:
    """A write that changes nothing the table holds (a memory's text, its updated time) writes no row there."""
    pg_store.memories.add(_input("mem_a", "first words"))
    with psycopg.connect(pg_url) as conn:
        before = conn.execute(f"SELECT xmin::text FROM {live_stems.TABLE}").fetchone()
        conn.execute("UPDATE memories SET updated = %s, content = 'other words'", (LATER,))
        conn.commit()
        assert conn.execute(f"SELECT xmin::text FROM {live_stems.TABLE}").fetchone() == before
    _assert_kept(pg_url)


def test_a_tolerant_search_answers_as_sqlite_after_the_writes(pg_url: str, pg_store: Store, tmp_path: Path) -> None:
    lite = open_store(str(tmp_path / "index.db"))
    try:
        for store in (lite, pg_store):
            _writes(store, lambda: None)
        queries = [*_queries(random.Random(5)), "release train", "moved", "moved release"]
        _same(_answers(lite, queries), _answers(pg_store, queries), queries)
        found = {h.record.ref for h in pg_store.memories.tolerant(_query(["moved"]))}
        assert found == {"mem_0002", "mem_0003"}  # moved, and back in search; the forgotten mem_0004 is not
    finally:
        lite.close()


def _query(terms: list[str]) -> Any:
    from notewell.records.memories import MemoryQuery
    return MemoryQuery(["apollo", "hermes"], terms, NOW, 20, viewer="u1", explain=False)


def _written_sqlite(tmp_path: Path) -> Path:
    """A SQLite store that had every kind of write (``_writes``), closed."""
    source = tmp_path / "index.db"
    lite = open_store(str(source))
    try:
        _writes(lite, lambda: None)
    finally:
        lite.close()
    return source


def test_a_load_fills_the_table_once_and_the_trigger_keeps_it_after(pg_url: str, tmp_path: Path) -> None:
    source = _written_sqlite(tmp_path)
    result = run_cli("migrate", "--from", f"sqlite:{source}", "--to", pg_url)
    assert result.exit_code == 0, result.output
    assert _assert_kept(pg_url) == 30
    store = open_store(pg_url)
    try:
        store.memories.add(_input("mem_after", "written after the load"))
        assert store.memories.forget("mem_0005", "u1", "test", LATER) is not None
        assert _assert_kept(pg_url) == 30
    finally:
        store.close()


def test_a_store_made_before_the_table_fills_it_as_it_opens(pg_url: str, pg_store: Store) -> None:
    _writes(pg_store, lambda: None)
    pg_store.close()
    _as_before_the_table(pg_url)
    reopened = open_store(pg_url)
    try:
        assert _assert_kept(pg_url) == 30
        assert {h.record.ref for h in reopened.memories.tolerant(_query(["moved"]))} == {"mem_0002", "mem_0003"}
    finally:
        reopened.close()


def _as_before_the_table(pg_url: str) -> None:
    """The store as the version before the table left it (its last migration step of the memories undone)."""
    with psycopg.connect(pg_url) as conn:
        version = conn.execute("SELECT max(version) FROM schema_migrations WHERE component = 'memories'").fetchone()
        conn.execute(f"DROP TABLE {live_stems.TABLE}")
        conn.execute(f"DROP FUNCTION {live_stems.FUNCTION} CASCADE")
        conn.execute("DELETE FROM schema_migrations WHERE component = 'memories' AND version = %s", version)


def _waits_on_a_lock(pg_url: str, other_than: int) -> bool:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                           " AND wait_event_type = 'Lock' AND pid <> %s", (other_than,)).fetchone()
    return row is not None and row[0] > 0


def test_an_older_servers_write_while_the_table_is_made_is_kept(pg_url: str, pg_store: Store) -> None:
    """A memory an older server (no trigger yet) writes, and one it forgets, in a transaction that commits while
    a newer process makes the table: both are as the memories say once the store is open. The step keeps the
    memories' writers off from its fill to its trigger; on 926f705 the fill read the memories before that write
    committed and the trigger came after it, so the written memory was never found by a tolerant search and the
    forgotten one still was."""
    for i in range(3):
        pg_store.memories.add(_input(f"mem_{i}", f"release train notes {i}"))
    pg_store.close()
    _as_before_the_table(pg_url)
    fields = ("late title", "release train written late", '["deploy"]', "ops")
    with psycopg.connect(pg_url) as writer:  # the older server's transaction, open while the store opens
        writer.execute(
            "INSERT INTO memories (ref, project, author_user_id, memory_type, path, title, content, tags,"
            " content_hash, created, updated, words, stems) VALUES ('mem_late', 'apollo', 'u1', 'durable', %s, %s,"
            " %s, %s, 'h-late', %s, %s, %s::tsvector, %s::tsvector)",
            (fields[3], fields[0], fields[1], fields[2], NOW, NOW, lexemes.tsvector("words", *fields),
             lexemes.tsvector("stems", *fields)))
        writer.execute("UPDATE memories SET deleted_at = %s, deleted_by = 'u1' WHERE ref = 'mem_1'", (LATER,))
        writer_pid = writer.info.backend_pid
        opened: dict[str, Store] = {}
        failed: list[BaseException] = []

        def open_it() -> None:
            try:
                opened["store"] = open_store(pg_url)
            except BaseException as exc:  # said by the test below
                failed.append(exc)

        opening = threading.Thread(target=open_it)
        opening.start()
        deadline = time.monotonic() + WAIT_S
        while not _waits_on_a_lock(pg_url, writer_pid):  # the migration, waiting on the writer's lock
            assert opening.is_alive() and time.monotonic() < deadline
            time.sleep(0.01)
        writer.commit()
        opening.join(WAIT_S)
    assert not failed and "store" in opened, failed
    store = opened["store"]
    try:
        assert _assert_kept(pg_url) == 3
        found = {h.record.ref for h in store.memories.tolerant(_query(["release"]))}
        assert found == {"mem_0", "mem_2", "mem_late"}
    finally:
        store.close()


def test_notewell_repair_fills_the_table_again(pg_url: str, pg_store: Store, tmp_path: Path) -> None:
    """A table out of step with the memories (written with its trigger off: a hand-run load, a session in
    replica mode) is made again by `notewell repair`, and kept from then on; on 926f705 repair ran REINDEX alone,
    which builds its index again from its own rows, so a forgotten memory stayed found and a moved one lost."""
    _writes(pg_store, lambda: None)
    pg_store.close()
    with psycopg.connect(pg_url) as conn:
        conn.execute("SET session_replication_role = replica")  # the trigger does not fire
        conn.execute("UPDATE memories SET deleted_at = %s, deleted_by = 'u1' WHERE ref = 'mem_0003'", (LATER,))
        conn.execute("UPDATE memories SET deleted_at = NULL, deleted_by = NULL WHERE ref = 'mem_0004'")
    with pytest.raises(AssertionError):
        _assert_kept(pg_url)
    vault = tmp_path / "vault"
    vault.mkdir()
    built = _index_file(pg_url)
    repaired = run_cli("repair", "--db", pg_url, "--vault", str(vault))
    assert repaired.exit_code == 0, repaired.output
    assert _assert_kept(pg_url) == 30
    assert _index_file(pg_url) != built  # its word index built again too (REINDEX: damage in its own pages)
    store = open_store(pg_url)
    try:
        assert {h.record.ref for h in store.memories.tolerant(_query(["moved"]))} == {"mem_0002", "mem_0004"}
        store.memories.add(_input("mem_after", "moved after the repair"))  # the trigger keeps it again
        assert _assert_kept(pg_url) == 31
    finally:
        store.close()


def _index_file(pg_url: str) -> int:
    """The file of the table's word index (a REINDEX writes a new one)."""
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT relfilenode::bigint FROM pg_class WHERE oid = %s::regclass",
                           (f"{live_stems.TABLE}_stems",)).fetchone()
    assert row is not None
    return int(row[0])


def _index_oid(pg_url: str) -> int:
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT %s::regclass::oid::bigint", (f"{live_stems.TABLE}_stems",)).fetchone()
    assert row is not None
    return int(row[0])


def test_a_merge_into_a_store_in_use_keeps_the_index_searches_read(pg_url: str, pg_store: Store,
                                                                   tmp_path: Path) -> None:
    """`notewell import --merge` into a store holding memories makes the table equal to them by the rows that
    differ, with its word index kept: on babfc84 it dropped and built the index again, and every tolerant search
    of a server running meanwhile waited for the import's end. (Into an empty store it is built once, after.)"""
    source = _written_sqlite(tmp_path)
    exported = run_cli("export", str(tmp_path / "e"), "--db", str(source))
    assert exported.exit_code == 0, exported.output
    for i, text in enumerate(["moved the gripper notes", "calibration of the arm", "release train day"]):
        pg_store.memories.add(_input(f"mem_here_{i}", text, project="zephyr"))
    index = _index_oid(pg_url)
    merged = run_cli("import", str(tmp_path / "e"), "--db", pg_url, "--merge")
    assert merged.exit_code == 0, merged.output
    assert _assert_kept(pg_url) == 33
    assert _index_oid(pg_url) == index
    found = {h.record.ref for h in pg_store.memories.tolerant(_query(["moved"]))}
    assert found == {"mem_0002", "mem_0003"}
    pg_store.memories.add(_input("mem_after", "moved after the merge"))  # the trigger keeps it again
    assert _assert_kept(pg_url) == 34
