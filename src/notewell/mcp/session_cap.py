"""MCP sessions bounded per token: no token can take the session slots every other user shares.

Each handshake-era session costs the server a task and its streams. A token may hold at most
SESSIONS_PER_TOKEN live sessions; when it opens one more, its oldest idle session (no request in
flight; a GET stream that only listens does not count) is closed to make room, and only when every one
of its sessions is busy is the new one refused (429, naming the cap). Other tokens are never refused
because of it. Idle sessions expire after SESSION_IDLE_S (the SDK's session manager closes them); a
session counts as live here until then.

Evicting goes through the SDK's public door: a DELETE for the session, as its own client would send,
with the opening request's Host, Origin and authenticated user. Every session that ends here other than by its
client's DELETE (evicted, expired, or unknown to the SDK: a 404) is told to ``on_gone``, so that the session
book (notewell.mcp.http) counts only the live ones and logs how each ended.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from notewell.mcp import log

SESSIONS_PER_TOKEN = 16
SESSION_IDLE_S = 300.0
_KEPT_HEADERS = (b"host", b"origin")


@dataclass
class _Live:
    token: str
    user: Any  # the opening request's authenticated user (the SDK checks that a DELETE comes from the owner)
    auth: Any  # and its credentials
    headers: list[tuple[bytes, bytes]]  # the opening request's Host and Origin (DNS-rebinding checks)
    last_seen: float
    in_flight: int = 0
    streams: int = 0  # GET streams open: the SDK does not expire a session while one is (nor is it counted out)


@dataclass
class SessionCap:
    """ASGI middleware in front of the SDK's session manager (behind the bearer gate, so a user is known)."""

    app: ASGIApp
    per_token: int = SESSIONS_PER_TOKEN
    idle_s: float = SESSION_IDLE_S
    clock: Callable[[], float] = time.monotonic
    live: dict[str, _Live] = field(default_factory=dict)
    on_gone: Callable[[str, str], None] = lambda _session_id, _reason: None  # (session id, why it ended)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        token = getattr(getattr(user, "access_token", None), "client_id", None)
        if token is None:  # the gate refuses such requests before they get here
            await self.app(scope, receive, send)
            return
        session_id = Headers(scope=scope).get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            await self._open(scope, receive, send, token)
            return
        entry = self.live.get(session_id)
        # A GET is the session's standing stream for server messages: it lasts as long as the client
        # listens, so it does not make the session busy (closing the session ends it cleanly).
        busy = scope.get("method") != "GET"
        modern = Headers(scope=scope).get(MCP_PROTOCOL_VERSION_HEADER) in MODERN_PROTOCOL_VERSIONS
        if entry is not None:
            entry.in_flight += 1 if busy else 0
            entry.streams += 0 if busy else 1
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if entry is not None:
                entry.in_flight -= 1 if busy else 0
                entry.streams -= 0 if busy else 1
                entry.last_seen = self.clock()
            if scope.get("method") == "DELETE" and status < 400:
                self.live.pop(session_id, None)  # its client closed it: the gate logs that
            elif status == 404 and not modern:
                # the SDK knows no such session (a 2026-07-28 request is served without one: its 404 says
                # nothing of the session its header names)
                self.live.pop(session_id, None)
                self.on_gone(session_id, "expired")

    async def _open(self, scope: Scope, receive: Receive, send: Send, token: str) -> None:
        """A request without a session: it may open one; make room among the token's sessions first."""
        self.forget_expired()
        mine = sorted(((sid, e) for sid, e in self.live.items() if e.token == token),
                      key=lambda item: item[1].last_seen)
        if len(mine) >= self.per_token:
            idle = [(sid, e) for sid, e in mine if e.in_flight == 0]
            if not idle:
                await _refuse(send, self.per_token)
                return
            sid, entry = idle[0]
            self.live.pop(sid, None)
            await self._close(sid, entry)
            log.event("mcp.session.evicted", sessionPrefix=sid[:8], reason="per_token_cap", cap=self.per_token)
            self.on_gone(sid, "per_token_cap")

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                opened = Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
                if opened:
                    kept = [(k, v) for k, v in scope.get("headers", []) if k in _KEPT_HEADERS]
                    self.live[opened] = _Live(token, scope.get("user"), scope.get("auth"), kept, self.clock())
            await send(message)

        await self.app(scope, receive, watch)

    def forget_expired(self) -> None:
        """Forget the sessions idle past ``idle_s`` (the SDK's manager has closed them); the sweeper calls this
        too, so that they are counted out without waiting for the next session to open."""
        now = self.clock()
        for sid in [sid for sid, e in self.live.items()
                    if e.in_flight == 0 and e.streams == 0 and now - e.last_seen > self.idle_s]:
            del self.live[sid]
            self.on_gone(sid, "idle")

    async def _close(self, session_id: str, entry: _Live) -> None:
        """Close the session as its client would: DELETE with its id, from its owner."""
        headers = [*entry.headers, (MCP_SESSION_ID_HEADER.encode(), session_id.encode())]
        scope: Scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "DELETE",
                        "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "root_path": "", "query_string": b"",
                        "headers": headers, "client": None, "server": None, "user": entry.user,
                        "auth": entry.auth}

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(_message: Message) -> None:
            return None

        await self.app(scope, receive, discard)


async def _refuse(send: Send, cap: int) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": (
        f"Too many open sessions for this token: {cap} are open and busy; close one (DELETE) or wait for "
        "one to finish")}}).encode()
    await send({"type": "http.response.start", "status": 429, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
