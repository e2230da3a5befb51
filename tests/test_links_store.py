"""The links table on both backends: a store made before links were kept gets them at its next sync, and a
sync that changes nothing keeps them as they are."""

from __future__ import annotations

from pathlib import Path

from conftest import index_into, make_vault
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from notewell.store.shared.links import LINK_MIGRATIONS
from notewell.store.shared.store import SqlStore

FILES = {"p/a.md": "See [[b]] and [c](sub/c.md).\n", "p/b.md": "Back to `a.md`.\n", "p/sub/c.md": "# C\n"}


def _links(store: SqlStore) -> list[tuple[str, int, str | None]]:
    return [(r.source[1], r.line, r.resolved[1] if r.resolved else None)
            for path in ("a.md", "b.md") for r in store.links.outgoing(("p", path), ["p"], 50)]


def test_a_store_from_before_links_gets_them_at_its_next_sync(tmp_path: Path, store_url: str) -> None:
    vault = make_vault(tmp_path, FILES)
    indexed = index_into(vault, store_url)
    store = indexed.store
    assert isinstance(store, SqlStore)
    expected = [("a.md", 1, "b.md"), ("a.md", 1, "sub/c.md"), ("b.md", 1, "a.md")]
    assert _links(store) == expected
    with store.links.dialect.transaction() as conn:  # as an older version left it: no links, no step
        for statement in ("DROP TABLE document_links_pending", "DROP TABLE document_links",
                          "DELETE FROM schema_migrations WHERE component = 'links'"):
            conn.execute(statement)
    indexed.runtime.close()
    again = index_into(vault, store_url)  # the migration runs; the sync finds nothing changed on disk
    try:
        assert not again.report.did_work
        assert isinstance(again.store, SqlStore) and _links(again.store) == expected
        assert not again.sync().did_work and _links(again.store) == expected
        (vault / "p/b.md").write_text("Rewritten, and back to `a.md` on line 2.\n`a.md`\n")
        assert again.sync().changed == 1  # a changed document keeps its row: the links to it stay resolved
        assert _links(again.store) == [("a.md", 1, "b.md"), ("a.md", 1, "sub/c.md"), ("b.md", 1, "a.md"),
                                       ("b.md", 2, "a.md")]
    finally:
        again.runtime.close()


def test_a_store_with_the_links_first_row_reads_them_again_into_the_smaller_one(tmp_path: Path,
                                                                              store_url: str) -> None:
    """Links migration 3 (issue 29) replaces the row that kept the folded name as text: the links come back,
    resolved as before, at the next sync, and a name still finds them (a target created later gathers them)."""
    vault = make_vault(tmp_path, FILES)
    indexed = index_into(vault, store_url)
    store = indexed.store
    assert isinstance(store, SqlStore)
    dialect = store.links.dialect
    with dialect.transaction() as conn:  # as links migration 2 left it, one link stored the old way
        conn.execute("DROP TABLE document_links")
        conn.execute(dialect.render(LINK_MIGRATIONS[0][0]))
        conn.execute("INSERT INTO document_links (source_id, seq, line, kind, target, anchor, label, name_key,"
                     " target_id) SELECT id, 0, 1, 'wikilink', 'b', '', '', 'b', NULL FROM documents"
                     " WHERE path = 'a.md'")
        conn.execute("DELETE FROM schema_migrations WHERE component = 'links' AND version = 3")
    indexed.runtime.close()
    again = index_into(vault, store_url)
    try:
        assert isinstance(again.store, SqlStore)
        assert _links(again.store) == [("a.md", 1, "b.md"), ("a.md", 1, "sub/c.md"), ("b.md", 1, "a.md")]
        (vault / "p/a.md").write_text("See [[b]], [[Later Note]] and [c](sub/c.md).\n")
        again.sync()
        assert [r.resolved for r in again.store.links.outgoing(("p", "a.md"), ["p"], 50)][1] is None
        (vault / "p/sub/later note.md").write_text("# Later\n")
        again.sync()
        assert [r.resolved for r in again.store.links.outgoing(("p", "a.md"), ["p"], 50)][1] == \
            ("p", "sub/later note.md")
    finally:
        again.runtime.close()


def test_tied_names_the_documents_a_memory_is_tied_to(tmp_path: Path, store_url: str) -> None:
    """buildContext's first look: which of the documents it reached have memories tied to them (one query)."""
    vault = make_vault(tmp_path, {"p/a.md": "# A\n", "p/b.md": "# B\n", "p/c.md": "# C\n"})
    rt = open_runtime(str(vault), store_url)
    try:
        rt.indexing.sync()
        rt.memory.remember(LOCAL_OWNER, "About a.", project="p", about="p/a.md")
        rt.memory.remember(LOCAL_OWNER, "See c.md for the rest.", project="p")
        assert rt.store.memory_documents.tied([("p", "a.md"), ("p", "b.md"), ("p", "c.md"), ("q", "a.md")]) == {
            ("p", "a.md"), ("p", "c.md")}
        assert rt.store.memory_documents.tied([]) == set()
    finally:
        rt.close()
