"""MCP sessions are bounded per token and expire in minutes (issue 14, defect 5).

On the code before the fix one memory:read token opened 10,000 sessions, after which every other user
got 503 "Too many open sessions", and sessions idled out only after 30 minutes.
"""

from __future__ import annotations

import httpx

from mcp_world import World
from notewell.access.principal import LOCAL_OWNER
from notewell.mcp.session_cap import SESSION_IDLE_S

SESSIONS_PER_TOKEN = 16  # the documented cap (docs/security.md), literally

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _post(client: httpx.Client, url: str, body: object, token: str, session: str | None = None) -> httpx.Response:
    headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
    if session:
        headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    return client.post(url, json=body, headers=headers)


def _open(client: httpx.Client, url: str, token: str) -> str:
    response = _post(client, url, INIT, token)
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    assert _post(client, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, token, session).status_code \
        == 202
    return session


def test_a_token_over_its_cap_loses_its_oldest_idle_session_and_nobody_else_is_refused(
        mcp_url: str, mcp_world: World) -> None:
    hog = mcp_world.runtime.administration.mint_token(LOCAL_OWNER, "bob@northwind.test", ["memory:read"]).secret
    with httpx.Client(timeout=10) as client:
        sessions = [_open(client, mcp_url, hog) for _ in range(SESSIONS_PER_TOKEN + 3)]
        gone = [s for s in sessions if _post(client, mcp_url, LIST, hog, s).status_code == 404]
        assert gone == sessions[:3]  # the oldest idle ones, to make room
        assert all(_post(client, mcp_url, LIST, hog, s).status_code == 200 for s in sessions[3:])
        other = _open(client, mcp_url, mcp_world.tokens["alice"])
        assert _post(client, mcp_url, LIST, mcp_world.tokens["alice"], other).status_code == 200
        for s in sessions[3:]:
            client.delete(mcp_url, headers={"Authorization": f"Bearer {hog}", "Mcp-Session-Id": s})


def test_idle_sessions_expire_in_minutes() -> None:
    assert 60 <= SESSION_IDLE_S <= 600


def test_a_session_that_only_listens_on_a_get_stream_is_idle(mcp_url: str, mcp_world: World) -> None:
    """The conformance suite leaves each session with its GET stream open; they must not fill the cap."""
    from contextlib import ExitStack

    hog = mcp_world.runtime.administration.mint_token(LOCAL_OWNER, "bob@northwind.test", ["memory:read"]).secret
    with httpx.Client(timeout=10) as client, ExitStack() as streams:
        sessions = [_open(client, mcp_url, hog) for _ in range(SESSIONS_PER_TOKEN)]
        for s in sessions:
            listening = streams.enter_context(client.stream("GET", mcp_url, headers={
                "Accept": "text/event-stream", "Authorization": f"Bearer {hog}", "Mcp-Session-Id": s,
                "MCP-Protocol-Version": "2025-11-25"}))
            assert listening.status_code == 200
        newest = _open(client, mcp_url, hog)  # before the fix: 429, every session counted as busy
        assert _post(client, mcp_url, LIST, hog, sessions[0]).status_code == 404
        assert _post(client, mcp_url, LIST, hog, newest).status_code == 200


def test_a_get_stream_asked_to_resume_opens_as_a_new_one(mcp_url: str, mcp_world: World) -> None:
    """No stream is resumable (no event store): a Last-Event-ID is not an error (the SDK answered 500)."""
    token = mcp_world.tokens["alice"]
    with httpx.Client(timeout=10) as client:
        session = _open(client, mcp_url, token)
        with client.stream("GET", mcp_url, headers={
                "Accept": "text/event-stream", "Authorization": f"Bearer {token}", "Mcp-Session-Id": session,
                "MCP-Protocol-Version": "2025-11-25", "Last-Event-ID": "1"}) as listening:
            assert listening.status_code == 200
        client.delete(mcp_url, headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session})


def test_a_request_id_of_no_json_rpc_type_is_refused_not_dropped(mcp_url: str, mcp_world: World) -> None:
    """null, a fraction, an object: -32600 naming it (it was taken for a notification: 202, never run)."""
    token = mcp_world.tokens["alice"]
    with httpx.Client(timeout=10) as client:
        session = _open(client, mcp_url, token)
        for bad in (None, 1.5, {"a": 1}, [1], True):
            refused = _post(client, mcp_url, {**LIST, "id": bad}, token, session)
            assert refused.status_code == 400, (bad, refused.text)
            assert refused.json()["error"]["code"] == -32600 and "is not a string or a whole number" in refused.text
        assert _post(client, mcp_url, {**LIST, "id": "seven"}, token, session).status_code == 200  # still serving
        client.delete(mcp_url, headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session})


def test_an_id_still_running_in_the_session_is_refused_and_free_again_when_it_ends() -> None:
    """The second request with a running id took the first's answer, which then never came."""
    from notewell.mcp.message_check import parsed
    from notewell.mcp.request_ids import RunningIds

    ids = RunningIds()
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {}}'
    refused, first = ids.start("s1", parsed(body))
    assert refused is None and first is not None
    again, _ = ids.start("s1", parsed(body))
    assert again is not None and "the id 7 is in use by a request still running" in again
    assert ids.start("s2", parsed(body))[0] is None  # another session's id 7 is its own
    assert ids.start("s1", parsed(body.replace(b'"id": 7', b'"id": "7"')))[0] is None  # a string is another id
    ids.finish(first)
    assert ids.start("s1", parsed(body))[0] is None
    assert ids.start("s1", parsed(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')) == (None, None)


def test_the_session_count_logged_stays_true_through_evictions_and_expiries(
        mcp_url: str, mcp_world: World, log_lines: list[str]) -> None:
    """The session book (the `total` of each open and close line) counted sessions evicted for the cap and
    sessions the SDK had expired until its 30-minute sweep: the count drifted up on a busy server."""
    hog = mcp_world.runtime.administration.mint_token(LOCAL_OWNER, "bob@northwind.test", ["memory:read"]).secret

    def fields(line: str) -> dict[str, str]:
        return dict(part.split("=", 1) for part in line.split(" "))

    with httpx.Client(timeout=10) as client:
        sessions = [_open(client, mcp_url, hog) for _ in range(SESSIONS_PER_TOKEN + 3)]
        opens = [fields(line) for line in log_lines if line.startswith("op=mcp.session.open")]
        totals = [int(o["total"]) for o in opens if o["sessionPrefix"] in {s[:8] for s in sessions}]
        first = totals[0]
        assert totals == [first + n for n in range(SESSIONS_PER_TOKEN)] + [first + SESSIONS_PER_TOKEN - 1] * 3
        evicted = [fields(line) for line in log_lines if line.startswith("op=mcp.session.orphan")]
        assert [(e["sessionPrefix"], e["reason"]) for e in evicted] == [(s[:8], "per_token_cap") for s in sessions[:3]]
        for s in sessions[3:]:
            client.delete(mcp_url, headers={"Authorization": f"Bearer {hog}", "Mcp-Session-Id": s})


def test_a_session_idle_past_its_expiry_is_counted_out_by_the_sweeper() -> None:
    from notewell.mcp.session_cap import SessionCap, _Live

    now = [0.0]
    gone: list[tuple[str, str]] = []

    async def app(_scope: object, _receive: object, _send: object) -> None:
        return None

    cap = SessionCap(app, clock=lambda: now[0], on_gone=lambda sid, reason: gone.append((sid, reason)))
    cap.live["quiet"] = _Live("t", None, None, [], last_seen=0.0)
    cap.live["busy"] = _Live("t", None, None, [], last_seen=0.0, in_flight=1)
    now[0] = SESSION_IDLE_S - 1
    cap.forget_expired()
    assert gone == []
    now[0] = SESSION_IDLE_S + 1
    cap.forget_expired()
    assert gone == [("quiet", "idle")] and set(cap.live) == {"busy"}


def test_a_session_listening_on_a_get_stream_is_not_counted_out() -> None:
    """The SDK keeps a session while its GET stream is open; the sweeper counted it out after 5 minutes without a
    POST (logged as closed, the gauge down, its later tool calls uncounted)."""
    from types import SimpleNamespace

    import anyio
    from anyio import wait_all_tasks_blocked

    from notewell.mcp.session_cap import SessionCap, _Live

    now = [0.0]
    gone: list[tuple[str, str]] = []

    async def scenario() -> None:
        hang_up = anyio.Event()

        async def app(scope: dict[str, object], _receive: object, _send: object) -> None:
            if scope["method"] == "GET":
                await hang_up.wait()

        async def receive() -> dict[str, object]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(_message: object) -> None:
            return None

        cap = SessionCap(app, clock=lambda: now[0], on_gone=lambda sid, reason: gone.append((sid, reason)))
        cap.live["listening"] = _Live("t", None, None, [], last_seen=0.0)
        scope = {"type": "http", "method": "GET", "headers": [(b"mcp-session-id", b"listening")],
                 "user": SimpleNamespace(access_token=SimpleNamespace(client_id="t"))}
        async with anyio.create_task_group() as group:
            group.start_soon(cap, scope, receive, send)
            await wait_all_tasks_blocked()
            now[0] = SESSION_IDLE_S * 3
            cap.forget_expired()
            assert gone == [] and "listening" in cap.live  # its stream is open: the SDK keeps it
            hang_up.set()
        now[0] += SESSION_IDLE_S + 1
        cap.forget_expired()
        assert gone == [("listening", "idle")]

    anyio.run(scenario)


def test_a_refused_delete_or_a_2026_request_naming_a_session_leaves_it_counted(
        mcp_url: str, mcp_world: World, log_lines: list[str]) -> None:
    """A DELETE the SDK refused (403: a foreign Origin) and a 2026-07-28 request naming a live session (served
    without sessions: its 404 says nothing of it) counted the session out, though it still served: 48 sessions of
    one token, past the cap of 16, all usable, and the gauge read 0."""
    hog = mcp_world.runtime.administration.mint_token(LOCAL_OWNER, "bob@northwind.test", ["memory:read"]).secret
    modern = "2026-07-28"
    meta = {"io.modelcontextprotocol/protocolVersion": modern,
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    with httpx.Client(timeout=10) as client:
        sessions = [_open(client, mcp_url, hog) for _ in range(SESSIONS_PER_TOKEN + 4)]
        for s in sessions:
            answer = client.post(mcp_url, json={"jsonrpc": "2.0", "id": 50, "method": "x/y",
                                                "params": {"_meta": meta}},
                                 headers={**ACCEPT, "Authorization": f"Bearer {hog}", "Mcp-Session-Id": s,
                                          "MCP-Protocol-Version": modern, "Mcp-Method": "x/y"})
            assert answer.status_code >= 400
        live = [s for s in sessions if _post(client, mcp_url, LIST, hog, s).status_code == 200]
        assert len(live) == SESSIONS_PER_TOKEN  # the cap held
        refused = client.delete(mcp_url, headers={"Authorization": f"Bearer {hog}", "Mcp-Session-Id": live[0],
                                                  "Origin": "http://evil.example"})
        assert refused.status_code == 403
        assert _post(client, mcp_url, LIST, hog, live[0]).status_code == 200
        gone = [line for line in log_lines if line.startswith(("op=mcp.session.close", "op=mcp.session.orphan"))
                and f"sessionPrefix={live[0][:8]}" in line]
        assert gone == []  # neither the 2026 request nor the refused DELETE counted it out
        for s in live:
            client.delete(mcp_url, headers={"Authorization": f"Bearer {hog}", "Mcp-Session-Id": s})
    closed = [line for line in log_lines if f"sessionPrefix={live[0][:8]}" in line
              and line.startswith(("op=mcp.session.close", "op=mcp.session.orphan"))]
    assert len(closed) == 1 and "reason=" not in closed[0]  # its own DELETE, counted once
