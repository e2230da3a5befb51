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

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest

from conftest import captured_lines, make_vault
from mcp_world import ServerThread
from notewell.access.principal import LOCAL_OWNER
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import Runtime, open_runtime
from notewell.store.postgres import database as pg_database
from notewell.store.sqlite import database as sqlite_database
from notewell.store.sqlite.database import SqliteDatabase
from pg import PgCluster

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
    db.close()  # the server's threads open their connections again, with the PRAGMA

    def undo() -> None:
        monkeypatch.setattr(SqliteDatabase, "_connect", connect)
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


@pytest.fixture(params=list(CONDITIONS))
def condition(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_store_refusing_writes_keeps_reads_answers_writes_503_and_readyz_says_why(
        condition: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """On a full disk every authenticated request was a 500 (the token's last_used_at write raised
    "database or disk is full"), reads too, while /readyz answered 200."""
    for module in (sqlite_database, pg_database):  # a refusal is reported 60 s: 3 s here, for the end of the test
        monkeypatch.setattr(module, "REFUSAL_KEPT_S", 3.0, raising=False)
    db_name = ""
    if condition == "pg read-only":
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        db_name = cluster.create_database()
        db = cluster.url(db_name)
    else:
        db = str(tmp_path / "index.db")
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
