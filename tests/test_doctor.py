"""notewell doctor: every check ok on a healthy set-up, and each failure it reports, with its fix."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from conftest import make_vault, run_cli
from notewell.access.principal import LOCAL_OWNER
from notewell.records.integrity import DerivedRows
from notewell.records.jobs import NewJob
from notewell.runtime import open_runtime
from notewell.store import open_store
from notewell.store.leadership import open_leadership
from notewell.timestamps import iso
from test_word_rank import NOW


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def doctor(*args: str) -> tuple[int, dict[str, dict[str, str]]]:
    result = run_cli("doctor", "--json", *args)
    return result.exit_code, {c["check"]: c for c in json.loads(result.stdout)}


def _healthy(tmp_path: Path, db: str | None = None) -> tuple[Path, str]:
    vault = make_vault(tmp_path, {"Inbox.md": "root note\n", "p/a.md": "word\n"})
    db = db or str(tmp_path / "store" / "index.db")
    rt = open_runtime(str(vault), db)
    try:
        assert run_cli("index", "--vault", str(vault), "--db", db).exit_code == 0
        rt.administration.add_user(LOCAL_OWNER, "ann@example.test", "member", handle="ann")
        rt.administration.mint_token(LOCAL_OWNER, "ann@example.test", ["knowledge:read"])
        rt.backups.backup(LOCAL_OWNER, tmp_path / "store.backup")
    finally:
        rt.close()
    return vault, db


def test_healthy(tmp_path: Path) -> None:
    vault, db = _healthy(tmp_path)
    code, checks = doctor("--vault", str(vault), "--db", db, "--port", str(_free_port()))
    assert code == 0
    assert list(checks) == ["settings", "vault", "store", "search index", "integrity", "index", "tokens", "watcher",
                            "meaning", "backup", "kea", "jobs", "port"]
    assert {c["status"] for c in checks.values()} == {"ok"}, checks
    assert checks["vault"]["found"] == "2 documents in 3 projects"  # _root, p and the home ~ann
    assert "live_memory_stems" not in checks["integrity"]["found"]  # PostgreSQL's table alone
    assert checks["tokens"]["found"] == "1 active tokens"
    assert "no watcher runs now" in checks["watcher"]["found"]
    assert checks["jobs"]["found"] == "0 pending, 0 running, 0 failed; no job runner runs now"


def test_a_store_a_newer_notewell_upgraded_fails_with_the_fix(tmp_path: Path) -> None:
    vault, db = _healthy(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES ('documents', 99)")
    code, checks = doctor("--vault", str(vault), "--db", db, "--port", str(_free_port()))
    assert code != 0 and checks["store"]["status"] == "fail"
    assert "a newer Notewell upgraded its schema (documents 99" in checks["store"]["found"]
    assert "upgrade this Notewell" in checks["store"]["fix"]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_other_commands_refuse_a_store_a_newer_notewell_upgraded(backend: str, tmp_path: Path,
                                                                    request: pytest.FixtureRequest) -> None:
    """They would misread or miswrite the columns they do not know: each says so and changes nothing."""
    db = request.getfixturevalue("pg_url") if backend == "postgres" else None
    vault, db = _healthy(tmp_path, db)
    if backend == "postgres":
        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute("INSERT INTO schema_migrations VALUES ('memories', 99)")
    else:
        with sqlite3.connect(db) as conn:
            conn.execute("INSERT INTO schema_migrations VALUES ('memories', 99)")
    for command in (["user", "add", "zed@example.test", "--role", "member"], ["index"], ["search", "word"],
                    ["export", str(tmp_path / "out")], ["serve", "--port", str(_free_port())], ["embed", "--status"]):
        result = run_cli(*command, "--vault", str(vault), "--db", db)
        assert result.exit_code == 1, (command, result.output)
        assert re.search(r"a newer Notewell upgraded this store's schema \(memories 99 > \d+\); upgrade this "
                         r"notewell", result.output), (command, result.output)
    assert not (tmp_path / "out").exists()
    code, checks = doctor("--vault", str(vault), "--db", db, "--port", str(_free_port()))
    assert code != 0 and "memories 99" in checks["store"]["found"]  # doctor still looks, and says what to do
    store = open_store(db)
    try:
        assert store.identity.user_by_email("zed@example.test") is None
    finally:
        store.close()


def test_each_problem_with_its_fix(tmp_path: Path) -> None:
    vault, db = _healthy(tmp_path)
    (vault / "p/new.md").write_text("not indexed yet\n")
    (vault / "p/picture.png").write_bytes(b"\x89PNG")
    os.chmod(db, 0o644)
    lease = open_leadership(db)
    assert lease.try_acquire()  # a running watcher holds the writer's lease
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        try:
            code, checks = doctor("--vault", str(vault), "--db", db, "--port", str(taken.getsockname()[1]))
        finally:
            lease.release()
    assert code == 1
    assert checks["vault"]["found"] == "3 documents in 3 projects; left out: 1 type"
    assert checks["store"]["status"] == "warn" and "chmod 600" in checks["store"]["fix"]
    assert checks["index"]["status"] == "warn" and checks["index"]["found"] == "2 documents indexed, 3 in the vault"
    assert "a watcher runs" in checks["watcher"]["found"]
    assert checks["port"]["status"] == "fail" and "another --port" in checks["port"]["fix"]


def test_missing_vault_index_tokens_and_documents(tmp_path: Path) -> None:
    code, checks = doctor("--vault", str(tmp_path / "nowhere"), "--port", str(_free_port()))
    assert code == 1 and checks["settings"]["status"] == "fail" and "--vault" in checks["settings"]["fix"]
    empty = make_vault(tmp_path, {"p/image.png": b"\x89PNG"}, name="empty")
    code, checks = doctor("--vault", str(empty), "--port", str(_free_port()))
    assert code == 1
    assert checks["vault"]["status"] == "warn" and "--verbose" in checks["vault"]["fix"]
    assert checks["store"]["status"] == "fail" and "notewell index" in checks["store"]["fix"]
    assert run_cli("index", "--vault", str(empty)).exit_code == 0
    code, checks = doctor("--vault", str(empty), "--port", str(_free_port()))
    assert code == 0 and checks["tokens"]["status"] == "warn" and "token mint" in checks["tokens"]["fix"]
    (empty / "not-a-db").write_text("plain text\n")
    code, checks = doctor("--vault", str(empty), "--db", str(empty / "not-a-db"), "--port", str(_free_port()))
    assert code == 1 and checks["store"]["status"] == "fail" and "cannot open" in checks["store"]["found"]
    assert "move it away" in checks["store"]["fix"]  # indexing would not repair a file that is not a store


def test_postgres_unreachable_says_to_start_it_or_correct_the_url(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "# A\n"}, name="pgv")
    code, checks = doctor("--vault", str(vault), "--db", "postgresql://nobody@127.0.0.1:1/none",
                          "--port", str(_free_port()))
    assert code == 1 and checks["store"]["status"] == "fail" and "cannot connect" in checks["store"]["found"]
    assert "start PostgreSQL" in checks["store"]["fix"] and "notewell index --vault" not in checks["store"]["fix"]


def test_postgres_without_pg_trgm(tmp_path: Path, pg_url: str) -> None:
    vault, db = _healthy(tmp_path, pg_url)
    code, checks = doctor("--vault", str(vault), "--db", db, "--port", str(_free_port()))
    assert code == 0 and checks["search index"]["found"] == "pg_trgm available"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP EXTENSION pg_trgm CASCADE")
    code, checks = doctor("--vault", str(vault), "--db", db, "--port", str(_free_port()))
    assert code == 1 and checks["search index"]["status"] == "fail"
    assert "CREATE EXTENSION pg_trgm" in checks["search index"]["found"]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_jobs_left_running_past_their_lease_are_reported_with_the_fix(backend: str, tmp_path: Path,
                                                                      request: pytest.FixtureRequest) -> None:
    """A worker killed mid-job leaves its jobs running until a runner takes them back; doctor said nothing. Leases
    ended in 2001 and end in 2999: whatever today is, one is past and one is not."""
    vault, db = _healthy(tmp_path, request.getfixturevalue("pg_url") if backend == "postgres" else None)
    store = open_store(db)
    try:
        now = iso(datetime(2001, 1, 1, tzinfo=UTC))
        stuck = [store.jobs.enqueue(NewJob("kea.extract", {"sessionId": f"ses_{n}"}, "runner-killed0000",
                                           iso(datetime(2001, 1, 1, 0, n, tzinfo=UTC))), now) for n in range(2)]
        store.jobs.enqueue(NewJob("kea.extract", {"sessionId": "ses_live"}, "close-live0000",
                                  iso(datetime(2999, 1, 1, tzinfo=UTC))), now)
    finally:
        store.close()
    args = ("--vault", str(vault), "--db", db, "--port", str(_free_port()))
    code, checks = doctor(*args)
    jobs = checks["jobs"]
    assert code == 0 and jobs["status"] == "warn", jobs
    assert jobs["found"].startswith("2 job(s) left running past their lease, by up to ") and " days (ids " in \
        jobs["found"] and f"(ids {stuck[0]}, {stuck[1]}): the process running them stopped mid-job; 0 pending, " \
        "3 running, 0 failed; no job runner runs now" in jobs["found"], jobs
    assert jobs["fix"].startswith("start a job runner (`notewell worker`") and "takes them back at once" in jobs["fix"]
    lease = open_leadership(db, "jobs")
    assert lease.try_acquire()  # a runner holds the job lease, busy in a long job
    try:
        _, checks = doctor(*args)
    finally:
        lease.release()
    jobs = checks["jobs"]
    assert jobs["status"] == "warn" and "a job runner holds the store's job lease" in jobs["found"], jobs
    assert jobs["fix"].startswith("the runner holding the job lease takes them back at its next claim"), jobs
    assert "restart it" in jobs["fix"]


def test_postgresqls_live_memory_stems_out_of_step_with_the_memories_is_reported_and_repair_mends_it(
        tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """live_memory_stems, the table a trigger derives from the live memories for the tolerant search, could differ
    from them (written with its trigger off: a hand-run load, a session in replica mode) and doctor said the store
    was well: it compares the counts and the rows (a few memories' ids at a time: a batch of 2 here), names the fix,
    and is clean again after `notewell repair`."""
    from notewell.store.health import derived_rows
    from notewell.store.postgres import live_stems
    from test_live_memory_stems import _input

    monkeypatch.setattr(live_stems, "COMPARED_BATCH", 2, raising=False)
    vault, db = _healthy(tmp_path, pg_url)
    store = open_store(db)
    try:
        for n in range(6):
            store.memories.add(_input(f"mem_{n}", f"release train notes, part {n}"))
        assert derived_rows(store, 0.0) == DerivedRows(None, None, 0, False, True)  # a budget spent at once
    finally:
        store.close()
    args = ("--vault", str(vault), "--db", db, "--port", str(_free_port()))
    code, checks = doctor(*args)
    assert code == 0 and checks["integrity"]["status"] == "ok", checks["integrity"]
    assert checks["integrity"]["found"].endswith("live_memory_stems holds the 6 live memories' stems, every row as "
                                                 "the memories say"), checks["integrity"]
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the same count, three rows wrong
        conn.execute("SET session_replication_role = replica")  # the trigger does not fire
        conn.execute("UPDATE memories SET deleted_at = %s, deleted_by = 'u1' WHERE ref = 'mem_1'", (NOW,))
        conn.execute(f"DELETE FROM {live_stems.TABLE} WHERE id = (SELECT id FROM memories WHERE ref = 'mem_3')")
        conn.execute(f"UPDATE {live_stems.TABLE} SET stems = to_tsvector('simple', 'other words')"
                     " WHERE id = (SELECT id FROM memories WHERE ref = 'mem_4')")
    code, checks = doctor(*args)
    integrity = checks["integrity"]
    assert code == 1 and integrity["status"] == "fail", integrity
    assert integrity["found"] == ("live_memory_stems, the live memories' stems the tolerant search walks, differs "
                                  "from the memories: 3 rows differ from their memories (missing, left over or out "
                                  "of date) (every row compared)"), integrity
    assert integrity["fix"].startswith("run `notewell repair`"), integrity
    with psycopg.connect(pg_url, autocommit=True) as conn:  # its trigger left off: a new memory goes unfollowed
        conn.execute(live_stems.suspended())
    store = open_store(db)
    try:
        store.memories.add(_input("mem_new", "written while the trigger was off"))
    finally:
        store.close()
    code, checks = doctor(*args, "--deep")
    found = checks["integrity"]["found"]
    assert code == 1 and "differs from the memories: 6 live memories, 5 rows; 4 rows differ" in found, found
    assert "its trigger is off" in found, found
    repaired = run_cli("repair", "--vault", str(vault), "--db", db)
    assert repaired.exit_code == 0, repaired.output
    code, checks = doctor(*args)
    assert code == 0 and checks["integrity"]["status"] == "ok", checks["integrity"]
    assert "live_memory_stems holds the 6 live memories' stems" in checks["integrity"]["found"], checks["integrity"]
