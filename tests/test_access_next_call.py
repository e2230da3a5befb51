"""A revoke and an ungrant count on the very next MCP call, in a session already open, on every server.

Two servers on one store (on PostgreSQL, one database: two processes' worth of connection pools) each hold an
open MCP session of alice's. A third store, as the CLI on another machine, removes her grant on
northwind-advisory: the next call in each session no longer finds that project's documents. It then revokes her
token: the next call in each session is refused (401). The identity a call reads (the token with its user, the
projects with the caller's grants, in one statement each) is read on every call: nothing of it outlives one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import runtime_over
from mcp_world import build_world, serve_world, served_vault
from notewell.access.principal import LOCAL_OWNER
from notewell.access.token_secrets import token_id_of
from notewell.store import open_store

PROTOCOL = "2025-11-25"


class Session:
    """One open MCP session over plain HTTP: initialize once, then tools/call after tools/call."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
                        "Content-Type": "application/json"}
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "next-call", "version": "1"}}}
        opened = httpx.post(url, json=init, headers=self.headers, timeout=30)
        assert opened.status_code == 200, opened.text
        self.headers.update({"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": PROTOCOL})
        done = httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers,
                          timeout=30)
        assert done.status_code == 202, done.text

    def call(self, tool: str, arguments: dict[str, Any]) -> httpx.Response:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        return httpx.post(self.url, json=body, headers=self.headers, timeout=30)

    def projects_found(self, query: str) -> set[str]:
        answer = self.call("searchKnowledge", {"query": query})
        assert answer.status_code == 200, answer.text
        result = answer.json()["result"]
        assert not result.get("isError"), result
        return {hit["path"].split("/")[0] for hit in result["structuredContent"]["results"]}


@pytest.fixture
def two_servers(tmp_path: Path, store_url: str) -> Iterator[tuple[list[str], str, str]]:
    """(the two servers' MCP URLs, the store's --db, alice's knowledge:read token): the MCP test world's."""
    world = build_world(tmp_path, store_url)
    try:
        with ExitStack() as servers:
            urls = [servers.enter_context(serve_world(world)).url,
                    servers.enter_context(served_vault(world.vault, store_url, watch=False))]
            yield urls, store_url, world.tokens["alice"]
    finally:
        world.runtime.close()


def test_an_ungrant_and_a_revoke_count_on_the_next_call_of_an_open_session_on_every_server(
        two_servers: tuple[list[str], str, str], tmp_path: Path) -> None:
    urls, db, token = two_servers
    sessions = [Session(url, token) for url in urls]
    for session in sessions:
        assert "northwind-advisory" in session.projects_found("pricing")
    elsewhere = open_store(db)  # a third process's view: the CLI changing access
    try:
        administration = runtime_over(elsewhere, tmp_path).administration
        administration.ungrant(LOCAL_OWNER, "alice@northwind.test", "northwind-advisory")
        for session in sessions:
            assert "northwind-advisory" not in session.projects_found("pricing")
        administration.revoke_token(LOCAL_OWNER, token_id_of(token) or "")
    finally:
        elsewhere.close()
    for session in sessions:
        refused = session.call("searchKnowledge", {"query": "pricing"})
        assert refused.status_code == 401, refused.text
