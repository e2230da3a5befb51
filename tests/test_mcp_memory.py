"""The memory toolset through the SDK's client over real HTTP with real tokens (tests/mcp_world.py).

People of mcp_world plus, here: alice gets a write grant on "projects"; tokens with memory scopes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_world import MODERN, World, call, connect, embedded
from notewell.access.principal import LOCAL_OWNER
from notewell.mcp.server import FORBIDDEN

pytestmark = pytest.mark.anyio
MEMORY = "memory:read,memory:write"
READ_TOOLS = ["search_memory", "recall", "recall_context"]
ALL_MEMORY_TOOLS = ["remember", *READ_TOOLS, "forget"]


@pytest.fixture(scope="module")
def tokens(mcp_world: World) -> Iterator[dict[str, str]]:
    administration = mcp_world.runtime.administration
    administration.grant(LOCAL_OWNER, "alice@northwind.test", "projects", "write")

    def mint(handle: str, scopes: str = MEMORY, project: str | None = None) -> str:
        return administration.mint_token(LOCAL_OWNER, f"{handle}@northwind.test", scopes.split(","),
                                         project_id=project).secret

    made = {handle: mint(handle) for handle in ("admin", "staff", "alice", "bob")}
    made["alice_projects"] = mint("alice", MEMORY, "projects")
    made["alice_read"] = mint("alice", "memory:read")
    made["alice_docs"] = mint("alice", "memory:read,memory:write,knowledge:read")
    yield made
    administration.ungrant(LOCAL_OWNER, "alice@northwind.test", "projects")


async def refusal(client: Client, name: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(name, args)
    assert result.is_error
    return result.content[0].text  # type: ignore[union-attr]


async def invalid(client: Client, name: str, args: dict[str, Any]) -> str:
    with pytest.raises(MCPError) as err:
        await client.call_tool(name, args)
    assert err.value.error.code == -32602
    return err.value.error.data["argument"]  # type: ignore[index,no-any-return]


async def test_tools_listed_by_scope(mcp_url: str, tokens: dict[str, str]) -> None:
    def memory_tools(tools: list[Any]) -> list[str]:  # other toolsets may also need memory scopes
        return [t.name for t in tools if t.name in ALL_MEMORY_TOOLS]

    async with connect(mcp_url, tokens["alice"]) as client:
        assert memory_tools((await client.list_tools()).tools) == ALL_MEMORY_TOOLS
    async with connect(mcp_url, tokens["alice_read"]) as client:
        assert memory_tools((await client.list_tools()).tools) == READ_TOOLS
        with pytest.raises(MCPError) as err:  # XMemo: "401/403 : le jeton ... ne dispose pas de memory:read"
            await client.call_tool("remember", {"content": "x"})
        assert err.value.error.code == FORBIDDEN and err.value.error.data == {"scope": "memory:write"}
        assert err.value.error.message == (
            "Forbidden: remember needs the memory:write scope, which this token does not hold; connect with a token "
            "that holds it (notewell token mint --scopes memory:write,...)")


@pytest.mark.parametrize("tool", ["search_memory", "recall", "remember"])
async def test_a_memory_tool_without_its_scope_is_a_403_naming_the_scope(mcp_url: str, mcp_world: World,
                                                                          tool: str) -> None:
    """XMemo's page: "401/403 : le jeton est manquant, expiré ou ne dispose pas de memory:read". A token without
    the scope got -32602 "Tool search_memory not found", as for a tool not served; the Sasha tools keep that
    answer, as their pages say (tests/test_mcp_http.py)."""
    import httpx

    token = mcp_world.runtime.administration.mint_token(LOCAL_OWNER, "alice@northwind.test",
                                                        ["knowledge:read"]).secret
    needed = "memory:write" if tool == "remember" else "memory:read"
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}
    async with httpx.AsyncClient(timeout=30) as http:
        opened = await http.post(mcp_url, headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        assert opened.status_code == 200, opened.text
        session = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        called = await http.post(mcp_url, headers=session, json={
            "jsonrpc": "2.0", "id": "call-7", "method": "tools/call",
            "params": {"name": tool, "arguments": {"query": "deploy", "content": "x"}}})
        assert called.status_code == 403, called.text
        challenge = called.headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge and f'scope="{needed}"' in challenge, challenge
        assert called.json()["id"] == "call-7" and called.json()["error"]["code"] == FORBIDDEN, called.text
        assert f"needs the {needed} scope" in called.json()["error"]["message"], called.text
        unknown = await http.post(mcp_url, headers=session, json={
            "jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}})
        assert unknown.status_code == 200 and unknown.json()["error"]["code"] == -32602, unknown.text
        # a review: what the SDK answers before any tool is left to it (a notification is answered 202, a session
        # it does not know 404: the client must open a new one)
        told = await http.post(mcp_url, headers=session, json={
            "jsonrpc": "2.0", "method": "tools/call", "params": {"name": tool, "arguments": {}}})
        assert told.status_code == 202, told.text
        lost = await http.post(mcp_url, headers={**headers, "Mcp-Session-Id": "f" * 32}, json={
            "jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
        assert lost.status_code == 404, lost.text
    async with connect(mcp_url, token, MODERN) as client:  # no session: each request carries its own _meta
        with pytest.raises(MCPError) as err:
            await client.call_tool(tool, {"query": "deploy", "content": "x"})
        assert (err.value.error.code, err.value.error.data) == (FORBIDDEN, {"scope": needed})


async def test_strict_and_tolerant_over_mcp(mcp_url: str, tokens: dict[str, str]) -> None:
    async with connect(mcp_url, tokens["alice"]) as client:
        exact = await call(client, "remember", {"content": "The quokka migration finished; quokkas moved to v2.",
                                                "project": "projects", "path": "apollo/ops", "title": "Quokka move"})
        near = await call(client, "remember", {"content": "Migrating quokkaland needs a maintenance window."})
        assert (exact["project"], near["project"]) == ("projects", "~alice")
        again = await call(client, "remember", {"content": "The quokka migration finished; quokkas moved to v2.",
                                                "project": "projects", "path": "apollo/ops"})
        assert again["ref"] == exact["ref"] and again["deduplicated"]
        strict = await call(client, "search_memory", {"query": "quokka migration"})
        assert [r["ref"] for r in strict["results"]] == [exact["ref"]]
        assert strict["results"][0]["why"] and strict["results"][0]["content"].startswith("The quokka")
        tolerant = await call(client, "recall", {"query": "quokka migration"})
        assert {r["ref"] for r in tolerant["results"]} == {exact["ref"], near["ref"]}
        none = await call(client, "search_memory", {"query": "quokka unicorn"})
        assert none["results"] == [] and "recall" in none["note"]
        scoped = await call(client, "recall", {"query": "quokka", "path_filter": "projects/apollo"})
        assert [r["ref"] for r in scoped["results"]] == [exact["ref"]]


async def test_recall_context_ends_a_chinese_memory_at_its_full_stop(mcp_url: str, tokens: dict[str, str]) -> None:
    """Chinese and Japanese sentences end at 。 with no space after it: a long memory was left out whole, "did
    not fit, not even its first sentence", where its first sentences fit."""
    steps = "".join(f"第{i}步：检查第{i}台服务器的状态并记录日志。" for i in range(1, 40))
    async with connect(mcp_url, tokens["alice"]) as client:
        ref = (await call(client, "remember", {"content": f"部署流程说明。{steps}", "title": "部署流程"}))["ref"]
        pack = await call(client, "recall_context", {"query": "部署流程说明", "max_tokens": 200})
        item = next(i for i in pack["items"] if i["ref"] == ref)
        assert not item["complete"] and 0 < pack["tokens_used"] <= 200
        assert "部署流程说明。" in pack["context"] and "。 […]" in pack["context"]


async def test_supersede_and_forget_leave_search(mcp_url: str, tokens: dict[str, str]) -> None:
    async with connect(mcp_url, tokens["alice"]) as client:
        old = await call(client, "remember", {"content": "Wombat standup is at 9:30.", "memory_type": "working"})
        new = await call(client, "remember", {"content": "Wombat standup is at 10:00.", "memory_type": "working",
                                              "supersedes": old["ref"]})
        assert new["superseded"] == old["ref"]
        for tool in ("search_memory", "recall"):
            found = await call(client, tool, {"query": "wombat standup"})
            assert [r["ref"] for r in found["results"]] == [new["ref"]]
        gone = await call(client, "forget", {"ref": new["ref"], "reason": "standup cancelled"})
        assert gone["forgotten"]
        for tool in ("search_memory", "recall"):
            assert (await call(client, tool, {"query": "wombat standup"}))["results"] == []
        assert "Already forgotten" in await refusal(client, "forget", {"ref": new["ref"], "reason": "again"})


async def test_permission_matrix_over_mcp(mcp_url: str, mcp_world: World, tokens: dict[str, str]) -> None:
    async with connect(mcp_url, tokens["admin"]) as admin:
        await call(admin, "remember", {"content": "numbat policy for the handbook", "project": "handbook"})
    async with connect(mcp_url, tokens["alice"]) as alice:
        await call(alice, "remember", {"content": "numbat plan for projects", "project": "projects"})
        await call(alice, "remember", {"content": "numbat note in alice's home"})
        assert "Not found: handbook" in await refusal(alice, "remember", {"content": "x", "project": "handbook"})
    async with connect(mcp_url, tokens["bob"]) as bob:
        await call(bob, "remember", {"content": "numbat note in bob's home"})
        assert "Not found: projects" in await refusal(bob, "remember", {"content": "x", "project": "projects"})
    expected = {  # token: projects whose memories it sees
        "admin": {"handbook", "projects"},
        "staff": {"handbook", "projects"},
        "alice": {"projects", "~alice"},
        "alice_projects": {"projects"},
        "bob": {"~bob"},
    }
    for who, projects in expected.items():
        async with connect(mcp_url, tokens[who]) as client:
            for tool in ("search_memory", "recall"):
                found = await call(client, tool, {"query": "numbat", "limit": 50})
                assert {r["project"] for r in found["results"]} == projects, (who, tool)
    async with connect(mcp_url, tokens["staff"]) as staff:
        text = await refusal(staff, "search_memory", {"query": "numbat", "path_filter": "~alice"})
        assert "path_filter: scope divergence" in text
        ref = (await call(staff, "recall", {"query": "numbat", "path_filter": "projects"}))["results"][0]["ref"]
        assert "Forbidden" in await refusal(staff, "forget", {"ref": ref, "reason": "staff may not"})


async def test_validation_names_the_argument(mcp_url: str, tokens: dict[str, str]) -> None:
    async with connect(mcp_url, tokens["alice"]) as client:
        assert await invalid(client, "search_memory", {"query": ""}) == "query"
        assert await invalid(client, "search_memory", {"query": "x", "limit": -1}) == "limit"
        assert await invalid(client, "recall", {"query": "x", "memory_type": "episodic"}) == "memory_type"
        with pytest.raises(MCPError) as err:  # a filter takes % too, and says so
            await client.call_tool("search_memory", {"query": "x", "memory_type": "episodic"})
        assert "use one of durable, working, or % for any" in err.value.error.message
        assert await invalid(client, "recall_context", {"query": "x", "max_tokens": 10}) == "max_tokens"
        assert await invalid(client, "remember", {"content": "x", "memory_type": "episodic"}) == "memory_type"
        assert await invalid(client, "remember", {"content": "x", "path": "val/\x1b]0;PWNED\x07"}) == "path"
        assert await invalid(client, "remember", {"content": "x", "title": "a\nb"}) == "title"
        assert await invalid(client, "remember", {"content": "x", "tags": ["ok", "txt\u202eexe"]}) == "tags"


async def test_recall_context_over_mcp(mcp_url: str, tokens: dict[str, str]) -> None:
    async with connect(mcp_url, tokens["alice_docs"]) as client:
        await call(client, "remember", {"content": "Discount rule of thumb: never above ten per cent. Record every "
                                                   "exception in the proposal log.", "project": "projects"})
        pack = await call(client, "recall_context", {"query": "discount proposal", "max_tokens": 200,
                                                     "include_documents": True})
        assert pack["tokens_used"] <= 200 and pack["items"]
        assert {i["kind"] for i in pack["items"]} <= {"memory", "document"}
        assert pack["items"][0]["ref"] in pack["context"]
    async with connect(mcp_url, tokens["alice"]) as client:  # no knowledge:read: no documents
        assert "knowledge:read" in await refusal(client, "recall_context", {"query": "discount",
                                                                            "include_documents": True})


CLIENTS = 20
PER_CLIENT = 200
SHARED = 20


async def test_twenty_clients_writing_in_parallel_over_http(mcp_url: str, mcp_world: World,
                                                            tokens: dict[str, str]) -> None:
    """20 clients x 200 remembers over HTTP: nothing lost, nothing duplicated (every ref compared)."""
    administration = mcp_world.runtime.administration
    secrets = [administration.mint_token(LOCAL_OWNER, "alice@northwind.test", MEMORY.split(",")).secret
               for _ in range(CLIENTS)]

    async def client(n: int) -> list[str]:
        refs = []
        async with connect(mcp_url, secrets[n]) as c:
            for i in range(PER_CLIENT):
                content = f"load shared {i}" if i < SHARED else f"load client {n} item {i}"
                refs.append((await call(c, "remember", {"content": content, "project": "projects",
                                                         "path": "load"}))["ref"])
        return refs

    results = await asyncio.gather(*(client(n) for n in range(CLIENTS)))
    for i in range(SHARED):
        assert len({refs[i] for refs in results}) == 1
    returned = {ref for refs in results for ref in refs}
    assert len(returned) == CLIENTS * (PER_CLIENT - SHARED) + SHARED
    stored = [m.ref for m in mcp_world.runtime.store.memories.all(["projects"]) if m.path == "load"]
    assert len(stored) == len(set(stored)) and set(stored) == returned


# --- XMemo's documented defaults and flow (issue 15) -------------------------------------------------------


async def test_percent_is_any_and_a_trailing_percent_a_prefix(mcp_world: World, mcp_url: str,
                                                              tokens: dict[str, str]) -> None:
    """The page gives path_filter and memory_type the default %; passing it explicitly means "any"."""
    async with connect(mcp_url, tokens["alice"]) as client:
        deep = await call(client, "remember", {"content": "The echidna rollout is frozen until Q3.",
                                               "project": "projects", "path": "apollo/echidna"})
        other = await call(client, "remember", {"content": "Echidna rollout notes for the atlas team.",
                                                "project": "projects", "path": "atlas"})
        mine = await call(client, "remember", {"content": "My echidna rollout checklist.", "memory_type": "working"})
        embedded(mcp_world.runtime)  # recall's answers are compared below: both after the vectors landed
        everything = {deep["ref"], other["ref"], mine["ref"]}
        for tool in ("search_memory", "recall"):
            plain = await call(client, tool, {"query": "echidna rollout", "limit": 50})
            assert {r["ref"] for r in plain["results"]} == everything, tool
            any_all = await call(client, tool, {"query": "echidna rollout", "limit": 50, "path_filter": "%",
                                                "memory_type": "%"})
            assert any_all["results"] == plain["results"], tool
            prefix = await call(client, tool, {"query": "echidna rollout", "path_filter": "projects/apo%"})
            assert [r["ref"] for r in prefix["results"]] == [deep["ref"]], tool
            folder = await call(client, tool, {"query": "echidna rollout", "path_filter": "projects/%", "limit": 50})
            assert {r["ref"] for r in folder["results"]} == {deep["ref"], other["ref"]}, tool
            project_prefix = await call(client, tool, {"query": "echidna rollout", "path_filter": "~al%"})
            assert [r["ref"] for r in project_prefix["results"]] == [mine["ref"]], tool
            working = await call(client, tool, {"query": "echidna rollout", "memory_type": "working"})
            assert [r["ref"] for r in working["results"]] == [mine["ref"]], tool
        packed = await call(client, "recall_context", {"query": "echidna rollout", "path_filter": "%",
                                                       "memory_type": "%"})
        assert {i["ref"] for i in packed["items"]} == everything
        assert await invalid(client, "search_memory", {"query": "echidna", "path_filter": "pro%jects"}) \
            == "path_filter"
        assert "scope divergence" in await refusal(client, "recall", {"query": "echidna", "path_filter": "zz%"})


async def test_forget_without_a_reason_and_forgetting_twice(mcp_url: str, mcp_world: World,
                                                           tokens: dict[str, str]) -> None:
    async with connect(mcp_url, tokens["alice"]) as alice, connect(mcp_url, tokens["bob"]) as bob:
        ref = (await call(alice, "remember", {"content": "The bilby sync runs nightly.", "project": "projects"}))["ref"]
        gone = await call(alice, "forget", {"ref": ref})  # find, review, forget: no reason needed
        assert gone["forgotten"] is True
        again = await refusal(alice, "forget", {"ref": ref})
        assert again.startswith(f"Error in forget: Already forgotten: {ref} was forgotten at ")
        assert await refusal(bob, "forget", {"ref": ref}) == f"Error in forget: Not found: {ref}"  # bob cannot see it
    entry = next(e for e in mcp_world.runtime.administration.audit_log(LOCAL_OWNER) if e.action == "memory.forget"
                 and e.target == ref)
    assert entry.detail["reasonGiven"] is False and entry.detail["reason"] is None


async def test_a_private_memory_through_every_memory_tool(mcp_url: str, tokens: dict[str, str]) -> None:
    """alice's private memory in a shared project: an admin and staff (who read and write every ordinary
    project) see it through no memory tool; alice sees it everywhere."""
    async with connect(mcp_url, tokens["alice"]) as alice:
        private = await call(alice, "remember", {"content": "Wallaby salary bands are under review.",
                                                 "project": "projects", "private": True})
        shared = await call(alice, "remember", {"content": "Wallaby offsite is in June.", "project": "projects"})
        assert private["private"] is True and shared["private"] is False
        for tool in ("search_memory", "recall"):
            mine = await call(alice, tool, {"query": "wallaby", "limit": 50})
            assert private["ref"] in {r["ref"] for r in mine["results"]}, tool
    for other in ("admin", "staff"):
        async with connect(mcp_url, tokens[other]) as client:
            for tool in ("search_memory", "recall"):
                found = await call(client, tool, {"query": "wallaby", "limit": 50})
                assert private["ref"] not in {r["ref"] for r in found["results"]}, (other, tool)
            packed = await call(client, "recall_context", {"query": "wallaby salary"})
            assert private["ref"] not in {i["ref"] for i in packed["items"]}
            assert await refusal(client, "forget", {"ref": private["ref"]}) == \
                f"Error in forget: Not found: {private['ref']}"
            if other == "admin":  # a writer of the project: superseding it is Not found too
                assert await refusal(client, "remember", {"content": "x", "project": "projects", "supersedes":
                                                          private["ref"]}) == f"Error in remember: Not found: " \
                                                                             f"{private['ref']}"


# --- XMemo's path_filter and limit, as its page says (issue 22, items 16 and 17) ------------------------------


async def test_path_filter_is_a_prefix_of_the_full_location(mcp_url: str, tokens: dict[str, str]) -> None:
    """"A logical path prefix": ~alice/auth/tok finds ~alice/auth/tokens (whole segments found nothing)."""
    async with connect(mcp_url, tokens["alice"]) as client:
        tokens_memory = await call(client, "remember", {"content": "Axolotl token rotation happens every 90 days.",
                                                        "path": "auth/tokens"})
        other = await call(client, "remember", {"content": "Axolotl tokenless login for kiosks.", "path": "auth/kiosk"})
        for tool in ("search_memory", "recall"):
            def refs(found: dict[str, Any]) -> list[str]:
                return [r["ref"] for r in found["results"]]

            assert refs(await call(client, tool, {"query": "axolotl", "path_filter": "~alice/auth/tok"})) \
                == [tokens_memory["ref"]], tool
            assert refs(await call(client, tool, {"query": "axolotl", "path_filter": "~alice/auth/tokens/"})) \
                == [tokens_memory["ref"]], tool
            assert set(refs(await call(client, tool, {"query": "axolotl", "path_filter": "~alice/au"}))) \
                == {tokens_memory["ref"], other["ref"]}, tool
            assert refs(await call(client, tool, {"query": "axolotl", "path_filter": "~alice/auth/tokz"})) == [], tool
        packed = await call(client, "recall_context", {"query": "axolotl", "path_filter": "~alice/auth/tok"})
        assert [i["ref"] for i in packed["items"]] == [tokens_memory["ref"]]


async def test_limit_is_clamped_with_a_note_and_only_a_negative_one_refused(mcp_url: str,
                                                                            tokens: dict[str, str]) -> None:
    """XMemo refuses a negative limit only: above 50 is served as 50 and 0 as none, each with a note saying so.
    search_memory also says when more memories match every word than the limit let through (it said nothing), and
    recall when more match than its limit let through, as REST's more says (it said nothing)."""
    more = "More memories match every word than the {} shown: {}narrow with another word, path_filter or " \
           "memory_type."
    more_recall = "More memories match than the {} shown: {}narrow with path_filter or memory_type."
    async with connect(mcp_url, tokens["alice"]) as client:
        for i in range(53):
            await call(client, "remember", {"content": f"Capybara census entry {i}.", "path": "census"})
        for tool in ("search_memory", "recall"):
            strict = tool == "search_memory"
            many = await call(client, tool, {"query": "capybara census", "limit": 500})
            assert len(many["results"]) == 50, tool
            said = more if strict else more_recall
            assert many["note"] == "limit 500 is more than the maximum of 50, so at most 50 results are returned. " \
                + said.format(50, ""), tool
            none = await call(client, tool, {"query": "capybara census", "limit": 0})
            assert none["results"] == [] and none["note"].startswith("limit 0 asks for no results, so none are "
                                                                     "returned; give a limit from 1"), tool
            plain = await call(client, tool, {"query": "capybara census", "limit": 3})
            assert len(plain["results"]) == 3 and plain.get("note") == said.format(3, "raise limit (up to 50), or "), \
                tool
            one = await call(client, tool, {"query": "capybara census entry 7", "limit": 3})
            assert "note" not in one or not strict, (tool, one)
            assert await invalid(client, tool, {"query": "capybara", "limit": -1}) == "limit", tool
            assert await invalid(client, tool, {"query": "capybara", "limit": "5"}) == "limit", tool
        listed = {t.name: t for t in (await client.list_tools()).tools}
        limit = listed["search_memory"].input_schema["properties"]["limit"]
        assert limit["minimum"] == 0 and "maximum" not in limit and "50" in limit["description"]
