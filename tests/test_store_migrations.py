"""A SQLite store made by an older version keeps working after its migrations run."""

from __future__ import annotations

from pathlib import Path

from notewell.search.engine import SearchEngine, SearchRequest
from notewell.store.base import DocumentInput, Scope
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.documents import MIGRATIONS, SqliteDocuments, _Writer


def test_trigram_index_rebuilt_by_the_tokenizer_migration(tmp_path: Path) -> None:
    old = SqliteDatabase(tmp_path / "index.db")
    old.conn.create_function("notewell_indexed_text", 1, lambda text: text, deterministic=True)
    old.migrate("documents", MIGRATIONS[:1])  # the first schema: FTS5 folded the text again
    with old.transaction() as conn:
        writer = _Writer(conn)
        for n, text in enumerate(["Straße und MAXIMUM Rabatt\n", "nothing here\n", "İstanbul Σίσυφος\n"]):
            writer.upsert(DocumentInput("p", f"d{n}.md", f"d{n}", "", len(text), 1, f"sha{n}", text))
    old.close()

    db = SqliteDatabase(tmp_path / "index.db")
    engine = SearchEngine(SqliteDocuments(db))  # runs the migrations still missing
    schema = db.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'document_trigrams'").fetchone()[0]
    assert "case_sensitive 1" in schema

    def found(query: str) -> list[str]:
        result = engine.search(SearchRequest(query=query, scope=Scope(projects=["p"])))
        assert not result.scanned
        return [m.path for m in result.matches]

    assert found("STRASSE") == ["d0.md"]
    assert found("maximum rabatt") == ["d0.md"]
    assert found("istanbul") == ["d2.md"]
    assert found("ΣΊΣΥΦΟΣ") == ["d2.md"]
    assert found("nothing") == ["d1.md"]
    db.close()
