"""A first build on PostgreSQL loads its regions into a table of their own and builds the indexes once
(store/postgres/region_load.py): it answers as a build kept up row by row does, readers meanwhile read the
old table without waiting (the swap too gives way to them), a build that fails or dies leaves the store as
it was and nothing behind, and a table an operator changed keeps its indexes up row by row instead."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest

from conftest import IndexedVault, index_into, make_vault
from notewell.config import Settings
from notewell.indexer import sync
from notewell.store import regions
from notewell.store.factory import open_store
from notewell.store.postgres import region_copy, region_load

pytestmark = pytest.mark.usefixtures("pg_cluster")

FILES: dict[str, str | bytes] = {
    **{f"alpha/notes/n{n:03}.md": f"# Note {n}\n\nthe levenshtein distance {n % 7}\nqz 中文 [[n{(n + 1) % 40:03}]]\n"
       for n in range(40)},
    **{f"beta/src/m{n:02}.txt": f"def f_{n}(x):\n    return x * {n}  # ζq\n" * (1 + n % 4) for n in range(30)},
    "beta/docs/日本語.md": "日本語の文書です。検索できる。\n",
}
QUERIES = [("levenshtein", False), ("qz", False), ("中文", False), ("ζq", False), ("the", False), ("x", False),
           ("検索", False), (r"f_\d+\(x\)", True), (r"return x \* 1\d", True)]


def _answers(indexed: IndexedVault) -> list[list[tuple[str, str, int]]]:
    return [[(m.project, m.path, m.line) for m in indexed.search(query, regex=regex, all_lines=True).matches]
            for query, regex in QUERIES]


def _index_shape(url: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The regions' indexes (name, definition) and any load schema left, as the server lists them."""
    with psycopg.connect(url) as conn:
        indexes = conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'document_regions'"
                               " ORDER BY indexname").fetchall()
        schemas = [name for (name,) in conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE '%load%'")]
    return indexes, schemas


def _loading(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A COPY's worth after four regions (a long note in several): the vault's build loads apart as a large one
    does. Returns what became of each load that began ("begun", or "refused" by the server)."""
    monkeypatch.setattr(region_copy, "HELD_ROWS", 4)
    monkeypatch.setattr(regions, "REGION_BYTES", 64)
    begun: list[str] = []
    begin = region_load.RegionLoad.begin

    def spied(load: region_load.RegionLoad) -> None:
        begin(load)
        begun.append("begun" if load.begun else "refused")
    monkeypatch.setattr(region_load.RegionLoad, "begin", spied)
    return begun


def test_a_loaded_build_answers_as_one_kept_up_row_by_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          pg_url: str, plain_pg_url: str) -> None:
    vault = make_vault(tmp_path, FILES)
    begun = _loading(monkeypatch)
    with monkeypatch.context() as kept_up:
        kept_up.setattr(region_load.RegionLoad, "for_writer", classmethod(lambda cls, *args: None))
        plain = index_into(vault, plain_pg_url)
    assert begun == []
    loaded = index_into(vault, pg_url)
    try:
        assert begun == ["begun"]
        assert loaded.report.added == plain.report.added == len(FILES)
        assert _answers(loaded) == _answers(plain)
        assert all(_answers(loaded))  # every query finds something
        backlinks = loaded.store.links.backlinks(("alpha", "notes/n005.md"), ["alpha"], 10)
        assert [link.source for link in backlinks] == [("alpha", "notes/n004.md")]
        indexes, schemas = _index_shape(pg_url)
        assert indexes == _index_shape(plain_pg_url)[0]  # the same indexes, by the same names, on the same table
        assert {name for name, _ in indexes} >= {"document_regions_trigrams", "document_regions_grams"}
        assert schemas == []  # the load's schema is gone

        # later syncs change the swapped-in table as any other (no load: it is not empty)
        (vault / "alpha/notes/n003.md").write_text("rewritten: a levenshtein automaton\n", encoding="utf-8")
        (vault / "beta/src/m01.txt").unlink()
        report = loaded.sync()
        assert (report.changed, report.removed) == (1, 1)
        plain.sync()
        assert _answers(loaded) == _answers(plain)
        assert len(begun) == 1
        assert [(m.project, m.path) for m in loaded.search("automaton").matches] == [("alpha", "notes/n003.md")]
    finally:
        loaded.runtime.close()
        plain.runtime.close()


def test_readers_read_the_old_regions_while_a_load_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        pg_url: str) -> None:
    reader = index_into(make_vault(tmp_path, {}, "empty"), pg_url)
    begun = _loading(monkeypatch)
    settings = replace(reader.runtime.settings, vault=make_vault(tmp_path, FILES))
    writer_store = open_store(pg_url)
    loading, resume = threading.Event(), threading.Event()
    added: list[int] = []

    def progress(done: int, total: int) -> None:
        if done > total // 2 and not loading.is_set():
            loading.set()
            assert resume.wait(30)

    build = threading.Thread(target=lambda: added.append(sync(settings, writer_store, progress).added))
    build.start()
    try:
        assert loading.wait(30)
        assert begun == ["begun"]
        # meanwhile, a reader finds the old (empty) regions at once
        found: list[object] = []
        search = threading.Thread(target=lambda: found.append(reader.search("levenshtein").matches))
        search.start()
        search.join(10)
        assert found == [[]], "the reader waited for the load"
        [schema] = _index_shape(pg_url)[1]  # the load's table, committed empty: its rows are the writer's
        with psycopg.connect(pg_url) as conn:
            assert conn.execute(f"SELECT count(*) FROM {schema}.document_regions").fetchone() == (0,)
    finally:
        resume.set()
        build.join(60)
    try:
        assert added == [len(FILES)]
        assert len(reader.search("levenshtein").matches) == 40
    finally:
        reader.runtime.close()
        writer_store.close()


def test_a_load_that_fails_leaves_the_store_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      pg_url: str) -> None:
    begun = _loading(monkeypatch)
    indexed = index_into(make_vault(tmp_path, {}, "empty"), pg_url)
    settings = replace(indexed.runtime.settings, vault=make_vault(tmp_path, FILES))

    def progress(done: int, total: int) -> None:
        if done > total // 2:
            raise RuntimeError("the machine stopped")

    try:
        with pytest.raises(RuntimeError):
            sync(settings, indexed.store, progress)
        assert len(begun) == 1
        indexes, schemas = _index_shape(pg_url)
        assert schemas == []
        assert "document_regions_trigrams" in {name for name, _ in indexes}
        assert indexed.store.documents.sizes()[0] == 0
        assert sync(settings, indexed.store).added == len(FILES)  # the next build loads
        assert (len(begun), _index_shape(pg_url)[1]) == (2, [])
        assert len(indexed.search("levenshtein").matches) == 40
    finally:
        indexed.runtime.close()


def test_a_role_that_may_not_create_a_schema_builds_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              pg_url: str) -> None:
    begun = _loading(monkeypatch)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DO $$ BEGIN CREATE ROLE nw_no_schemas LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        conn.execute("GRANT CREATE, USAGE ON SCHEMA public TO nw_no_schemas")  # tables, but no schema of its own
    limited = pg_url.replace("postgresql://postgres@", "postgresql://nw_no_schemas@")
    indexed = index_into(make_vault(tmp_path, FILES), limited)
    try:
        assert indexed.report.added == len(FILES)
        assert begun == ["refused"]  # asked once, then kept up row by row in the same transaction
        assert len(indexed.search("levenshtein").matches) == 40
        assert _index_shape(pg_url)[1] == []
    finally:
        indexed.runtime.close()


def _vault_settings(tmp_path: Path, url: str) -> tuple[IndexedVault, Settings]:
    """An indexed empty vault on ``url`` (its store open) and the settings of a full one to build next."""
    indexed = index_into(make_vault(tmp_path, {}, "empty"), url)
    return indexed, replace(indexed.runtime.settings, vault=make_vault(tmp_path, FILES))


@pytest.mark.parametrize("change", [
    "ALTER TABLE document_regions OWNER TO nw_other",
    "GRANT SELECT ON document_regions TO nw_other",
    "ALTER TABLE document_regions SET (fillfactor = 90)",
    "CREATE STATISTICS regions_lines (ndistinct) ON id, first_line FROM document_regions",
    "ALTER TABLE document_regions ALTER COLUMN first_line SET STATISTICS 500",
    "COMMENT ON TABLE document_regions IS 'kept by the operator'",
    "CREATE VIEW region_lines AS SELECT id, first_line FROM document_regions",
    "CREATE FUNCTION region_count() RETURNS bigint LANGUAGE sql"
    " BEGIN ATOMIC SELECT count(*) FROM document_regions; END",
    "CREATE TABLE region_archive (r document_regions)",
    "ALTER TABLE document_regions REPLICA IDENTITY FULL",
    "GRANT SELECT (id) ON document_regions TO nw_other",
    "CREATE PUBLICATION regions_out FOR TABLE document_regions",
    "CLUSTER document_regions USING document_regions_pkey",
])
def test_a_table_an_operator_changed_keeps_its_indexes_up_row_by_row(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_url: str, change: str) -> None:
    begun = _loading(monkeypatch)
    indexed, settings = _vault_settings(tmp_path, pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DO $$ BEGIN CREATE ROLE nw_other; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        conn.execute(change)
        before = conn.execute("SELECT oid FROM pg_class WHERE relname = 'document_regions'").fetchone()
    try:
        assert sync(settings, indexed.store).added == len(FILES)
        assert begun == []  # no load: the swap would lose the change
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT oid FROM pg_class WHERE relname = 'document_regions'").fetchone() == before
        assert len(indexed.search("levenshtein").matches) == 40
    finally:
        indexed.runtime.close()


def test_the_swap_waits_for_a_long_reader_without_stopping_the_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_url: str) -> None:
    _loading(monkeypatch)
    monkeypatch.setattr(region_load, "LOCK_TRY", "50ms")
    indexed, settings = _vault_settings(tmp_path, pg_url)
    taking = threading.Event()
    swap = region_load.RegionLoad._swap

    def spied(load: region_load.RegionLoad) -> bool:
        taking.set()
        return swap(load)
    monkeypatch.setattr(region_load.RegionLoad, "_swap", spied)
    added: list[int] = []
    with psycopg.connect(pg_url) as long_reader:  # a backup's dump holds its tables' lock this way
        long_reader.execute("SELECT count(*) FROM document_regions").fetchone()
        build = threading.Thread(target=lambda: added.append(sync(settings, indexed.store).added))
        build.start()
        try:
            assert taking.wait(60)
            for _ in range(5):  # new readers keep reading while the writer asks in turns
                with psycopg.connect(pg_url, autocommit=True) as reader:
                    reader.execute("SET lock_timeout = '1s'")
                    assert reader.execute("SELECT count(*) FROM document_regions").fetchone() == (0,)
            assert build.is_alive()  # the writer still waits for the long reader
        finally:
            long_reader.rollback()  # the long reader ends: the swap goes through
            build.join(60)
    try:
        assert added == [len(FILES)]
        assert len(indexed.search("levenshtein").matches) == 40
    finally:
        indexed.runtime.close()


def test_a_writer_that_died_mid_load_leaves_a_schema_the_next_build_drops(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_url: str) -> None:
    """A dead writer (kill -9, or the database's crash) rolls its rows back; the schema and empty table it
    committed first stay, with their files, until the next writer drops them."""
    begun = _loading(monkeypatch)
    indexed, settings = _vault_settings(tmp_path, pg_url)

    def progress(done: int, total: int) -> None:
        if done > total // 2:
            raise RuntimeError("killed")

    try:
        with monkeypatch.context() as dying, pytest.raises(RuntimeError):
            dying.setattr(region_load.RegionLoad, "abandon", lambda load: None)  # died: it cleans nothing up
            sync(settings, indexed.store, progress)
        assert begun == ["begun"] and len(_index_shape(pg_url)[1]) == 1  # left behind
        assert sync(settings, indexed.store).added == len(FILES)  # the next build drops it and loads again
        assert begun == ["begun", "begun"] and _index_shape(pg_url)[1] == []
        assert len(indexed.search("levenshtein").matches) == 40
    finally:
        indexed.runtime.close()


def test_rows_flushed_by_reads_count_toward_a_load(monkeypatch: pytest.MonkeyPatch, pg_url: str) -> None:
    """Reads inside a writer's transaction flush the held rows (a meeting note's build reads the store): the
    rows added in all, not those held at once, decide that a load begins."""
    monkeypatch.setattr(region_copy, "HELD_ROWS", 8)
    open_store(pg_url).close()  # the tables made
    with psycopg.connect(pg_url) as conn:
        called: list[int] = []
        held = region_copy.HeldRegions(conn, lambda: called.append(len(called)))
        for n in range(region_copy.HELD_ROWS - 1):
            held.add([(n, 1, b"x", "x", ["x"])])
            held.flush()  # as a read would
        assert called == []
        held.add([(region_copy.HELD_ROWS, 1, b"x", "x", ["x"])])
        held.add([(region_copy.HELD_ROWS + 1, 1, b"x", "x", ["x"])])
        assert called == [0]  # once, when the rows added came to a COPY's worth
        assert conn.execute("SELECT count(*) FROM document_regions").fetchone() == (region_copy.HELD_ROWS - 1,)
        conn.rollback()


def _rows_copied(indexed: IndexedVault, url: str, oid: object) -> None:
    """The build ended as one kept up row by row: the same table, every region in it, no load schema."""
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT oid FROM pg_class WHERE relname = 'document_regions'").fetchone() == oid
    assert _index_shape(url)[1] == []
    assert len(indexed.search("levenshtein").matches) == 40
    assert len(indexed.search("qz").matches) == 40


def test_a_swap_postgresql_refuses_copies_the_rows_instead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           pg_url: str) -> None:
    begun = _loading(monkeypatch)
    indexed, settings = _vault_settings(tmp_path, pg_url)
    with psycopg.connect(pg_url) as conn:
        oid = conn.execute("SELECT oid FROM pg_class WHERE relname = 'document_regions'").fetchone()

    def progress(done: int, total: int) -> None:
        if done > total // 2 and begun and not progress.__dict__.get("done"):
            progress.__dict__["done"] = True  # an operator's view, made while the load runs
            with psycopg.connect(pg_url, autocommit=True) as conn:
                conn.execute("CREATE VIEW region_ids AS SELECT id FROM document_regions")

    try:
        assert sync(settings, indexed.store, progress).added == len(FILES)
        assert begun == ["begun"]
        _rows_copied(indexed, pg_url, oid)
    finally:
        indexed.runtime.close()


def test_a_swap_that_waits_too_long_copies_the_rows_instead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            pg_url: str) -> None:
    begun = _loading(monkeypatch)
    monkeypatch.setattr(region_load, "LOCK_TRY", "20ms")
    monkeypatch.setattr(region_load, "SWAP_WAIT_S", 0.3)
    indexed, settings = _vault_settings(tmp_path, pg_url)
    with psycopg.connect(pg_url) as idle:  # a session idle in a transaction that once read the table
        oid = idle.execute("SELECT oid FROM pg_class WHERE relname = 'document_regions'").fetchone()
        idle.execute("SELECT count(*) FROM document_regions").fetchone()
        try:
            assert sync(settings, indexed.store).added == len(FILES)  # done while the session still holds on
            assert begun == ["begun"]
            _rows_copied(indexed, pg_url, oid)
        finally:
            idle.rollback()
            indexed.runtime.close()
