"""search_knowledge beside the XMemo tools (issue 22, item 23), over real HTTP with real tokens (tests/mcp_world.py).

XMemo's page sends agents to search_knowledge for the published knowledge bases: the same document search and
permissions as searchKnowledge, in XMemo's argument style (query, limit, path_filter) and result shape (an
opaque ref, the location, a snippet).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_world import World, connect
from notewell.mcp.server import FORBIDDEN

pytestmark = pytest.mark.anyio
TOOL = "search_knowledge"


async def call(client: Client, args: dict[str, Any], name: str = TOOL) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content  # type: ignore[no-any-return]


async def refusal(client: Client, args: dict[str, Any]) -> str:
    result = await client.call_tool(TOOL, args)
    assert result.is_error
    return result.content[0].text  # type: ignore[union-attr]


async def invalid(client: Client, args: dict[str, Any]) -> str:
    with pytest.raises(MCPError) as err:
        await client.call_tool(TOOL, args)
    assert err.value.error.code == -32602
    return err.value.error.data["argument"]  # type: ignore[index,no-any-return]


def locations(found: dict[str, Any]) -> list[str]:
    return [r["location"] for r in found["results"]]


async def test_listed_with_knowledge_read_only(mcp_url: str, mcp_world: World) -> None:
    async with connect(mcp_url, mcp_world.tokens["alice"]) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == TOOL)
        assert set(tool.input_schema["properties"]) == {"query", "limit", "path_filter"}
        assert tool.input_schema["required"] == ["query"] and tool.annotations.read_only_hint  # type: ignore[union-attr]
    async with connect(mcp_url, mcp_world.tokens["no_knowledge"]) as client:  # memory:read alone
        assert TOOL not in [t.name for t in (await client.list_tools()).tools]
        with pytest.raises(MCPError) as refused:  # the memory toolset's: XMemo's 401/403, naming the scope
            await client.call_tool(TOOL, {"query": "discount"})
        assert (refused.value.error.code, refused.value.error.data) == (FORBIDDEN, {"scope": "knowledge:read"})


async def test_xmemo_shaped_results_from_the_same_document_search(mcp_url: str, mcp_world: World) -> None:
    async with connect(mcp_url, mcp_world.tokens["staff"]) as client:
        found = await call(client, {"query": "maximum discount", "limit": 40})
        sasha = await call(client, {"query": "maximum discount"}, "searchKnowledge")
        assert [(r["location"], r["line"], r["snippet"]) for r in found["results"]] \
            == [(h["path"], h["line"], h["snippet"]) for h in sasha["results"]]
        first = found["results"][0]
        assert first["ref"] == f"{first['location']}#L{first['line']}"
        assert first["location"] == f"{first['project']}/{first['path']}" and first["title"]
        doc = await call(client, {"path": first["location"], "offset": first["line"], "limit": 1}, "readDoc")
        assert doc["text"] == first["snippet"]  # the location is readDoc's path, as it is
        assert found["truncated"] is False and "note" not in found


async def test_a_hidden_projects_document_never_appears_and_hidden_is_missing(mcp_url: str, mcp_world: World) -> None:
    # "discount" is in northwind-advisory (alice has a grant) and in projects/apollo/plan.md (alice has none)
    async with connect(mcp_url, mcp_world.tokens["staff"]) as staff:
        assert "projects/apollo/plan.md" in locations(await call(staff, {"query": "discount", "limit": 40}))
    async with connect(mcp_url, mcp_world.tokens["alice"]) as alice:
        seen = locations(await call(alice, {"query": "discount", "limit": 40}))
        assert seen and all(loc.startswith("northwind-advisory/") for loc in seen)
        hidden = await refusal(alice, {"query": "discount", "path_filter": "projects/apollo"})
        missing = await refusal(alice, {"query": "discount", "path_filter": "nowhere/apollo"})
        assert hidden.startswith(f"Error in {TOOL}: path_filter: scope divergence")
        assert hidden.replace("'projects'", "'nowhere'").encode() == missing.encode()
    async with connect(mcp_url, mcp_world.tokens["alice_project"]) as bound:  # a project-scoped token
        assert {r["project"] for r in (await call(bound, {"query": "discount", "limit": 40}))["results"]} \
            == {"northwind-advisory"}
    async with connect(mcp_url, mcp_world.tokens["bob"]) as bob:  # only his own empty home
        empty = await call(bob, {"query": "discount"})
        assert empty["results"] == [] and "No document you may read contains the query" in empty["note"]
        hidden = await refusal(bob, {"query": "discount", "path_filter": "northwind-advisory"})
        missing = await refusal(bob, {"query": "discount", "path_filter": "nowhere-advisory"})
        assert hidden.replace("northwind-advisory", "nowhere-advisory").encode() == missing.encode()


async def test_path_filter_is_a_prefix_of_the_location(mcp_url: str, mcp_world: World) -> None:
    async with connect(mcp_url, mcp_world.tokens["staff"]) as client:
        pri = locations(await call(client, {"query": "discount", "path_filter": "northwind-advisory/pri"}))
        assert pri == ["northwind-advisory/pricing-policy.md"]
        meetings = locations(await call(client, {"query": "discount", "path_filter": "northwind-advisory/meetings/"}))
        assert meetings and all(loc.startswith("northwind-advisory/meetings/") for loc in meetings)
        projects = locations(await call(client, {"query": "discount", "path_filter": "proj", "limit": 40}))
        assert projects == ["projects/apollo/plan.md"]
        assert locations(await call(client, {"query": "discount", "path_filter": "%", "limit": 40})) \
            == locations(await call(client, {"query": "discount", "limit": 40}))
        assert await invalid(client, {"query": "discount", "path_filter": "north%west"}) == "path_filter"


async def test_limit_in_xmemos_style(mcp_url: str, mcp_world: World) -> None:
    async with connect(mcp_url, mcp_world.tokens["staff"]) as client:
        every = await call(client, {"query": "discount", "limit": 40})
        assert len(every["results"]) > 5
        default = await call(client, {"query": "discount"})
        assert default["results"] == every["results"][:5] and default["truncated"] is True
        assert "More documents match" in default["note"]
        clamped = await call(client, {"query": "discount", "limit": 1000})
        assert clamped["results"] == every["results"]
        assert clamped["note"].startswith("limit 1000 is more than the maximum of 40, so at most 40 results are "
                                          "returned.")
        none = await call(client, {"query": "discount", "limit": 0})
        assert none["results"] == [] and none["note"].startswith("limit 0 asks for no results")
        assert await invalid(client, {"query": "discount", "limit": -1}) == "limit"
        assert await invalid(client, {"query": "d"}) == "query"
