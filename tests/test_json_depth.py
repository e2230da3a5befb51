"""Deep JSON in any argument (issue 22, item 4): REST answers 400 naming the field, MCP -32602 naming the
argument, nothing is stored that cannot be read back, and the server's log holds no traceback for it.

JSON text is built as text here: Python's own encoder refuses values nested this deeply. Both backends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from brain_world import BrainWorld, brain_world_on, invalid, serve_brain
from mcp_world import ServerThread, connect
from notewell.json_bounds import JSON_DEPTH_MAX, json_depth

pytestmark = pytest.mark.anyio
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = ('{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", '
        '"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}')


def nested(depth: int) -> str:
    """A JSON object nested ``depth`` levels deep, as text: {"a": {"a": … {} …}}."""
    return '{"a": ' * (depth - 1) + "{}" + "}" * (depth - 1)


def nested_value(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrainWorld]:
    yield from brain_world_on(request, tmp_path_factory.mktemp("deep"))


@pytest.fixture(scope="module")
def server(world: BrainWorld) -> Iterator[ServerThread]:
    with serve_brain(world) as served:
        yield served


def _rest(server: ServerThread, world: BrainWorld, method: str, path: str, body: str | None = None
          ) -> httpx.Response:
    headers = {"Authorization": f"Bearer {world.tokens['alice']}", "Content-Type": "application/json"}
    return httpx.request(method, f"http://127.0.0.1:{server.port}/api/v1{path}", content=body, headers=headers,
                         timeout=30)


def _no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    logged = [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert not logged, [f"{r.name}: {r.getMessage()}" for r in logged]


def test_the_depth_is_measured_without_recursion() -> None:
    assert json_depth(1) == 0 and json_depth({}) == 1 and json_depth([[], {"a": [1]}]) == 3
    assert json_depth(nested_value(100_000)) == JSON_DEPTH_MAX + 1  # stops counting once too deep


def test_rest_refuses_a_deep_payload_naming_it_and_reads_back_what_it_kept(
        world: BrainWorld, server: ServerThread, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    session = _rest(server, world, "POST", "/sessions", "{}").json()["session"]["id"]
    events = f"/sessions/{session}/events"
    kept = _rest(server, world, "POST", events, f'{{"eventType": "deep", "payload": {nested(JSON_DEPTH_MAX)}}}')
    assert kept.status_code == 201, kept.text
    for depth in (JSON_DEPTH_MAX + 1, 450, 600):
        refused = _rest(server, world, "POST", events, f'{{"eventType": "deep", "payload": {nested(depth)}}}')
        assert refused.status_code == 400, (depth, refused.text)
        problem = refused.json()
        assert problem["field"] == "payload" and f"at most {JSON_DEPTH_MAX}" in problem["detail"], problem
    for depth in (998, 1000):  # about as deep as Python's parser goes: the body itself may be what is refused
        refused = _rest(server, world, "POST", events, f'{{"eventType": "deep", "payload": {nested(depth)}}}')
        assert refused.status_code == 400 and refused.json()["field"] in ("payload", "body"), refused.text
    learnings = _rest(server, world, "POST", f"/sessions/{session}/outcome",
                      f'{{"success": true, "learnings": [{nested(JSON_DEPTH_MAX)}]}}')
    assert learnings.status_code == 400 and learnings.json()["field"] == "learnings", learnings.text
    read = _rest(server, world, "GET", events)
    assert read.status_code == 200, read.text
    assert [e["payload"] for e in read.json()["items"]] == [nested_value(JSON_DEPTH_MAX)]
    _no_traceback(caplog)


async def test_mcp_refuses_a_deep_argument_naming_it(world: BrainWorld, server: ServerThread,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with connect(server.url, world.tokens["alice"]) as client:
        opened = await client.call_tool("brain_start_session", {})
        session = opened.structured_content["sessionId"]  # type: ignore[index]
        kept = await client.call_tool("brain_log_event", {"sessionId": session, "eventType": "deep",
                                                          "payload": nested_value(JSON_DEPTH_MAX)})
        assert not kept.is_error and kept.structured_content["accepted"], kept.content  # type: ignore[index]
        assert await invalid(client, "brain_log_event", {"sessionId": session, "eventType": "deep",
                                                         "payload": nested_value(JSON_DEPTH_MAX + 1)}) == "payload"
        assert await invalid(client, "brain_report_session_outcome", {
            "sessionId": session, "success": True, "learnings": [nested_value(JSON_DEPTH_MAX)]}) == "learnings"
        assert await invalid(client, "brain_retrieve_knowledge", {
            "prompt": "deep", "context": nested_value(JSON_DEPTH_MAX + 1)}) == "context"
    headers = {**ACCEPT, "Authorization": f"Bearer {world.tokens['alice']}"}
    opened_http = httpx.post(server.url, content=INIT, headers=headers, timeout=30)
    headers |= {"Mcp-Session-Id": opened_http.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
    call = ('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "brain_log_event", '
            f'"arguments": {{"sessionId": "{session}", "eventType": "deep", "payload": {nested(1000)}}}}}}}')
    answer = httpx.post(server.url, content=call, headers=headers, timeout=30)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == -32700, answer.text  # the SDK's parser
    events = _rest(server, world, "GET", f"/sessions/{session}/events")
    assert events.status_code == 200 and len(events.json()["items"]) == 1, events.text
    _no_traceback(caplog)


def test_a_payload_stored_deep_before_the_limit_still_reads(world: BrainWorld, server: ServerThread) -> None:
    """A store written before the limit may hold a payload 450 deep: the session's events still read (the
    payload is shown as a note), where GET answered 500 every time."""
    from notewell.records.brain import EventRecord

    session = _rest(server, world, "POST", "/sessions", "{}").json()["session"]["id"]
    world.runtime.store.brain.add_event(EventRecord(id="evt_legacy", session_id=session, event_type="old",
                                                    payload=nested_value(450), at="2026-01-01T00:00:00Z"), "old")
    read = _rest(server, world, "GET", f"/sessions/{session}/events")
    assert read.status_code == 200, read.text
    [event] = read.json()["items"]
    assert event["eventType"] == "old" and f"more than {JSON_DEPTH_MAX} levels" in event["payload"]["notewell"]


def test_a_payload_number_json_cannot_carry_is_refused_naming_it(world: BrainWorld, server: ServerThread) -> None:
    """1e400 reads as infinity: it was kept and read back as null, silently."""
    session = _rest(server, world, "POST", "/sessions", "{}").json()["session"]["id"]
    events = f"/sessions/{session}/events"
    for number in ("1e400", "-1e400", "NaN", "Infinity"):
        refused = _rest(server, world, "POST", events, f'{{"eventType": "n", "payload": {{"n": {number}}}}}')
        assert refused.status_code == 400, (number, refused.text)
        assert refused.json()["field"] in ("payload", "body"), refused.text
    kept = _rest(server, world, "POST", events, '{"eventType": "n", "payload": {"n": 1e300}}')
    assert kept.status_code == 201, kept.text
    assert [e["payload"] for e in _rest(server, world, "GET", events).json()["items"]] == [{"n": 1e300}]
