"""The request log lines, the host allow-list and the serve command's flags, over real HTTP."""

from __future__ import annotations

import httpx
import pytest

from conftest import run_cli
from mcp_world import World, connect, serve_world
from notewell.http.hosts import AllowedHosts

pytestmark = pytest.mark.anyio
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _fields(line: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in line.split(" "))


async def _until_logged(lines: list[str], op: str, seconds: float = 10, **fields: str) -> dict[str, str]:
    """The server writes a session's close line after the client has gone: poll for it, with a deadline. The log
    is the server's: lines of other tests' sessions (closed as idle) may come first, so `fields` name the one."""
    import anyio

    def found() -> dict[str, str] | None:
        return next((seen for seen in map(_fields, list(lines))
                     if seen["op"] == op and all(seen.get(k) == v for k, v in fields.items())), None)

    with anyio.fail_after(seconds):
        while (line := found()) is None:
            await anyio.sleep(0.01)
    return line


async def test_one_structured_line_per_request_and_never_a_token(mcp_url: str, mcp_world: World,
                                                                 log_lines: list[str]) -> None:
    token = mcp_world.tokens["alice"]
    assert httpx.post(mcp_url, json=INIT, headers=ACCEPT, timeout=10).status_code == 401
    assert httpx.post(mcp_url, json=INIT, headers={**ACCEPT, "Authorization": "Bearer nope"},
                      timeout=10).status_code == 401
    async with connect(mcp_url, token) as client:
        await client.list_tools()
        await client.call_tool("searchKnowledge", {"query": "maximum discount"})
        await client.call_tool("listDocs", {"project": "handbook"})
        with pytest.raises(Exception, match="query"):
            await client.call_tool("searchKnowledge", {"query": "x"})
        with pytest.raises(Exception, match="Tool noSuchTool not found"):
            await client.call_tool("noSuchTool", {})
    ops = [_fields(line) for line in log_lines]
    opened = next(o for o in ops if o["op"] == "mcp.session.open")
    closed = await _until_logged(log_lines, "mcp.session.close", sessionPrefix=opened["sessionPrefix"])
    ops = [_fields(line) for line in log_lines]
    assert [o["reason"] for o in ops if o["op"] == "mcp.unauth"] == ["no_token", "invalid_token"]
    assert "session" not in opened  # the seed's field names (issue 22, item 20)
    assert len(opened["sessionPrefix"]) == 8 and opened["user"] == "alice" and int(opened["total"]) >= 1
    listed = next(o for o in ops if o["op"] == "mcp.tools.list")
    assert int(listed["count"]) >= 9 and listed["proto"] == "2025-11-25"
    tools = [(o["tool"], o["outcome"], o.get("reason")) for o in ops if o["op"] == "mcp.tool"]
    assert tools == [("searchKnowledge", "ok", None), ("listDocs", "error", "refused"),
                     ("searchKnowledge", "error", "invalid_args"), ("noSuchTool", "error", "unknown_tool")]
    assert all(o["sessionPrefix"] == opened["sessionPrefix"] for o in ops if o["op"] == "mcp.tool")
    durations = [float(o["durMs"]) for o in ops if o["op"] == "mcp.tool"]
    assert len(durations) == 4 and all(0 < d < 60_000 for d in durations)  # measured, in milliseconds
    assert closed["toolCalls"] == "4"
    assert not any(token in line or token.split("_", 2)[2] in line for line in log_lines)  # random part may hold "_"


async def test_a_session_with_no_tool_call_closes_as_an_orphan(mcp_url: str, mcp_world: World,
                                                               log_lines: list[str]) -> None:
    async with connect(mcp_url, mcp_world.tokens["bob"]) as client:
        await client.list_tools()
    await _until_logged(log_lines, "mcp.session.orphan")


def test_host_allow_list(mcp_world: World) -> None:
    token = mcp_world.tokens["staff"]
    headers = {**ACCEPT, "Authorization": f"Bearer {token}", "Host": "notes.example.com"}
    with serve_world(mcp_world) as plain:
        assert httpx.post(plain.url, json=INIT, headers=headers, timeout=10).status_code == 421
    from mcp_world import ServerThread
    from notewell.http.app import build_app
    from notewell.http.door import ServeOptions
    from notewell.mcp.registry import choose

    options = ServeOptions(choose(None), allowed_hosts=["notes.example.com"])
    with ServerThread(build_app(mcp_world.runtime, options)) as proxied:
        assert httpx.post(proxied.url, json=INIT, headers=headers, timeout=10).status_code == 200


def test_transport_security_settings() -> None:
    settings = AllowedHosts(["notes.example.com", "10.0.0.5:8443"]).transport_security()
    assert {"127.0.0.1:*", "localhost:*", "notes.example.com", "notes.example.com:*", "10.0.0.5:8443"} <= set(
        settings.allowed_hosts)
    assert "https://notes.example.com" in settings.allowed_origins
    assert AllowedHosts(["*"]).transport_security().enable_dns_rebinding_protection is False


def test_serve_refuses_an_unknown_toolset_in_one_line(tmp_path: object) -> None:
    result = run_cli("serve", "--toolsets", "knowledge,wiki", "--vault", str(tmp_path),
                     "--db", f"{tmp_path}/index.db")
    assert result.exit_code == 1
    assert "--toolsets: unknown toolset 'wiki'" in result.stderr and "Traceback" not in result.stderr


async def test_sixteen_clients_at_once_get_the_same_answers(mcp_url: str, mcp_world: World) -> None:
    import anyio

    answers: list[object] = []

    async def one(who: str) -> None:
        async with connect(mcp_url, mcp_world.tokens[who], "2026-07-28") as client:
            for _ in range(3):
                result = await client.call_tool("searchKnowledge", {"query": "maximum discount"})
                answers.append((who, result.structured_content))

    async with anyio.create_task_group() as tg:
        for i in range(16):
            tg.start_soon(one, ("alice", "staff")[i % 2])
    assert len(answers) == 48
    for who in ("alice", "staff"):
        assert len({repr(a) for w, a in answers if w == who}) == 1
