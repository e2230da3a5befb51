"""getDocs' permissions section against what the server does, tool by tool, through the SDK's client over real
HTTP with real tokens: the scope it says each tool needs is the one tools/list shows it under, and the answer it
says a call without that scope gets is the one the call gets.

A probe found the text saying every tool a token lacks is -32602 "Tool <name> not found", while the memory
toolset's answer -32003 Forbidden naming the scope (XMemo's 401/403); the text is now made from the served tools,
and this test keeps the two from drifting apart again. The resources too: the hand-written text said the sessions
scope covered the brain:// resources, the generated one said nothing of them; it now names each resource's scope
from the served ones, and the test reads each with and without it.
"""

from __future__ import annotations

import re

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_world import World, call, connect, serve_world
from notewell.access.principal import LOCAL_OWNER, SCOPES

pytestmark = pytest.mark.anyio
NOT_FOUND = "- MCP error -32602 \"Tool <name> not found\", as for a tool this server does not serve: "
FORBIDDEN = "- MCP error -32003 \"Forbidden: <name> needs the <scope> scope"


def read_permissions(text: str) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """What the text says: the tools each scope gives, those a call without it finds not found, those refused."""
    scopes_line = next(line for line in text.split("\n") if line.startswith("Scopes decide which tools"))
    needs = {scope: names.split(", ") for scope, names in re.findall(r"([a-z:]+) \(([^)]*)\)", scopes_line)}
    lines = text.split("\n")
    hidden = next((line.removeprefix(NOT_FOUND).split(", ") for line in lines if line.startswith(NOT_FOUND)), [])
    refused = next((line.rpartition("scope): ")[2].split(", ") for line in lines if line.startswith(FORBIDDEN)), [])
    return needs, hidden, refused


def read_resource_scopes(text: str) -> dict[str, list[str]]:
    """What the text says: the resources (URIs and URI templates) each scope reads."""
    line = next(line for line in text.split("\n") if line.startswith("Scopes decide which resources"))
    named = line.partition(": ")[2].partition(". ")[0]
    return {scope: uris.split(", ") for scope, uris in re.findall(r"([a-z:]+) \(([^)]*)\)", named)}


@pytest.mark.parametrize("toolsets", [None, ["knowledge", "memory"]])
async def test_get_docs_says_what_a_call_without_the_scope_answers(mcp_world: World,
                                                                   toolsets: list[str] | None) -> None:
    administration = mcp_world.runtime.administration
    tool_scopes = [s for s in SCOPES if s != "admin"]

    def mint(scopes: list[str]) -> str:
        return administration.mint_token(LOCAL_OWNER, "admin@northwind.test", scopes).secret

    with serve_world(mcp_world, toolsets) as server:
        async with connect(server.url, mint(list(SCOPES))) as client:
            every = [t.name for t in (await client.list_tools()).tools]
            docs = await call(client, "getDocs", {"section": "permissions"})
        needs, hidden, refused = read_permissions(docs["sections"][0]["text"])
        assert sorted(hidden + refused) == sorted(every), (hidden, refused)
        assert sorted(name for names in needs.values() for name in names) == sorted(every), needs
        if toolsets is None:  # the memory toolset's tools are refused naming the scope, the others not found
            assert "search_memory" in refused and "remember" in refused and "readDoc" in hidden, (hidden, refused)
        for scope in tool_scopes:
            async with connect(server.url, mint([scope])) as client:  # the tools the text says the scope gives
                assert sorted(t.name for t in (await client.list_tools()).tools) == sorted(needs.get(scope, []))
            async with connect(server.url, mint([s for s in tool_scopes if s != scope])) as client:
                for name in needs.get(scope, []):  # each called without its scope answers as the text says
                    with pytest.raises(MCPError) as err:
                        await client.call_tool(name, {})
                    if name in refused:
                        assert (err.value.error.code, err.value.error.data) == (-32003, {"scope": scope}), name
                        assert err.value.error.message.startswith(f"Forbidden: {name} needs the {scope} scope")
                    else:
                        assert (err.value.error.code, err.value.error.message) == (-32602, f"Tool {name} not found")


@pytest.mark.parametrize("toolsets", [None, ["knowledge", "memory"]])
async def test_get_docs_says_which_scope_reads_each_resource(mcp_world: World, toolsets: list[str] | None) -> None:
    """Each resource the text names under a scope is listed and read with that scope alone, and is neither listed
    nor read (-32002 "Resource not found") with every other scope; every served resource is named."""
    administration = mcp_world.runtime.administration
    tool_scopes = [s for s in SCOPES if s != "admin"]

    def mint(scopes: list[str]) -> str:
        return administration.mint_token(LOCAL_OWNER, "admin@northwind.test", scopes).secret

    def uri(named: str) -> str:  # a template's URI for a document the admin reads
        return named.replace("{path}", "northwind-advisory/pricing-policy.md")

    async def listed(client: Client) -> list[str]:
        return sorted([r.uri for r in (await client.list_resources()).resources]
                      + [t.uri_template for t in (await client.list_resource_templates()).resource_templates])

    with serve_world(mcp_world, toolsets) as server:
        async with connect(server.url, mint(list(SCOPES))) as client:
            every = await listed(client)
            docs = await call(client, "getDocs", {"section": "permissions"})
        reads = read_resource_scopes(docs["sections"][0]["text"])
        assert sorted(u for uris in reads.values() for u in uris) == every, reads
        assert "notewell://doc/{path}/links" in reads["knowledge:read"], reads
        if toolsets is None:
            assert "brain://user/recent-sessions" in reads["sessions"], reads
        for scope in tool_scopes:
            async with connect(server.url, mint([scope])) as client:
                assert await listed(client) == sorted(reads.get(scope, [])), scope
                for named in reads.get(scope, []):
                    read = await client.read_resource(uri(named))
                    assert read.contents[0].text.startswith("{"), named  # type: ignore[union-attr]
            async with connect(server.url, mint([s for s in tool_scopes if s != scope])) as client:
                assert not set(await listed(client)) & set(reads.get(scope, [])), scope
                for named in reads.get(scope, []):
                    with pytest.raises(MCPError) as err:
                        await client.read_resource(uri(named))
                    assert (err.value.error.code, err.value.error.message) == (
                        -32002, f"Resource not found: {uri(named)}"), named
