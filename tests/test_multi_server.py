"""Several Notewell servers on one PostgreSQL database.

Two real ``notewell serve`` processes on two ports share one database that one indexer filled: both
answer searches alike, a memory remembered through one is found through the other at once, and a
token revoked elsewhere fails on each at its next call. The same property at the
service level, with two separate stores (two connection pools): a memory written through one is found
through the other at once, a revoke through one counts on the other.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from conftest import NORTHWIND, runtime_over
from mcp_world import connect, free_port
from notewell.access.principal import LOCAL_OWNER
from notewell.errors import Unauthenticated
from notewell.runtime import open_runtime
from notewell.store import open_store

STARTUP_S = 60


@dataclass
class Fleet:
    urls: list[str]
    tokens: dict[str, str]
    token_ids: dict[str, str]
    db: str


def _wait_healthy(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"notewell serve exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}"
                               if proc.stderr else "notewell serve exited")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"notewell serve on port {port} did not become healthy in {STARTUP_S} s")


@pytest.fixture
def fleet(tmp_path: Path, pg_url: str) -> Iterator[Fleet]:
    vault = tmp_path / "vault"
    shutil.copytree(NORTHWIND, vault, ignore=shutil.ignore_patterns(".notewell"))
    rt = open_runtime(str(vault), pg_url)  # the one indexer: the only writer of documents
    try:
        rt.indexing.sync()
        rt.indexing.sync_projects()
        rt.administration.add_user(LOCAL_OWNER, "ana@northwind.test", "staff", handle="ana")
        tokens, ids = {}, {}
        for name in ("ana", "ana2"):
            minted = rt.administration.mint_token(LOCAL_OWNER, "ana@northwind.test",
                                          ["knowledge:read", "memory:read", "memory:write"])
            tokens[name], ids[name] = minted.secret, minted.token.id
    finally:
        rt.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}
    procs, urls = [], []
    try:
        for _ in range(2):  # started together: both migrate and sync projects at the same moment
            port = free_port()
            procs.append((port, subprocess.Popen(
                [sys.executable, "-m", "notewell", "serve", "--port", str(port), "--vault", str(vault), "--db", pg_url],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
            urls.append(f"http://127.0.0.1:{port}/mcp")
        for port, proc in procs:
            _wait_healthy(port, proc)
        yield Fleet(urls, tokens, ids, pg_url)
    finally:
        for _, proc in procs:
            proc.terminate()
        for _, proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def _call(url: str, token: str, tool: str, arguments: dict[str, object]) -> dict[str, object]:
    async with connect(url, token) as client:
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, result
        assert result.structured_content is not None
        return result.structured_content


async def _search(url: str, token: str, query: str) -> dict[str, object]:
    return await _call(url, token, "searchKnowledge", {"query": query})


@pytest.mark.anyio
async def test_two_servers_share_documents_memories_and_revokes(fleet: Fleet, tmp_path: Path) -> None:
    for query in ("discount", "fixed fee", "Kestrel"):
        first, second = [await _search(url, fleet.tokens["ana"], query) for url in fleet.urls]
        assert first == second and first["results"], query
    first_url, second_url = fleet.urls
    written = await _call(first_url, fleet.tokens["ana"], "remember",
                          {"content": "The Kestrel renewal is priced at the 2026 day rate."})
    found = await _call(second_url, fleet.tokens["ana"], "search_memory", {"query": "kestrel renewal"})
    assert [r["ref"] for r in found["results"]] == [written["ref"]]  # type: ignore[index, union-attr]
    access_store = open_store(fleet.db)  # a third process's view: the CLI revoking a token
    try:
        runtime_over(access_store, tmp_path).administration.revoke_token(LOCAL_OWNER, fleet.token_ids["ana"])
    finally:
        access_store.close()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    for url in fleet.urls:
        revoked = httpx.post(url, json=init, headers={**headers, "Authorization": f"Bearer {fleet.tokens['ana']}"},
                             timeout=10)
        assert revoked.status_code == 401, url
        still = httpx.post(url, json=init, headers={**headers, "Authorization": f"Bearer {fleet.tokens['ana2']}"},
                           timeout=10)
        assert still.status_code == 200, url


def test_two_stores_see_each_others_memories_and_revokes_at_once(pg_url: str, tmp_path: Path) -> None:
    one, two = open_store(pg_url), open_store(pg_url)
    try:
        rt_one, rt_two = runtime_over(one, tmp_path), runtime_over(two, tmp_path)
        rt_one.administration.add_project(LOCAL_OWNER, "apollo")
        rt_one.administration.add_user(LOCAL_OWNER, "lee@example.com", "member", handle="lee")
        rt_one.administration.grant(LOCAL_OWNER, "lee@example.com", "apollo", "write")
        minted = rt_one.administration.mint_token(LOCAL_OWNER, "lee@example.com", ["memory:read", "memory:write"])
        secret = minted.secret
        written = rt_one.memory.remember(rt_one.authentication.authenticate(secret),
                                         "The Kestrel invoice is due on Friday.", path="apollo/decisions")
        found = rt_two.memory.search_memory(rt_two.authentication.authenticate(secret), "kestrel invoice")
        assert [r.memory.ref for r in found.results] == [written.memory.ref]
        rt_two.administration.revoke_token(LOCAL_OWNER, minted.token.id)
        with pytest.raises(Unauthenticated):
            rt_one.authentication.authenticate(secret)
    finally:
        one.close()
        two.close()
