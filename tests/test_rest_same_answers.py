"""One question, three doors, one answer: REST, MCP (over real HTTP, the same token) and the CLI (--json)
find the same lines and the same memories in the same order, on both backends."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import run_cli
from mcp_world import connect
from rest_world import RestWorld

pytestmark = pytest.mark.anyio


async def _mcp(rest: RestWorld, token: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    url = rest.base.removesuffix("/api/v1") + "/mcp"
    async with connect(url, rest.tokens[token]) as client:
        result = await client.call_tool(tool, args)
    assert not result.is_error, result
    return result.structured_content  # type: ignore[return-value]


def _cli(rest: RestWorld, *args: str) -> Any:
    settings = rest.runtime.settings
    done = run_cli(*args, "--vault", str(settings.vault), "--db", str(settings.db), "--json")
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


async def test_the_same_search_by_rest_mcp_and_cli(rest: RestWorld) -> None:
    rest_lines = [(m["path"], m["line"], m["text"])
                  for m in rest.get("/search?q=day%20rate&limit=100", "admin_all").json()["matches"]]
    by_mcp = await _mcp(rest, "admin_all", "search_notes", {"query": "day rate", "limit": 100})
    mcp_lines = [(m["path"], m["line"], m["text"]) for m in by_mcp["matches"]]
    # the command line acts as the local owner: every project, and the homes of this vault are empty
    cli_lines = [(m["path"], m["line"], m["text"])
                 for m in _cli(rest, "search", "day rate", "--all-lines", "--smart-case", "--limit", "100")["matches"]]
    assert len(rest_lines) >= 5
    assert rest_lines == mcp_lines == cli_lines


async def test_the_same_memory_search_by_rest_mcp_and_cli(rest: RestWorld) -> None:
    by_rest = rest.get("/memories/search?q=pricing&limit=10", "alice_rw").json()["results"]
    by_mcp = (await _mcp(rest, "alice_rw", "search_memory", {"query": "pricing", "limit": 10}))["results"]
    by_cli = _cli(rest, "memory", "search", "pricing", "--limit", "10", "--as", "alice@northwind.test")["results"]
    ranked_rest = [(r["memory"]["ref"], r["memory"]["title"], r["score"]) for r in by_rest]
    assert len(ranked_rest) >= 2
    assert ranked_rest == [(r["ref"], r["title"], r["score"]) for r in by_mcp]
    assert ranked_rest == [(r["ref"], r["title"], r["score"]) for r in by_cli]
