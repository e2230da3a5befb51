"""A store made by an older version keeps working after its migrations run."""

from __future__ import annotations

from pathlib import Path

from notewell.records.documents import Scope
from notewell.search.engine import SearchEngine, SearchRequest
from notewell.search.literals import regex_plan
from notewell.store.postgres.database import PostgresDatabase
from notewell.store.postgres.documents import MIGRATIONS as PG_MIGRATIONS
from notewell.store.postgres.documents import PostgresDocuments
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.documents import MIGRATIONS, SqliteDocuments
from notewell.store.sqlite.trigram_shards import SHARDS, shard_name

TEXTS = ["Straße und MAXIMUM Rabatt\n", "nothing here\n", "İstanbul Σίσυφος\n"]


def _first_version_store(path: Path) -> None:
    """A store as the first schema wrote it: one trigram table, FTS5 folding the (already folded) text."""
    old = SqliteDatabase(path)
    old.migrate("documents", MIGRATIONS[:1])
    with old.transaction() as conn:
        for n, text in enumerate(TEXTS, start=1):
            conn.execute("INSERT INTO documents (id, project, path, ext, title, summary, size, mtime_ns, sha256,"
                         " line_count) VALUES (?, 'p', ?, '.md', ?, '', ?, 1, ?, 1)",
                         (n, f"d{n}.md", f"d{n}", len(text), f"sha{n}"))
            conn.execute("INSERT INTO document_text (id, body) VALUES (?, ?)", (n, text))
            conn.execute("INSERT INTO document_trigrams (rowid, body) VALUES (?, ?)", (n, text.casefold()))
    old.close()


def test_trigram_index_rebuilt_in_shards_by_the_migrations(tmp_path: Path) -> None:
    _first_version_store(tmp_path / "index.db")
    db = SqliteDatabase(tmp_path / "index.db")
    documents = SqliteDocuments(db)  # runs the migrations still missing
    engine = SearchEngine(documents)
    names = {r[0] for r in db.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "document_trigrams" not in names
    for shard in range(SHARDS):
        schema = db.conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (shard_name(shard),)).fetchone()[0]
        assert "case_sensitive 1" in schema

    def found(query: str) -> list[str]:
        result = engine.search(SearchRequest(query=query, scope=Scope(projects=["p"])))
        assert not result.scanned
        return [m.path for m in result.matches]

    assert found("STRASSE") == ["d1.md"]
    assert found("maximum rabatt") == ["d1.md"]
    assert found("istanbul") == ["d3.md"]
    assert found("ΣΊΣΥΦΟΣ") == ["d3.md"]
    assert found("nothing") == ["d2.md"]
    db.close()


def test_postgres_words_spelled_for_documents_stored_before(pg_url: str) -> None:
    """A PostgreSQL store of the first schema (whole folded text under pg_trgm) gets its words column
    filled when opened, and punctuation in a literal now narrows the candidates."""
    old = PostgresDatabase(pg_url)
    old.migrate("documents", PG_MIGRATIONS[:1])
    with old.transaction() as conn:
        for n, text in enumerate([*TEXTS, "def on_callback(x):\n", "callback = None\n"], start=1):
            conn.execute("INSERT INTO documents (id, project, path, ext, title, summary, size, mtime_ns, sha256,"
                         " line_count) VALUES (%s, 'p', %s, '.md', %s, '', %s, 1, %s, 1)",
                         (n, f"d{n}.md", f"d{n}", len(text), f"sha{n}"))
            conn.execute("INSERT INTO document_text (id, body, folded) VALUES (%s, %s, %s)",
                         (n, text.encode(), text.casefold()))
    old.close()
    db = PostgresDatabase(pg_url)
    documents = PostgresDocuments(db)  # runs the missing migration and spells the words
    engine = SearchEngine(documents)

    def found(query: str, regex: bool = False) -> list[str]:
        result = engine.search(SearchRequest(query=query, scope=Scope(projects=["p"]), regex=regex))
        assert not result.scanned
        return [m.path for m in result.matches]

    assert found("STRASSE") == ["d1.md"]
    assert found("maximum rabatt") == ["d1.md"]
    assert found("ΣΊΣΥΦΟΣ") == ["d3.md"]
    assert found(r"def \w+_callback\(", regex=True) == ["d4.md"]
    assert [c.path for c in documents.candidates(Scope(projects=["p"]), regex_plan(r"_callback\("))] == ["d4.md"]
    db.close()
