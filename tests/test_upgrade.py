"""A store an earlier commit made opens with today's code on both backends, every row intact.

The fixtures in tests/data/upgrade were built by tests/data/upgrade/make_fixture.py run on commit 8ebf599's
code (a SQLite file, and a PostgreSQL database dumped as plain SQL). Opening one applies today's migrations;
every row of every table it had reads back the same in the columns it had, search still finds what it did,
and the upgraded store exports and imports (docs/operations.md, "Export and import").
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import psycopg

from conftest import run_cli
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from pg import PG_BIN, PgCluster

FIXTURES = Path(__file__).parent / "data" / "upgrade"
COMMIT = "8ebf599"
Rows = dict[str, list[tuple[Any, ...]]]
DROPPED = {"web_keys": "credentials migration 3: it held the key that signed browser cookies (whoever read a "
                       "backup could sign one); sessions are kept by the hash of their secret now"}


def _kept(table: str) -> bool:
    """The tables whose rows an upgrade keeps as they were: all but the migrations' own book, the trigram
    index's (FTS5's tables behind document_trigrams_N, which a migration may build again from the text) and
    the tables a migration drops (DROPPED)."""
    return table != "schema_migrations" and not table.startswith("document_trigrams_") and table not in DROPPED


def still_there(columns: dict[str, list[str]]) -> dict[str, list[str]]:
    """The tables (and their columns) read again after the upgrade: the dropped ones were there before."""
    assert set(DROPPED) <= set(columns)
    return {t: c for t, c in columns.items() if t not in DROPPED}


def same_rows(before: Rows, after: Rows) -> None:
    """Every table's rows as they were; the migrations' own book only gains today's steps."""
    assert set(before["schema_migrations"]) < set(after["schema_migrations"])
    assert {t: r for t, r in after.items() if _kept(t)} == {t: r for t, r in before.items() if _kept(t)}


def sqlite_rows(path: Path, columns: dict[str, list[str]] | None = None) -> tuple[Rows, dict[str, list[str]]]:
    with sqlite3.connect(path) as conn:
        names = columns or {t: [r[1] for r in conn.execute(f"PRAGMA table_info('{t}')")] for (t,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            " AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'")}
        return {t: sorted(conn.execute(f"SELECT {', '.join(cols)} FROM {t}").fetchall(), key=repr)
                for t, cols in names.items()}, names


def postgres_rows(url: str, columns: dict[str, list[str]] | None = None) -> tuple[Rows, dict[str, list[str]]]:
    with psycopg.connect(url) as conn:
        names = columns or {t: [c for (c,) in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = %s"
            " ORDER BY ordinal_position", (t,))] for (t,) in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            " AND table_type = 'BASE TABLE'")}
        return {t: sorted(conn.execute(f"SELECT {', '.join(cols)} FROM {t}").fetchall(), key=repr)
                for t, cols in names.items()}, names


def answers(vault: Path, db: str, session_words: str = "acceleration") -> tuple[list[str], list[str], list[str]]:
    rt = open_runtime(str(vault), db)
    try:
        found = rt.store.identity.user_by_email("alice@example.test")
        assert found is not None
        alice = user_principal(found)
        return (sorted(h.memory.content for h in rt.memory.recall(alice, "gripper").results),
                [s.session.prompt for s in rt.brain.search_sessions(alice, session_words)],
                [m.path for m in rt.knowledge.search(LOCAL_OWNER, "staging key").matches])
    finally:
        rt.close()


def short_run_found(vault: Path, db: str) -> bool:
    """A run of two characters is answered from the index the upgrade completed (not by a scan)."""
    rt = open_runtime(str(vault), db)
    try:
        found = rt.knowledge.search(LOCAL_OWNER, "ey", all_lines=True)
        return not found.scanned and [(m.path, m.line) for m in found.matches] == [("runbook.md", 3)]
    finally:
        rt.close()


EXPECTED = (["My private gripper reminder", "The gripper firmware uses the production key."],
            ["fix the gripper stall"], ["runbook.md"])


def test_a_sqlite_store_of_an_earlier_commit_opens_intact(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    shutil.copyfile(FIXTURES / f"store-{COMMIT}.db", db)
    before, columns = sqlite_rows(db)
    assert before["memories"] and before["brain_sessions"] and before["tokens"]
    assert answers(tmp_path, str(db)) == EXPECTED
    assert short_run_found(tmp_path, str(db))
    after, _ = sqlite_rows(db, still_there(columns))
    same_rows(before, after)
    assert not set(DROPPED) & set(sqlite_rows(db)[0])
    assert run_cli("export", str(tmp_path / "e"), "--db", str(db)).exit_code == 0
    assert run_cli("import", str(tmp_path / "e"), "--db", str(tmp_path / "copy.db")).exit_code == 0


def test_a_postgres_store_of_an_earlier_commit_opens_intact(tmp_path: Path, pg_cluster: PgCluster) -> None:
    url = pg_cluster.url(pg_cluster.create_database())
    subprocess.run([str(PG_BIN / "psql"), "--quiet", "--set", "ON_ERROR_STOP=1", "--file",
                    str(FIXTURES / f"store-{COMMIT}.sql"), url], check=True, capture_output=True)
    before, columns = postgres_rows(url)
    assert before["memories"] and before["brain_sessions"] and before["brain_session_words"]
    assert answers(tmp_path, url) == EXPECTED
    assert short_run_found(tmp_path, url)
    after, _ = postgres_rows(url, still_there(columns))
    same_rows(before, after)
    assert not set(DROPPED) & set(postgres_rows(url)[0])
    with psycopg.connect(url) as conn:  # migration 2 of the brain: each old piece's stems as its text
        assert conn.execute("SELECT count(*) FROM brain_session_words WHERE body IS NULL").fetchone() == (0,)
    assert run_cli("migrate", "--from", url, "--to", f"sqlite:{tmp_path / 'moved.db'}").exit_code == 0
    # the pieces of a PostgreSQL store older than the format carry their stems as text: SQLite finds them by
    # words whose stem its porter tokenizer keeps as it is ("acceleration" -> "acceler" -> "accel" is not one)
    assert answers(tmp_path, str(tmp_path / "moved.db"), "gripper")[:2] == EXPECTED[:2]
