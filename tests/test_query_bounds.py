"""Every search argument is bounded before any work starts (issue 14, defect 3).

On the code before the fix a long query was planned (quadratically) and searched, and a 1 MB plain query
answered "internal error" (RE2: pattern too large).
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from conftest import NORTHWIND, IndexedVault, run_cli
from mcp_world import World, connect
from notewell.search.literals import regex_plan

pytestmark = pytest.mark.anyio

LONG_QUERIES = ["discount " * 200, "x" * 1_000_000, "(a|" * 400 + "b" + ")" * 400]
SEARCHES: list[tuple[str, dict[str, Any]]] = [
    ("searchKnowledge", {}),
    ("searchBrain", {"brain": "northwind-advisory/brains/website"}),
    ("search_notes", {}),
    ("search_notes", {"regex": True}),
]


@pytest.mark.parametrize(("tool", "args"), SEARCHES)
@pytest.mark.parametrize("query", LONG_QUERIES, ids=["1800-plain", "1M-plain", "nested-regex"])
async def test_a_long_query_is_invalid_arguments_naming_the_limit(mcp_url: str, mcp_world: World, tool: str,
                                                                  args: dict[str, Any], query: str) -> None:
    async with connect(mcp_url, mcp_world.tokens["staff"]) as client:
        with pytest.raises(MCPError) as err:
            await client.call_tool(tool, {**args, "query": query})
    assert err.value.error.code == -32602
    assert err.value.error.data == {"argument": "query"}
    assert err.value.error.message == (f"Invalid arguments for tool {tool}: query: is {len(query)} characters; "
                                       "keep it to 1000 or fewer")


@pytest.mark.parametrize(("tool", "args"), [
    ("readDoc", {}), ("listDocs", {"project": "handbook"}), ("search_notes", {"query": "discount"}),
])
async def test_a_long_path_is_invalid_arguments(mcp_url: str, mcp_world: World, tool: str,
                                                args: dict[str, Any]) -> None:
    path = "a/" * 3000
    async with connect(mcp_url, mcp_world.tokens["staff"]) as client:
        with pytest.raises(MCPError) as err:
            await client.call_tool(tool, {**args, "path": path})
    assert err.value.error.data == {"argument": "path"}
    assert "keep it to 4096 or fewer" in err.value.error.message


async def test_the_longest_query_allowed_is_answered(mcp_url: str, mcp_world: World) -> None:
    query = ("discount " * 200)[:1000]  # the documented limit (docs/security.md), literally
    async with connect(mcp_url, mcp_world.tokens["staff"]) as client:
        result = await client.call_tool("search_notes", {"query": query})
        hostile = await client.call_tool("search_notes", {"query": "(" * 499 + "a" + ")" * 499, "regex": True})
    assert not result.is_error and result.structured_content is not None
    assert not hostile.is_error


def test_the_cli_refuses_a_long_query(northwind: IndexedVault) -> None:
    res = run_cli("search", "y" * 5000, "--vault", str(NORTHWIND), "--db", northwind.db)
    assert res.exit_code != 0
    assert "query: is 5000 characters; keep it to 1000 or fewer" in res.stderr


def test_planning_a_deeply_nested_regex_never_raises() -> None:
    for depth in (100, 499, 2000):
        regex_plan("(" * depth + "abc" + ")" * depth)


async def test_a_regex_too_large_for_re2_is_invalid_arguments(mcp_url: str, mcp_world: World) -> None:
    async with connect(mcp_url, mcp_world.tokens["staff"]) as client:
        with pytest.raises(MCPError) as err:
            await client.call_tool("search_notes", {"query": "\\pL{1,1000}\\pN{1,1000}", "regex": True})
    assert err.value.error.data == {"argument": "query"}
    assert "MB a regex may use" in err.value.error.message


async def test_search_notes_refuses_an_empty_query_and_searches_spaces_as_written(mcp_url: str,
                                                                                   mcp_world: World) -> None:
    """Major Vault's page makes query required, of at least 1 character, plain text meaning itself: "" is invalid
    arguments naming query and the fix, as in every document search (the engine refuses it), in either mode; a
    query of spaces is text like any other (indented lines), found as searchKnowledge finds it (docs/search.md:
    a plan with no literal scans), not a blank to refuse as the tolerant tools refuse one, which look for words."""
    async with connect(mcp_url, mcp_world.tokens["staff"]) as client:
        for regex in (False, True):
            with pytest.raises(MCPError) as err:
                await client.call_tool("search_notes", {"query": "", "regex": regex})
            assert err.value.error.code == -32602 and err.value.error.data == {"argument": "query"}
            assert err.value.error.message == ("Invalid arguments for tool search_notes: query: must not be empty; "
                                               "give the text to look for")
        notes = (await client.call_tool("search_notes", {"query": "   "})).structured_content
        knowledge = (await client.call_tool("searchKnowledge", {"query": "   "})).structured_content
    assert notes is not None and knowledge is not None
    assert notes["matches"] and all("   " in m["text"] for m in notes["matches"])
    assert knowledge["results"] and all("   " in r["snippet"] for r in knowledge["results"])
