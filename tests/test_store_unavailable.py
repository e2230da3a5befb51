"""A PostgreSQL store that goes away under a running server: every door answers 503 naming the reason, never a
500 with a traceback (the MCP door's bearer check read the store in a middleware and raised out of it), and the
server serves again when the database is back. The wait for a connection is shortened here so the test is quick.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from conftest import make_vault
from mcp_world import ServerThread
from notewell.access.principal import LOCAL_OWNER
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import Runtime, open_runtime
from notewell.store.postgres import database
from pg import PgCluster

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def served(pg_cluster: PgCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str, str]]:
    """(the server's URL, a token, the database's name) of a server on a database of its own."""
    monkeypatch.setattr(database, "POOL_TIMEOUT_S", 1.0)
    name = pg_cluster.create_database()
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n\nheron\n"})
    rt: Runtime = open_runtime(str(vault), pg_cluster.url(name))
    rt.indexing.sync()
    rt.administration.add_user(LOCAL_OWNER, "ada@example.test", "admin", handle="ada")
    token = rt.administration.mint_token(LOCAL_OWNER, "ada@example.test", ["knowledge:read", "memory:read"]).secret
    rt.sign_in.set_password(LOCAL_OWNER, "ada@example.test", "ada pass phrase")
    try:
        with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False, jobs=False))) as server:
            yield f"http://127.0.0.1:{server.port}", token, name
    finally:
        rt.close()


def test_a_database_gone_away_is_a_503_at_every_door_not_a_500(served: tuple[str, str, str],
                                                               pg_cluster: PgCluster, log_lines: list[str]) -> None:
    url, token, name = served
    bearer = {"Authorization": f"Bearer {token}"}
    with httpx.Client(timeout=30) as client, httpx.Client(base_url=url, timeout=30) as browser:
        signin = browser.get("/signin").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', signin)
        assert csrf is not None
        browser.post("/signin", data={"email": "ada@example.test", "password": "ada pass phrase",
                                      "csrf": csrf.group(1), "next": "/projects"})
        assert browser.get("/projects").status_code == 200
        assert client.get(f"{url}/api/v1/projects", headers=bearer).status_code == 200
        with pg_cluster.admin() as conn:  # the server's connections end, and no new one can be made
            conn.execute(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS false")
            conn.execute(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")
        try:
            rest = client.get(f"{url}/api/v1/projects", headers=bearer)
            mcp = client.post(f"{url}/mcp", json=INIT, headers={**ACCEPT, **bearer})
            web = browser.get("/projects")
        finally:
            with pg_cluster.admin() as conn:
                conn.execute(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS true")
        for answer in (rest, mcp, web):
            assert answer.status_code == 503, answer.text
            assert answer.headers["retry-after"] == "5" and "Traceback" not in answer.text
            assert "gave no connection" in answer.text or "went away" in answer.text
        assert rest.headers["content-type"].startswith("application/problem+json")
        assert web.headers["content-type"].startswith("text/html") and "Unavailable" in web.text
        deadline = time.monotonic() + 60  # the pool reconnects with its own backoff: wait for it, not for a time
        while (back := client.get(f"{url}/api/v1/projects", headers=bearer)).status_code == 503:
            assert time.monotonic() < deadline, back.text
        assert back.status_code == 200, back.text  # the database is back: so is the server
        assert client.post(f"{url}/mcp", json=INIT, headers={**ACCEPT, **bearer}).status_code == 200
    assert any(line.startswith("op=store.unavailable ") for line in log_lines)
    assert not any("Traceback" in line for line in log_lines)
    with psycopg.connect(pg_cluster.url(name)) as conn:  # nothing was left half-done
        assert conn.execute("SELECT 1").fetchone() == (1,)
