"""The standing hostile-input suite for the MCP door: every tool, arguments generated from its own schema.

Hypothesis draws a tool the token can see and arguments from its input schema, mixed with hostile values
(tests/hostile.py). Every answer must be a result, a refusal (isError) or invalid arguments (-32602):
never an internal error, never a 5xx, never a hang; each arrives within the search time budget plus a
margin. Two tokens call: an admin holding every scope, and a member holding read on one project.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostile import arguments
from mcp_world import World, build_world, serve_world
from notewell.access.principal import LOCAL_OWNER
from notewell.limits import SCAN_BUDGET_S

ANSWER_WITHIN_S = SCAN_BUDGET_S + 10  # the longest a search may take, and a margin for a loaded machine
INVALID_PARAMS = -32602
PARSE_ERROR = -32700  # the SDK's answer to a lone surrogate (\ud800): not valid Unicode text
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
ALL_SCOPES = ["knowledge:read", "knowledge:write", "memory:read", "memory:write", "sessions"]


class Caller:
    """One MCP session over raw HTTP: the JSON-RPC answer of each call, as the client sees it."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=ANSWER_WITHIN_S, headers={**ACCEPT, "Authorization": f"Bearer {token}"})
        opened = self.http.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}})
        assert opened.status_code == 200, opened.text
        self.http.headers.update({"Mcp-Session-Id": opened.headers["mcp-session-id"],
                                  "MCP-Protocol-Version": "2025-11-25"})
        self.http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.tools: list[dict[str, Any]] = self.rpc("tools/list", {})["result"]["tools"]

    def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})  # \ud800 as an escape
        response = self.http.post(self.url, content=body.encode("ascii"))
        assert response.status_code < 500, response.text
        answer: dict[str, Any] = response.json()
        return answer


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    db = None
    if request.param == "postgres":
        cluster = request.getfixturevalue("pg_cluster")
        db = cluster.url(cluster.create_database())
    built = build_world(tmp_path_factory.mktemp("hostile-world"), db)
    built.tokens["all"] = built.runtime.administration.mint_token(LOCAL_OWNER, "admin@northwind.test",
                                                                  ALL_SCOPES).secret
    yield built
    built.runtime.close()


@pytest.fixture(scope="module")
def callers(world: World) -> Iterator[list[Caller]]:
    with serve_world(world) as server:
        made = [Caller(server.url, world.tokens["all"]), Caller(server.url, world.tokens["alice"])]
        yield made
        for caller in made:
            caller.http.close()


def _check(tool: str, answer: dict[str, Any]) -> None:
    if "error" in answer:
        assert answer["error"]["code"] in (INVALID_PARAMS, PARSE_ERROR), (tool, answer)
        return
    result = answer["result"]
    if result.get("isError"):
        text = result["content"][0]["text"]
        assert "internal error" not in text.lower(), (tool, text)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_no_tool_answers_an_internal_error_or_hangs(callers: list[Caller], data: st.DataObject) -> None:
    caller = data.draw(st.sampled_from(callers))
    tool = data.draw(st.sampled_from(caller.tools), label="tool")
    args = data.draw(arguments(tool["inputSchema"]), label="arguments")
    _check(tool["name"], caller.rpc("tools/call", {"name": tool["name"], "arguments": args}))


def test_every_tool_is_exercised(callers: list[Caller]) -> None:
    names = {t["name"] for t in callers[0].tools}
    assert {"searchKnowledge", "readDoc", "search_notes"} <= names
    assert len(names) >= 10


def test_the_server_still_answers_after_the_suite(callers: list[Caller], world: World) -> None:
    answer = callers[0].rpc("tools/call", {"name": "searchKnowledge", "arguments": {"query": "maximum discount"}})
    assert answer["result"]["structuredContent"]["results"]


def test_the_vault_is_untouched(world: World) -> None:
    assert not any(p.name == "passwd" for p in Path(world.vault).rglob("*"))


def _small(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    return {"integer": 1, "number": 1, "boolean": False, "array": [], "object": {}}.get(
        kind if isinstance(kind, str) else "", "ab")


def test_an_answer_never_echoes_a_huge_value_back(callers: list[Caller]) -> None:
    """An outside probe: a 200,000-character value of edit_note's operation, remember's memory_type, forget's
    ref, brain_log_event's sessionId, ... came back whole in the error (about 200 KB in an agent's context), and
    a 1 MB tool name in "Tool … not found"."""
    caller = callers[0]
    huge = "x" * 200_000
    for tool in caller.tools:
        schema = tool["inputSchema"]
        base = {name: _small(schema["properties"][name]) for name in schema.get("required", [])}
        for name in schema["properties"]:
            answer = caller.rpc("tools/call", {"name": tool["name"], "arguments": {**base, name: huge}})
            if "error" in answer or answer["result"].get("isError"):
                assert len(json.dumps(answer)) < 6000, (tool["name"], name, len(json.dumps(answer)))
    unknown = caller.rpc("tools/call", {"name": "n" * 1_000_000, "arguments": {}})
    assert unknown["error"]["code"] == INVALID_PARAMS and len(json.dumps(unknown)) < 1000, len(json.dumps(unknown))
