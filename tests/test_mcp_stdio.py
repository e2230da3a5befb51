"""`notewell serve --stdio` as a real subprocess, driven by the SDK's stdio client."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from mcp_world import World
from notewell.access.principal import LOCAL_OWNER
from test_mcp_http import INSTRUCTIONS
from test_mcp_tools import LIST_DOCS

pytestmark = pytest.mark.anyio


def _params(world: World, token: str | None, log_level: str | None = None) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}
    if token is not None:
        env["NOTEWELL_TOKEN"] = token
    if log_level is not None:
        env["NOTEWELL_LOG_LEVEL"] = log_level
    return StdioServerParameters(command=sys.executable, env=env, args=[
        "-m", "notewell", "serve", "--stdio", "--no-watch", "--vault", str(world.vault), "--db",
        world.runtime.settings.db])


async def test_stdio_with_a_token_acts_as_that_person_until_it_is_revoked(mcp_world: World, tmp_path: Path) -> None:
    minted = mcp_world.runtime.administration.mint_token(LOCAL_OWNER, "alice@northwind.test", ["knowledge:read"])
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err:
        async with Client(stdio_client(_params(mcp_world, minted.secret, "info"), errlog=err),
                          mode="legacy") as client:
            assert client.instructions == INSTRUCTIONS
            projects = await client.call_tool("listProjects", {})
            assert [p["id"] for p in projects.structured_content["projects"]] == ["northwind-advisory", "~alice"]
            hidden = await client.call_tool("listDocs", {"project": "handbook"})
            assert hidden.is_error and hidden.content[0].text == f"Error in listDocs: {LIST_DOCS}"
            mcp_world.runtime.administration.revoke_token(LOCAL_OWNER, minted.token.id)
            with pytest.raises(MCPError, match="Unauthenticated"):
                await client.call_tool("listProjects", {})
    log = errlog.read_text()
    assert "op=mcp.tool tool=listProjects" in log and "outcome=ok" in log  # NOTEWELL_LOG_LEVEL=info
    assert minted.secret not in log


async def test_stdio_is_quiet_by_default(mcp_world: World, tmp_path: Path) -> None:
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err:
        async with Client(stdio_client(_params(mcp_world, None), errlog=err), mode="legacy") as client:
            await client.call_tool("listProjects", {})
    assert "op=mcp" not in errlog.read_text()


async def test_stdio_without_a_token_is_the_local_owner_and_says_so(mcp_world: World, tmp_path: Path) -> None:
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err:
        async with Client(stdio_client(_params(mcp_world, None), errlog=err)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"searchKnowledge", "readDoc", "search_notes"} <= names  # every toolset, every scope
            found = await client.call_tool("searchKnowledge", {"query": "maximum discount"})
            assert len(found.structured_content["results"]) == 3
    assert "local owner" in errlog.read_text()


def test_stdio_with_a_bad_token_fails_with_one_line(mcp_world: World) -> None:
    import subprocess

    params = _params(mcp_world, "nw_000000000000_" + "y" * 43)
    done = subprocess.run([params.command, *params.args], env=params.env, capture_output=True, text=True,
                          timeout=60, input="", check=False)
    assert done.returncode == 1
    assert "Unauthenticated" in done.stderr and "Traceback" not in done.stderr


def _exchange(params: StdioServerParameters, sent: bytes, count: int) -> list[dict[str, Any]]:
    """``sent`` written to a stdio server's stdin at once, then its first ``count`` answers, each waited for (no
    clock), and the server ended by closing its stdin."""
    import json
    import subprocess

    with subprocess.Popen([params.command, *params.args], env=params.env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as server:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(sent)
        server.stdin.flush()
        answers: list[dict[str, Any]] = [json.loads(server.stdout.readline()) for _ in range(count)]
        server.stdin.close()
        server.wait(timeout=60)
    return answers


def test_a_line_that_is_no_message_gets_an_error_and_the_session_goes_on(mcp_world: World) -> None:
    """Not JSON is -32700, JSON that is no message (a batch, params that are no object) -32600, with the id when it
    could be read (the SDK's server dropped them: a client waited for ever); the next request is answered."""
    import json

    params = _params(mcp_world, None)
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    sent = "".join(json.dumps(line) + "\n" for line in lines) + "not json\n" + (
        '[{"jsonrpc":"2.0","id":5,"method":"ping"}]\n'
        '{"jsonrpc":"2.0","id":10,"method":"tools/list","params":[1]}\n'
        '{"jsonrpc":"2.0","id":11,"method":"ping"}\n')
    answers = _exchange(params, sent.encode(), 5)
    assert answers[0]["id"] == 1 and "result" in answers[0]
    # the id of a message that could be read is echoed (params that are no object: id 10)
    assert [(a["id"], a["error"]["code"]) for a in answers[1:4]] == [(None, -32700), (None, -32600), (10, -32600)]
    assert answers[4] == {"jsonrpc": "2.0", "id": 11, "result": {}}


def test_a_line_that_is_not_utf8_is_a_parse_error_as_over_http(mcp_world: World) -> None:
    """Over stdio a raw 0xFF inside a string was read as U+FFFD and the call went on (remember would have kept
    it); over HTTP the same bytes are -32700."""

    params = _params(mcp_world, None)
    sent = _initialize().encode() + (
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_memory",'
        b'"arguments":{"query":"\xff abc"}}}\n' b'{"jsonrpc":"2.0","id":8,"method":"ping"}\n')
    assert b"\xff" in sent
    answers = _exchange(params, sent, 3)
    assert answers[1]["id"] is None and answers[1]["error"]["code"] == -32700, answers[1]
    assert "not UTF-8" in answers[1]["error"]["message"], answers[1]
    assert answers[2] == {"jsonrpc": "2.0", "id": 8, "result": {}}


def _initialize() -> str:
    import json

    return "".join(json.dumps(line) + "\n" for line in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}))


def test_requests_still_running_when_stdin_closes_are_answered(mcp_world: World) -> None:
    """A client that writes its requests and closes stdin at once (`serve --stdio < requests.jsonl`) got no
    answer for whichever was running when the input ended: the SDK's server stopped and cancelled it."""
    import json
    import subprocess

    params = _params(mcp_world, None)
    calls = [{"jsonrpc": "2.0", "id": 100 + n, "method": "tools/call", "params": {
        "name": "searchKnowledge" if n % 2 else "listProjects", "arguments": {"query": "refund"} if n % 2 else {}}}
        for n in range(12)]
    sent = _initialize() + "".join(json.dumps(call) + "\n" for call in calls)
    done = subprocess.run([params.command, *params.args], env=params.env, input=sent, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    answered = sorted(json.loads(line)["id"] for line in done.stdout.splitlines())
    assert answered == [1, *(call["id"] for call in calls)]


def test_a_line_over_the_bound_is_dropped_and_answered(mcp_world: World) -> None:
    """One line may be at most 4 MB, as an HTTP request's body: a longer one was held whole, however long."""
    import json
    import subprocess

    from notewell.mcp.stdio_input import LINE_BYTES_MAX

    params = _params(mcp_world, None)
    huge = '{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"' + "a" * LINE_BYTES_MAX + '"}}\n'
    within = '{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"' + "b" * (LINE_BYTES_MAX - 80) + '"}}\n'
    sent = _initialize() + huge + within + '{"jsonrpc":"2.0","id":4,"method":"ping"}\n'
    assert len(within.encode()) <= LINE_BYTES_MAX
    done = subprocess.run([params.command, *params.args], env=params.env, input=sent, capture_output=True,
                          text=True, timeout=120, check=False)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [answer["id"] for answer in answers] == [1, None, 3, 4]
    assert answers[1]["error"]["code"] == -32600 and "a line over 4 MB was dropped" in answers[1]["error"]["message"]
    assert answers[2]["result"] == answers[3]["result"] == {}


def test_a_request_stdio_cannot_take_is_answered_and_each_of_one_id_is_answered(mcp_world: World) -> None:
    """An id of no JSON-RPC type (null, 1.5, true, an object) was taken for a notification and never answered;
    params a method cannot take got -32602 "Invalid request parameters" and no word of which; five requests
    sharing one id and still running at EOF lost answers (the wait counted ids, not requests)."""
    import json
    import subprocess

    params = _params(mcp_world, None)
    bad_ids = "".join(f'{{"jsonrpc":"2.0","id":{bad},"method":"ping"}}\n' for bad in ("null", "1.5", "true", '{"a":1}'))
    bad_params = ('{"jsonrpc":"2.0","id":"args","method":"tools/call","params":{"name":"listProjects",'
                  '"arguments":[1]}}\n{"jsonrpc":"2.0","id":"uri","method":"resources/read","params":{"uri":5}}\n'
                  '{"jsonrpc":"2.0","id":"sur","method":"tools/call","params":{"name":"searchKnowledge",'
                  '"arguments":{"query":"\\ud800"}}}\n')
    same_id = "".join('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"searchKnowledge",'
                      '"arguments":{"query":"refund"}}}\n' for _ in range(5))
    sent = _initialize() + bad_ids + bad_params + '{"jsonrpc":"2.0","id":9,"method":"ping"}\n' + same_id
    done = subprocess.run([params.command, *params.args], env=params.env, input=sent, capture_output=True,
                          text=True, timeout=120, check=False)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    refused = [(a["id"], a["error"]["code"]) for a in answers if "error" in a]
    assert refused[:4] == [(None, -32600)] * 4
    assert all("is not a string or a whole number" in a["error"]["message"] for a in answers[1:5])
    assert refused[4:] == [("args", -32602), ("uri", -32602), ("sur", -32602)]
    messages = {a["id"]: a["error"]["message"] for a in answers if "error" in a and a["id"] is not None}
    assert "tools/call: params.arguments" in messages["args"] and "resources/read: params.uri" in messages["uri"]
    assert "params.arguments.query holds a lone UTF-16 surrogate" in messages["sur"]
    assert sum(1 for a in answers if a.get("id") == 7 and "result" in a) == 5
    assert any(a.get("id") == 9 and a.get("result") == {} for a in answers)


def test_an_error_response_with_id_null_and_an_odd_cancellation_pass_quietly(mcp_world: World) -> None:
    """A client's error response with id null (it could not read a message of the server's) was answered as a
    request with a bad id, which JSON-RPC forbids; a cancellation naming a list as requestId ended the server."""
    import json
    import subprocess

    params = _params(mcp_world, None)
    sent = _initialize() + (
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"could not read it"}}\n'
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}\n'
        '{"jsonrpc":"2.0","id":5,"method":"ping"}\n')
    done = subprocess.run([params.command, *params.args], env=params.env, input=sent, capture_output=True,
                          text=True, timeout=120, check=False)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("id") for a in answers] == [1, 5] and answers[1]["result"] == {}, answers
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_a_line_of_exactly_the_bound_is_taken_with_either_ending(ending: bytes) -> None:
    """The bound is the message's: a 4 MiB message ended by CRLF was refused where the same one ended by LF was
    taken; one byte more is refused with either, and the next line is read as ever."""
    import io

    import anyio

    from notewell.mcp.stdio_input import DROPPED_LINE, LINE_BYTES_MAX, OVERSIZED, BoundedLines

    def message(n: int, size: int) -> bytes:
        head = b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"' % n
        return head + b"a" * (size - len(head) - 3) + b'"}}'

    wire = io.BytesIO(message(1, LINE_BYTES_MAX) + ending + message(2, LINE_BYTES_MAX + 1) + ending
                      + message(3, 100) + ending)

    async def read() -> list[str]:
        lines = BoundedLines(wire)
        taken = [await lines.__anext__() for _ in range(3)]
        assert lines.take_refusal() == OVERSIZED and lines.take_refusal() is None
        return taken

    first, second, third = anyio.run(read)
    assert len(first.rstrip("\r\n")) == LINE_BYTES_MAX and second == DROPPED_LINE
    assert third.rstrip("\r\n").endswith('"}}') and '"id":3' in third


async def test_stdio_a_memory_tool_without_its_scope_is_refused_naming_it(mcp_world: World, tmp_path: Path) -> None:
    """XMemo's 401/403 where no HTTP status can carry it: the JSON-RPC error the HTTP door's 403 carries too."""
    from notewell.mcp.server import FORBIDDEN

    minted = mcp_world.runtime.administration.mint_token(LOCAL_OWNER, "alice@northwind.test", ["knowledge:read"])
    with (tmp_path / "stderr.txt").open("w") as err:
        async with Client(stdio_client(_params(mcp_world, minted.secret), errlog=err), mode="legacy") as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("search_memory", {"query": "deploy"})
            assert (refused.value.error.code, refused.value.error.data) == (FORBIDDEN, {"scope": "memory:read"})
            with pytest.raises(MCPError, match="Tool searchBrainz not found"):
                await client.call_tool("searchBrainz", {"query": "deploy"})
