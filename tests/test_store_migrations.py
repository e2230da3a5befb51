"""A store made by an older version keeps working after its migrations run (documents; identity and sign-in
credentials on both backends)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from notewell.records.documents import Scope
from notewell.search.engine import SearchEngine, SearchRequest
from notewell.search.literals import regex_plan
from notewell.store import open_store
from notewell.store.document_rows import BRAIN_PARENT_IDS
from notewell.store.postgres import PostgresStore
from notewell.store.postgres.database import PostgresDatabase
from notewell.store.postgres.dialect import PostgresDialect
from notewell.store.postgres.documents import MIGRATIONS as PG_MIGRATIONS
from notewell.store.postgres.documents import PostgresDocuments
from notewell.store.shared.audit import MIGRATIONS as AUDIT_MIGRATIONS
from notewell.store.shared.credentials import MIGRATIONS as CREDENTIAL_MIGRATIONS
from notewell.store.shared.dialect import Dialect
from notewell.store.shared.identity import MIGRATIONS as IDENTITY_MIGRATIONS
from notewell.store.shared.migrations import Migration
from notewell.store.sqlite import SqliteStore
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.dialect import SqliteDialect
from notewell.store.sqlite.documents import MIGRATIONS, SqliteDocuments
from notewell.store.sqlite.trigram_shards import SHARDS, shard_name
from pg import BACKENDS

TEXTS = ["Straße und MAXIMUM Rabatt\n", "nothing here\n", "İstanbul Σίσυφος\n"]


def _first_version_store(path: Path) -> None:
    """A store as the first schema wrote it: one trigram table, FTS5 folding the (already folded) text."""
    old = SqliteDatabase(path)
    SqliteDialect(old).migrate("documents", MIGRATIONS[:1])
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
    PostgresDialect(old).migrate("documents", PG_MIGRATIONS[:1])
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


def _bare(url: str) -> tuple[SqliteDialect | PostgresDialect, Callable[[], None]]:
    """A dialect over the database at ``url`` with no component migrated (a test writes an older schema into
    it), and how to close it."""
    if url.startswith("postgres"):
        pg = PostgresDatabase(url)
        return PostgresDialect(pg), pg.close
    Path(url).parent.mkdir(parents=True, exist_ok=True)
    lite = SqliteDatabase(Path(url))
    return SqliteDialect(lite), lite.close


def _old_sign_in_store(url: str) -> None:
    """Identity and credentials as written before session generations and attempt ids: a user, and a failed
    sign-in counted the old way (no attempt id)."""
    dialect, close = _bare(url)
    dialect.migrate("identity", dialect.rendered(IDENTITY_MIGRATIONS[:3]))
    dialect.migrate("credentials", dialect.rendered(CREDENTIAL_MIGRATIONS[:1]))
    with dialect.transaction() as conn:
        conn.execute("INSERT INTO users (id, email, email_key, name, handle, role, active, created_at)"
                     " VALUES ('u_ada', 'ada@example.com', 'ada@example.com', 'Ada', 'ada', 'member', ?, ?)",
                     (True, "2026-03-01T00:00:00.000000Z"))
        conn.execute("INSERT INTO sign_in_failures (key, at) VALUES ('address:192.0.2.7', ?)",
                     ("2026-03-02T08:55:00.000000Z",))
    close()


def test_sign_in_state_from_before_generations_and_attempt_ids_upgrades(store_url: str) -> None:
    _old_sign_in_store(store_url)
    store = open_store(store_url)  # runs identity step 4 and credentials step 2
    try:
        assert store.identity.session_generation("u_ada") == 0
        store.identity.end_sessions("u_ada")
        assert store.identity.session_generation("u_ada") == 1
        limit = [("address:192.0.2.7", 2)]
        at, since = "2026-03-02T09:00:00.000000Z", "2026-03-02T08:45:00.000000Z"
        assert store.credentials.count_attempt(limit, "attempt-1", at, since) is None  # the old failure counts
        assert store.credentials.count_attempt(limit, "attempt-2", at, since) == "address:192.0.2.7"
        store.credentials.forgive_attempt("attempt-1")
        assert store.credentials.count_attempt(limit, "attempt-3", at, since) is None
    finally:
        store.close()


def test_a_failed_sign_in_audited_with_what_was_typed_names_no_one_once_upgraded(store_url: str) -> None:
    """Before, a failed sign-in for no user kept what was typed as the email: maybe a password."""
    dialect, close = _bare(store_url)
    dialect.migrate("audit", dialect.rendered(AUDIT_MIGRATIONS[:1]))
    with dialect.transaction() as conn:
        for user, target in (("-", "adapassword1!"), ("-", "link"), ("u_ada", "ada@example.com")):
            conn.execute("INSERT INTO audit_log (at, user_id, token_id, action, target, detail)"
                         " VALUES ('2026-03-02T08:55:00.000000Z', ?, NULL, 'auth.sign_in_failed', ?, '{}')",
                         (user, target))
    close()
    store = open_store(store_url)
    try:
        assert [e.target for e in store.audit.list_since()] == ["(no such user)", "link", "ada@example.com"]
    finally:
        store.close()


# A migration is a sequence of statements, each sent whole: ";\n" inside a string literal or a trigger's
# body is part of its statement (the SQLite runner once cut scripts at every ";\n").
_NOTES = "CREATE TABLE notes (body TEXT NOT NULL DEFAULT 'one;\ntwo')"
_LOG = "CREATE TABLE log (n INTEGER NOT NULL, line TEXT NOT NULL)"
STATEMENTS_HOLDING_SEPARATORS: dict[str, Migration] = {
    "sqlite": (_NOTES, _LOG, """
        CREATE TRIGGER notes_logged AFTER INSERT ON notes BEGIN
            INSERT INTO log (n, line) VALUES (1, 'added;
            first');
            INSERT INTO log (n, line) VALUES (2, new.body);
        END
        """),
    "postgres": (_NOTES, _LOG, """
        CREATE FUNCTION notes_logged() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            INSERT INTO log (n, line) VALUES (1, 'added;
            first');
            INSERT INTO log (n, line) VALUES (2, NEW.body);
            RETURN NEW;
        END $$
        """, "CREATE TRIGGER notes_logged AFTER INSERT ON notes FOR EACH ROW EXECUTE FUNCTION notes_logged()"),
}


def _dialect(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Dialect:
    if backend == "sqlite":
        return SqliteDialect(SqliteDatabase(tmp_path / "index.db"))
    return PostgresDialect(PostgresDatabase(request.getfixturevalue("pg_url")))


@pytest.mark.parametrize("backend", BACKENDS)
def test_statements_holding_semicolon_newline_migrate_whole(backend: str, tmp_path: Path,
                                                            request: pytest.FixtureRequest) -> None:
    dialect = _dialect(backend, tmp_path, request)
    migrations = [STATEMENTS_HOLDING_SEPARATORS[backend]]
    dialect.migrate("separators", migrations)
    dialect.migrate("separators", migrations)  # applied once: a second run finds the step done
    with dialect.transaction() as conn:
        conn.execute("INSERT INTO notes DEFAULT VALUES")
    with dialect.reading() as conn:
        assert [r[0] for r in conn.execute("SELECT body FROM notes").fetchall()] == ["one;\ntwo"]
        assert [r[0] for r in conn.execute("SELECT line FROM log ORDER BY n").fetchall()] == [
            "added;\n            first", "one;\ntwo"]
        assert conn.execute("SELECT version FROM schema_migrations WHERE component = ?",
                            ("separators",)).fetchall() == [(1,)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_migration_written_as_one_script_is_refused(backend: str, tmp_path: Path,
                                                      request: pytest.FixtureRequest) -> None:
    dialect = _dialect(backend, tmp_path, request)
    with pytest.raises(TypeError, match="migration 1 of separators: a migration is a sequence of statements"):
        dialect.migrate("separators", ["CREATE TABLE a (x TEXT);\nCREATE TABLE b (y TEXT)"])
    with pytest.raises(TypeError, match="migration 1 of separators"):
        dialect.migrate("separators", dialect.rendered(["CREATE TABLE a (x {key})"]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_store_reopened_runs_no_step_again(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The steps a store has are read from schema_migrations as every earlier version wrote it (component,
    version from 1): reopening applies none again, so a step that would fail twice (CREATE TABLE) passes."""
    db = str(tmp_path / "index.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    open_store(db).close()
    store = open_store(db)
    dialect: Dialect
    if isinstance(store, SqliteStore):
        dialect = SqliteDialect(store.db)
    else:
        assert isinstance(store, PostgresStore)
        dialect = PostgresDialect(store.db)
    with dialect.reading() as conn:
        steps = dict(conn.execute("SELECT component, max(version) FROM schema_migrations GROUP BY component"
                                  " ORDER BY component").fetchall())
    assert steps["documents"] == len(MIGRATIONS if backend == "sqlite" else PG_MIGRATIONS)
    assert steps["identity"] == len(IDENTITY_MIGRATIONS)
    store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_brain_parents_stored_as_folders_become_brain_ids(backend: str, tmp_path: Path,
                                                          request: pytest.FixtureRequest) -> None:
    """A parent was its project-relative folder ("" for the project's root brain); it is the parent's brain id
    now, so that it may be a brain of another project. The step rewrites the rows an older version wrote (here:
    a store whose record of that step is taken away, holding rows as the version before wrote them)."""
    db = str(tmp_path / "index.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    step = (MIGRATIONS if backend == "sqlite" else PG_MIGRATIONS).index(BRAIN_PARENT_IDS) + 1
    store = open_store(db)
    dialect = SqliteDialect(store.db) if isinstance(store, SqliteStore) else PostgresDialect(store.db)  # type: ignore[attr-defined]
    with dialect.transaction() as conn:
        conn.execute("DELETE FROM schema_migrations WHERE component = 'documents' AND version = ?", (step,))
        for folder, parent in (("", None), ("brains/business", None), ("brains/website", "brains/business"),
                               ("notes", "")):
            conn.execute("INSERT INTO brains (project, folder, title, summary, parent, documents)"
                         " VALUES ('p', ?, 't', 's', ?, '[]')", (folder, parent))
    store.close()
    store = open_store(db)  # runs that step again
    try:
        parents = {b.id: b.parent for b in store.documents.brains("p")}
        assert parents == {"p": None, "p/brains/business": None, "p/brains/website": "p/brains/business",
                           "p/notes": "p"}
    finally:
        store.close()
