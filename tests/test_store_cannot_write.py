"""A store that refuses writes under a running server (its disk full, its file or database read-only): reads
keep working (a token's last-used bookkeeping is skipped, with one warning line, not one a request), writes are
a 503 naming the cause and its fix at every door, /readyz answers 503 with the reason, and once the store writes
again so does the server. The test suite may not mount a small filesystem, so each condition is made the way
the store's own engine makes it, deterministically:

- "full": every SQLite connection of the server gets ``PRAGMA max_page_count`` at the file's size, so a write
  that needs a new page fails with SQLITE_FULL ("database or disk is full"), as on a full disk;
- "read-only": every SQLite connection gets ``PRAGMA query_only``, so every write fails with SQLITE_READONLY
  ("attempt to write a readonly database"), as with a file on a read-only mount;
- "pg read-only": ``ALTER DATABASE … SET default_transaction_read_only = on`` and the server's connections
  ended, as a database turned read-only (a standby) answers (ReadOnlySqlTransaction).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from conftest import captured_lines, make_vault
from mcp_world import ServerThread
from notewell.access.principal import LOCAL_OWNER
from notewell.errors import StoreCannotWrite
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import Runtime, open_runtime
from notewell.store.postgres import database as pg_database
from notewell.store.sqlite import database as sqlite_database
from notewell.store.sqlite.database import SqliteDatabase
from notewell.web.app import build_web_app
from pg import PgCluster
from web_world import csrf_of

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CONDITIONS = {"full": "the store's disk is full", "read-only": "is read-only (the file, its folder",
              "pg read-only": "is read-only (a standby?)"}
FIXES = {"full": "free space on the disk", "read-only": "writable by the user running Notewell",
         "pg read-only": "default_transaction_read_only = off"}


def _every_connection(monkeypatch: pytest.MonkeyPatch, rt: Runtime, pragma: Callable[[sqlite3.Connection], str]
                      ) -> Callable[[], None]:
    """From now on every connection of ``rt``'s SQLite store runs the PRAGMA ``pragma`` gives; returns the undo."""
    connect = SqliteDatabase._connect

    def patched(self: SqliteDatabase) -> sqlite3.Connection:
        conn = connect(self)
        conn.execute(pragma(conn))
        return conn

    db = rt.store.db  # type: ignore[attr-defined]
    monkeypatch.setattr(SqliteDatabase, "_connect", patched)
    # the server's threads open their connections again, with the PRAGMA; the tool calls' writer is let finish
    # first, as Runtime.close does: a connection closed under a statement another thread runs on it crashes
    # the process (once in a full run: the writer's COMMIT of a remember's tool call against the undo's close)
    rt.authentication.tool_calls.flush()
    db.close()

    def undo() -> None:
        monkeypatch.setattr(SqliteDatabase, "_connect", connect)
        rt.authentication.tool_calls.flush()
        db.close()
    return undo


@contextmanager
def _refusing(condition: str, rt: Runtime, monkeypatch: pytest.MonkeyPatch,
              request: pytest.FixtureRequest, db_name: str) -> Iterator[None]:
    if condition == "full":
        undo = _every_connection(monkeypatch, rt, lambda conn: "PRAGMA max_page_count = "
                                 f"{conn.execute('PRAGMA page_count').fetchone()[0]}")
    elif condition == "read-only":
        undo = _every_connection(monkeypatch, rt, lambda _conn: "PRAGMA query_only = 1")
    else:
        cluster: PgCluster = request.getfixturevalue("pg_cluster")

        def read_only(on: bool) -> None:
            with cluster.admin() as conn:
                conn.execute(f"ALTER DATABASE {db_name} SET default_transaction_read_only = {'on' if on else 'off'}")
                conn.execute(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{db_name}'")

        read_only(True)
        undo = lambda: read_only(False)  # noqa: E731
    try:
        yield
    finally:
        undo()


def _store_for(condition: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[str, str]:
    """(the store's path or URL, the PostgreSQL database's name or "") for a test of ``condition``."""
    if condition != "pg read-only":
        return str(tmp_path / "index.db"), ""
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    name = cluster.create_database()
    return cluster.url(name), name


@pytest.fixture(params=list(CONDITIONS))
def condition(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_store_refusing_writes_keeps_reads_answers_writes_503_and_readyz_says_why(
        condition: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """On a full disk every authenticated request was a 500 (the token's last_used_at write raised
    "database or disk is full"), reads too, while /readyz answered 200."""
    for module in (sqlite_database, pg_database):  # a refusal is reported 60 s: 3 s here, for the end of the test
        monkeypatch.setattr(module, "REFUSAL_KEPT_S", 3.0, raising=False)
    db, db_name = _store_for(condition, tmp_path, request)
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n\nheron\n"})
    rt = open_runtime(str(vault), db)
    rt.indexing.sync()
    rt.administration.add_user(LOCAL_OWNER, "ada@example.test", "admin", handle="ada")
    token = rt.administration.mint_token(LOCAL_OWNER, "ada@example.test",
                                         ["knowledge:read", "memory:read", "memory:write"]).secret
    bearer = {"Authorization": f"Bearer {token}"}
    memory = {"content": "kept while the store writes " + "x" * 60_000}  # a new page at least: past a full disk
    try:
        with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False, jobs=False))) as server, \
                httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=30) as client, \
                captured_lines("notewell.access") as access_lines:
            assert client.get("/readyz").status_code == 200
            with _refusing(condition, rt, monkeypatch, request, db_name):
                reads = [client.get("/api/v1/projects", headers=bearer) for _ in range(3)]
                write = client.post("/api/v1/memories", headers=bearer, json=memory)
                opened = client.post("/mcp", json=INIT, headers={**ACCEPT, **bearer})
                called = client.post("/mcp", headers={**ACCEPT, **bearer, "Mcp-Session-Id":
                                                      opened.headers.get("mcp-session-id", ""),
                                                      "MCP-Protocol-Version": "2025-11-25"},
                                     json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                           "params": {"name": "remember", "arguments": memory}})
                ready = client.get("/readyz")
            for read in reads:
                assert read.status_code == 200, read.text
            assert write.status_code == 503, write.text
            assert write.headers["content-type"].startswith("application/problem+json")
            detail = write.json()["detail"]
            assert CONDITIONS[condition] in detail and FIXES[condition] in detail, detail
            assert write.headers["retry-after"] == "60"
            assert opened.status_code == 200, opened.text
            assert called.status_code == 200 and called.json()["result"]["isError"] is True, called.text
            assert CONDITIONS[condition] in called.json()["result"]["content"][0]["text"], called.text
            assert ready.status_code == 503 and CONDITIONS[condition] in ready.json()["reason"], ready.text
            if condition != "full":  # the token's bookkeeping was refused: said once, not once a request
                touches = [line for line in access_lines if line.startswith("op=token.touch ")]
                assert len(touches) == 1 and "outcome=skipped" in touches[0], access_lines
            deadline = time.monotonic() + 30  # the store writes again (PostgreSQL's pool reconnects meanwhile)
            while (again := client.post("/api/v1/memories", headers=bearer, json=memory)).status_code == 503:
                assert time.monotonic() < deadline, again.text
                time.sleep(0.2)
            assert again.status_code == 201, again.text
            while (ready := client.get("/readyz")).status_code == 503:  # at once, or after a full disk's 3 s
                assert time.monotonic() < deadline, ready.text
                time.sleep(0.2)
    finally:
        rt.close()
        if condition == "pg read-only":
            with psycopg.connect(db) as conn:  # nothing half-written: the one memory kept is the one acknowledged
                assert conn.execute("SELECT count(*) FROM memories").fetchone() == (1,)
            request.getfixturevalue("pg_cluster").drop_database(db_name)


# --- the command line: one line naming the disk or the permission, and nothing left behind -----------------


def _one_line(result: object, *needles: str) -> None:
    output = getattr(result, "output", "")
    assert getattr(result, "exit_code", 0) != 0 and "Traceback" not in output, output
    flat = " ".join(output.split())
    assert all(needle in flat for needle in needles), flat


def test_a_backup_and_an_export_to_a_full_disk_say_so_and_leave_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backup to a full disk left a 0-byte .part and a traceback; an export two chained tracebacks and a partial
    folder. The full disk stands as SQLite's own limit on the copy (``max_page_count`` 1: "database or disk is
    full") and, for the export, as the write of its third table failing with ENOSPC."""
    import errno

    from conftest import run_cli
    from notewell.services import portability
    from notewell.store.sqlite import backups

    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    db = str(tmp_path / "index.db")
    assert run_cli("user", "add", "dana@example.org", "--role", "member", "--db", db, "--vault", str(vault)
                   ).exit_code == 0
    connect = sqlite3.connect

    def small(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)  # type: ignore[arg-type]
        conn.execute("PRAGMA max_page_count = 1")
        return conn

    monkeypatch.setattr(backups.sqlite3, "connect", small)
    out = tmp_path / "out"
    out.mkdir()
    _one_line(run_cli("backup", str(out / "b.db"), "--db", db, "--vault", str(vault)),
              f"cannot write {out / 'b.db'}: its disk is full")
    monkeypatch.setattr(backups.sqlite3, "connect", connect)
    write_table, written = portability._write_table, []

    def filling(*args: Any) -> Any:
        written.append(1)
        if len(written) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return write_table(*args)

    monkeypatch.setattr(portability, "_write_table", filling)
    _one_line(run_cli("export", str(out / "ex"), "--db", db, "--vault", str(vault)),
              f"cannot write {out / 'ex'}: its disk is full")
    assert list(out.iterdir()) == []  # no .part, no partial folder
    written.clear()  # the archive form named its hidden scratch folder, and its abandoned read of the store
    archive = run_cli("export", str(out / "ex.tar"), "--db", db, "--vault", str(vault))  # printed a traceback
    _one_line(archive, f"cannot write {out / 'ex.tar'}: its disk is full")
    assert ".notewell-export-" not in archive.output and "Exception ignored" not in archive.output, archive.output
    assert list(out.iterdir()) == []


def test_a_read_only_store_is_one_line_and_doctor_fails_its_store_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a read-only store `memory add` printed an "attempt to write a readonly database" traceback, and doctor
    said all was well (or, failing to open it, to move it away and build a new one). Read-only stands as every
    connection's ``PRAGMA query_only`` and the file's write permission denied (``os.access``); a full disk as the
    store's filesystem reporting no free block."""
    from conftest import run_cli
    from notewell.store.sqlite import database

    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    db = str(tmp_path / "index.db")
    assert run_cli("project", "add", "apollo", "--db", db, "--vault", str(vault)).exit_code == 0
    connect = SqliteDatabase._connect

    def query_only(self: SqliteDatabase) -> sqlite3.Connection:
        conn = connect(self)
        conn.execute("PRAGMA query_only = 1")
        return conn

    access = os.access

    def no_write(path: Any, mode: int, **kwargs: Any) -> bool:  # the file's mode denies writing, as for a user
        return False if mode & os.W_OK and str(path) == db else access(path, mode, **kwargs)  # not root

    monkeypatch.setattr(SqliteDatabase, "_connect", query_only)
    monkeypatch.setattr(os, "access", no_write)
    _one_line(run_cli("memory", "add", "kept", "-p", "apollo", "--db", db, "--vault", str(vault)),
              "is read-only", "writable by the user running Notewell")
    # what only reads still works: a backup (not recorded, and it says so), an export, recall (an outside probe:
    # each was refused as the store opened, so no backup could be taken when one was needed most)
    backup = run_cli("backup", str(tmp_path / "b.db"), "--db", db, "--vault", str(vault))
    assert backup.exit_code == 0 and "has no record of this backup" in " ".join(backup.stdout.split()), backup.output
    with sqlite3.connect(tmp_path / "b.db") as copy:
        assert copy.execute("SELECT id FROM projects WHERE id = 'apollo'").fetchone() == ("apollo",)
    exported = run_cli("export", str(tmp_path / "ex"), "--db", db, "--vault", str(vault))
    assert exported.exit_code == 0 and (tmp_path / "ex" / "manifest.json").is_file(), exported.output
    assert run_cli("memory", "recall", "kept", "--db", db, "--vault", str(vault)).exit_code == 0
    doctor = run_cli("doctor", "--db", db, "--vault", str(vault))
    flat = " ".join(doctor.output.split())
    assert doctor.exit_code != 0 and "FAIL store: cannot write: the store" in flat and "is read-only" in flat, flat
    assert "warn integrity: no damage found; not checked while the store cannot write" in flat, flat
    assert "Traceback" not in flat
    assert "move it away" not in flat and "writable by the user running Notewell" in flat, flat
    monkeypatch.setattr(SqliteDatabase, "_connect", connect)
    monkeypatch.setattr(os, "access", access)

    class Full:
        f_bfree = f_bavail = 0
        f_frsize = 4096

    monkeypatch.setattr(database.os, "statvfs", lambda _path: Full())
    doctor = run_cli("doctor", "--db", db, "--vault", str(vault))
    flat = " ".join(doctor.output.split())
    assert doctor.exit_code != 0 and "FAIL store: cannot write: the store's disk is full" in flat, flat


def test_a_read_only_postgres_database_is_one_line_and_doctor_fails_its_store_check(
        pg_cluster: PgCluster, tmp_path: Path) -> None:
    """ALTER DATABASE … SET default_transaction_read_only = on (as a standby answers): every command, doctor
    included, crashed with a 62-line ReadOnlySqlTransaction traceback from the migrations at open. A command that
    reads answers (the store opens with its pgvector index as it is); one that writes is one line."""
    from conftest import run_cli

    name = pg_cluster.create_database()
    db = pg_cluster.url(name)
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    try:
        assert run_cli("index", "--db", db, "--vault", str(vault)).exit_code == 0
        with pg_cluster.admin() as conn:
            conn.execute(f"ALTER DATABASE {name} SET default_transaction_read_only = on")
        listed = run_cli("user", "list", "--db", db, "--vault", str(vault))
        assert listed.exit_code == 0 and "No users" in listed.output, listed.output
        _one_line(run_cli("user", "add", "ada@example.test", "--role", "member", "--db", db, "--vault", str(vault)),
                  "is read-only (a standby?)", "point --db at the primary")
        doctor = run_cli("doctor", "--db", db, "--vault", str(vault))
        flat = " ".join(doctor.output.split())
        assert doctor.exit_code != 0 and "FAIL store: cannot write: the database at" in flat, flat
        assert "Traceback" not in doctor.output and "default_transaction_read_only = off" in flat, flat
    finally:
        pg_cluster.drop_database(name)


def test_a_wal_deleted_under_a_running_server_refuses_writes_instead_of_losing_them(tmp_path: Path) -> None:
    """An outside probe: `rm index.db-wal` under `notewell serve`, then 3 memories acknowledged (201), search
    finding them, /readyz ready; once the server stopped, all 8 memories written since it started were gone."""
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n\nheron\n"})
    db = tmp_path / "index.db"
    rt = open_runtime(str(vault), str(db))
    rt.indexing.sync()
    rt.administration.add_user(LOCAL_OWNER, "ada@example.test", "admin", handle="ada")
    token = rt.administration.mint_token(LOCAL_OWNER, "ada@example.test", ["memory:read", "memory:write"]).secret
    bearer = {"Authorization": f"Bearer {token}"}
    try:
        with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False, jobs=False))) as server, \
                httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=30) as client:
            kept = client.post("/api/v1/memories", headers=bearer, json={"content": "kept before", "project": "~ada"})
            assert kept.status_code == 201, kept.text
            Path(f"{db}-wal").unlink()
            refused = client.post("/api/v1/memories", headers=bearer, json={"content": "after", "project": "~ada"})
            assert refused.status_code == 503, refused.text
            assert "-wal file" in refused.json()["detail"] and "was deleted" in refused.json()["detail"], refused.text
            # what was acknowledged before the deletion is copied out of it into the store's file (at once, or
            # once the server's own readers on an older snapshot, its embedding runner's, let it): /readyz says when
            deadline = time.monotonic() + 30
            while "was copied into the store's file" not in (ready := client.get("/readyz")).json()["reason"]:
                assert "not yet all copied" in ready.json()["reason"] and time.monotonic() < deadline, ready.text
                time.sleep(0.1)
            assert ready.status_code == 503 and "-wal file" in ready.json()["reason"], ready.text
            # another process (a doctor, a server after a kill -9) reads it there, and it finds no -wal
            other = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            try:
                assert other.execute("SELECT content FROM memories").fetchall() == [("kept before",)]
            finally:
                other.close()
    finally:
        rt.close()


@pytest.mark.parametrize("condition", ["read-only", "pg read-only"])
def test_a_browser_session_whose_generation_moved_on_signs_in_again_on_a_store_refusing_writes(
        condition: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Ending such a session deleted its row before the browser was sent to sign in: on a store refusing writes
    that was a 503 where the answer is "sign in again" (the generation alone refuses the session)."""
    db, db_name = _store_for(condition, tmp_path, request)
    rt = open_runtime(str(make_vault(tmp_path, {"apollo/a.md": "# A\n"})), db)
    rt.administration.add_user(LOCAL_OWNER, "ada@example.test", "admin", handle="ada")
    rt.sign_in.set_password(LOCAL_OWNER, "ada@example.test", "a long pass phrase")
    try:
        with ServerThread(build_web_app(rt)) as server, \
                httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=30) as browser:
            form = browser.get("/signin")
            signed = browser.post("/signin", data={"csrf": csrf_of(form.text), "email": "ada@example.test",
                                                   "password": "a long pass phrase", "next": "/projects"})
            assert signed.status_code == 303 and browser.get("/projects").status_code == 200, signed.text
            rt.administration.set_role(LOCAL_OWNER, "ada@example.test", "member")  # her generation moves on
            with _refusing(condition, rt, monkeypatch, request, db_name):
                ended = browser.get("/projects")
                assert ended.status_code == 303, ended.text
                assert ended.headers["location"] == "/signin?next=/projects"
                assert "Your session has ended" in browser.get("/signin").text
    finally:
        rt.close()
        if db_name:
            request.getfixturevalue("pg_cluster").drop_database(db_name)


def test_a_deleted_wal_is_said_copied_only_once_every_frame_is_and_its_refusal_holds(tmp_path: Path) -> None:
    """A reader of the process on an older snapshot kept the checkpoint of a deleted -wal from copying every frame,
    yet the store said it was copied, and tried no more: a reader in another process then looked for the frames
    in a -wal that was no longer there ('disk I/O error'). And a connection opened after the deletion made a new,
    empty -wal, which ended the refusal while the older connections wrote into the deleted file."""
    db = SqliteDatabase(tmp_path / "index.db")
    with db.transaction() as conn:
        conn.execute("CREATE TABLE m (c TEXT)")
        conn.execute("INSERT INTO m VALUES ('first')")
    reading: list[str] = []
    snapshot, done = threading.Event(), threading.Event()

    def read_on_an_older_snapshot() -> None:  # its own thread, so its own connection of the same database
        db.conn.execute("BEGIN")
        reading.extend(c for (c,) in db.conn.execute("SELECT c FROM m"))
        snapshot.set()
        done.wait(30)
        db.conn.execute("COMMIT")

    reader = threading.Thread(target=read_on_an_older_snapshot)
    reader.start()
    try:
        assert snapshot.wait(30)
        with db.transaction() as conn:
            conn.execute("INSERT INTO m VALUES ('kept')")
        Path(f"{db.path}-wal").unlink()
        refusal = db.wal_deleted()
        assert refusal is not None and "not yet all copied" in str(refusal), refusal
        with pytest.raises(StoreCannotWrite, match="not yet all copied"), db.transaction() as conn:
            conn.execute("INSERT INTO m VALUES ('refused')")
    finally:
        done.set()
        reader.join(30)
    assert reading == ["first"]
    # a connection opened since makes a new -wal: still refused, and the copy is made once the reader let go
    def open_late() -> None:
        with suppress(sqlite3.Error):  # its first read may find the frames not yet copied: 'disk I/O error'
            db.conn.execute("SELECT count(*) FROM m").fetchall()

    late = threading.Thread(target=open_late)
    late.start()
    late.join(30)
    assert Path(f"{db.path}-wal").exists()
    refusal = db.wal_deleted()
    assert refusal is not None and "was copied into the store's file" in str(refusal), refusal
    other = sqlite3.connect(f"file:{db.path}?mode=ro", uri=True)
    try:
        assert other.execute("SELECT c FROM m").fetchall() == [("first",), ("kept",)]
    finally:
        other.close()
        db.close()


def test_a_deleted_wal_is_copied_by_a_connection_of_another_thread_and_new_threads_read(tmp_path: Path) -> None:
    """A review: the copy ran only on the calling thread's own connection. A server's worker threads end when
    idle, and the connections they opened before the deletion with them, so the threads left had only
    connections opened since: nothing could copy the deleted -wal (the process's main thread, which held one,
    runs no store call), and a new thread's connection could not read at all ('disk I/O error', answered as a
    store "moved or deleted")."""
    db = SqliteDatabase(tmp_path / "index.db")
    with db.transaction() as conn:
        conn.execute("CREATE TABLE m (c TEXT)")
    db.close()
    db = SqliteDatabase(tmp_path / "index.db")  # a server starts on the store: its main thread opens a connection
    assert db.conn.execute("SELECT count(*) FROM m").fetchone() == (0,)

    def worker_writes() -> None:  # then its thread ends, and its connection with it
        with db.transaction() as conn:
            conn.execute("INSERT INTO m VALUES (?)", ("acknowledged " * 2000,))  # the file grows: page 1 in the wal

    writer = threading.Thread(target=worker_writes)
    writer.start()
    writer.join(30)
    Path(f"{db.path}-wal").unlink()
    answers: list[Any] = []

    def new_worker() -> None:  # its connection opens after the deletion
        answers.append(db.conn.execute("SELECT count(*) FROM m").fetchone())
        answers.append(db.wal_deleted())

    reader = threading.Thread(target=new_worker)
    reader.start()
    reader.join(30)
    assert answers[0] == (1,), answers
    assert answers[1] is not None and "was copied into the store's file" in str(answers[1]), answers
    other = sqlite3.connect(f"file:{db.path}?mode=ro", uri=True)
    try:
        assert other.execute("SELECT count(*) FROM m").fetchone() == (1,)
    finally:
        other.close()
        db.close()
