"""The Streamable HTTP door: the /mcp route with bearer auth, session binding and request logging.

Layers of the route, outermost first: the SDK's AuthenticationMiddleware (BearerAuthBackend over the
access service) and AuthContextMiddleware, then the McpGate, then the SDK's session manager. The
middleware belongs to the route, not to the server's application: other doors authenticate their own way.

The gate answers 401 with WWW-Authenticate when there is no valid token, and binds each handshake-era
session (Mcp-Session-Id) to the token that opened it: a request presenting another token is refused
with 401 and JSON-RPC error -32001 "Session-token mismatch" (external-brain's session binding). The
2026-07-28 protocol has no sessions; each of its requests carries its own token.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

import anyio
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.types import INVALID_REQUEST
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from notewell.access.principal import Principal
from notewell.mcp import log, message_check
from notewell.mcp.auth import AccessTokenVerifier, PrincipalAccessToken, current_principal
from notewell.mcp.error_ids import IdInErrors
from notewell.mcp.request_ids import BODY_PEEK_MAX, BodyTooLarge, RunningIds, carried_id, peek_body, replayed
from notewell.mcp.server import FORBIDDEN, NotewellMCP, scope_refusal
from notewell.mcp.session_cap import SESSION_IDLE_S, SessionCap
from notewell.mcp.toolset import Toolset
from notewell.runtime import Runtime

MCP_PATH = "/mcp"
SESSION_TOKEN_MISMATCH = -32001
MAX_TRACKED_SESSIONS = 10_000
SWEEP_EVERY_S = 300.0  # the orphan sweeper's period (external-brain: every 5 minutes)
ORPHAN_AFTER_S = 1800.0  # a session this old with no tool call is an orphan (external-brain: 30 minutes)


@dataclass
class _Session:
    token: str
    opened_at: float  # SessionBook.clock time
    user: str = ""
    token_id: str | None = None
    tool_calls: int = 0
    last_seen: float = 0.0


@dataclass
class SessionBook:
    """Which token opened each live session, and how many tool calls it made (for the close log line)."""

    sessions: OrderedDict[str, _Session] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    clock: Callable[[], float] = time.monotonic

    def open(self, session_id: str, token: str, user: str = "", token_id: str | None = None) -> int:
        with self.lock:
            now = self.clock()
            self.sessions[session_id] = _Session(token, now, user, token_id, last_seen=now)
            while len(self.sessions) > MAX_TRACKED_SESSIONS:  # sessions the SDK expired without a DELETE
                self.sessions.popitem(last=False)
            return len(self.sessions)

    def owner(self, session_id: str) -> str | None:
        with self.lock:
            entry = self.sessions.get(session_id)
            return entry.token if entry else None

    def tool_called(self, session_id: str) -> None:
        with self.lock:
            entry = self.sessions.get(session_id)
            if entry is not None:
                entry.tool_calls += 1
                entry.last_seen = self.clock()

    def close(self, session_id: str) -> tuple[_Session | None, int]:
        with self.lock:
            return self.sessions.pop(session_id, None), len(self.sessions)

    def gone(self, session_id: str, reason: str) -> None:
        """A session ended without its client's DELETE (SessionCap: evicted, idle, or unknown to the SDK): count
        it out and log it, op=mcp.session.close with its reason (op=mcp.session.orphan if it made no tool call)."""
        entry, total = self.close(session_id)
        if entry is not None:
            log.event("mcp.session.close" if entry.tool_calls else "mcp.session.orphan", sessionPrefix=session_id[:8],
                      toolCalls=entry.tool_calls, total=total, reason=reason, user=entry.user or None,
                      tokenId=entry.token_id)

    def sweep(self, orphan_after: float = ORPHAN_AFTER_S) -> int:
        """Evict and log (op=mcp.session.orphan) the sessions older than ``orphan_after`` seconds that made no
        tool call, and forget those idle that long after their last tool call (op=mcp.session.close), so the
        book does not grow on probe-only traffic and an orphan is logged even when no DELETE ever comes."""
        with self.lock:
            now = self.clock()
            gone = [(sid, e) for sid, e in self.sessions.items()
                    if (e.tool_calls == 0 and now - e.opened_at > orphan_after)
                    or (e.tool_calls and now - e.last_seen > orphan_after)]
            for sid, _entry in gone:
                del self.sessions[sid]
            total = len(self.sessions)
        for sid, entry in gone:
            op = "mcp.session.close" if entry.tool_calls else "mcp.session.orphan"
            log.event(op, sessionPrefix=sid[:8], toolCalls=entry.tool_calls, total=total, reason="sweep",
                      ageS=int(now - entry.opened_at), user=entry.user or None, tokenId=entry.token_id)
        return len(gone)


async def sweep_sessions(book: SessionBook, cap: SessionCap, every: float = SWEEP_EVERY_S,
                         orphan_after: float = ORPHAN_AFTER_S) -> None:
    """The orphan sweeper: a background task of the app's lifespan, every ``every`` seconds counting out the
    sessions idle past their expiry (``cap``) and sweeping ``book``."""
    while True:
        await anyio.sleep(every)
        cap.forget_expired()
        book.sweep(orphan_after)


def _token_key(user: AuthenticatedUser) -> str:
    return user.access_token.client_id


def _www_authenticate(error: str | None, description: str) -> str:
    if error is None:
        return 'Bearer realm="notewell"'
    return f'Bearer realm="notewell", error="{error}", error_description="{description}"'


async def _send_json(send: Send, status: int, body: object, www_authenticate: str | None) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if www_authenticate is not None:
        headers.append((b"www-authenticate", www_authenticate.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


TOO_LARGE = (f"The request body is over {BODY_PEEK_MAX:,} bytes (4 MiB), the bound of one MCP message here; send "
             "a smaller one (a long text in parts: write_note, then edit_note with operation append)")
LAST_EVENT_ID = "last-event-id"  # the SDK, asked to resume a stream without an event store, answered 500


class McpGate:
    """Refuses unauthenticated requests and cross-token session reuse; logs sessions opening and closing."""

    def __init__(self, app: ASGIApp, book: SessionBook, missing_scope: MissingScope) -> None:
        self.app = app
        self.book = book
        self.missing_scope = missing_scope
        self.ids = RunningIds()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        user = scope.get("user")
        if not isinstance(user, AuthenticatedUser) or not isinstance(user.access_token, PrincipalAccessToken):
            # RFC 6750 3.1: a request with no bearer token (none, or another scheme such as Basic) gets no error code
            presented = headers.get("authorization", "").lower().startswith("bearer ")
            log.event("mcp.unauth", method=scope.get("method"), reason="invalid_token" if presented else "no_token")
            if presented:
                description = "The token is not valid: it is unknown, expired or revoked, or its user is deactivated"
                await _send_json(send, 401, {"error": "invalid_token", "error_description": description},
                                 _www_authenticate("invalid_token", description))
            else:
                description = "Authentication required: send Authorization: Bearer <token>"
                await _send_json(send, 401, {"error": "invalid_request", "error_description": description},
                                 _www_authenticate(None, description))
            return
        principal = user.access_token.principal
        token = _token_key(user)
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
            log.event("mcp.bad_version", version=version[:32], user=principal.handle, tokenId=principal.token_id)
            await _send_json(send, 400, {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": (
                f"Unsupported MCP-Protocol-Version: {version[:32]!r}. This server speaks "
                f"{', '.join(HANDSHAKE_PROTOCOL_VERSIONS)} (initialize, then Mcp-Session-Id) and "
                f"{', '.join(MODERN_PROTOCOL_VERSIONS)} (no session; each request carries its _meta); send one of "
                "those, or leave the header out until initialize has chosen one")}}, None)
            return
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if session_id:
            owner = self.book.owner(session_id)
            if owner is not None and owner != token:
                log.event("mcp.session.token_mismatch", sessionPrefix=session_id[:8], user=principal.handle,
                          tokenId=principal.token_id)
                await _send_json(send, 401, {"jsonrpc": "2.0", "id": None, "error": {
                    "code": SESSION_TOKEN_MISMATCH, "message": "Session-token mismatch"}},
                    _www_authenticate("invalid_token", "Session-token mismatch"))
                return

        status = 0
        reply: Send = send  # IdInErrors once the request's id is read

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            if message["type"] == "http.response.start" and not session_id and message["status"] >= 400:
                # A refused opening request opened nothing: no session id may go back with it (the SDK sends the
                # id of the session it discarded, which then answers 404)
                message = {**message, "headers": [(k, v) for k, v in message.get("headers", [])
                                                  if k.lower() != MCP_SESSION_ID_HEADER.encode()]}
            elif message["type"] == "http.response.start" and not session_id:
                opened = Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
                if opened:
                    total = self.book.open(opened, token, principal.handle, principal.token_id)
                    log.event("mcp.session.open", sessionPrefix=opened[:8], total=total, user=principal.handle,
                              tokenId=principal.token_id)
            await reply(message)

        if LAST_EVENT_ID in headers:  # no stream is resumable here (no event store): the header asks for nothing
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k.lower() != LAST_EVENT_ID.encode()]}
        running = None
        if scope.get("method") == "POST":
            try:
                held, body = await peek_body(receive, headers.get("content-length"))
            except BodyTooLarge:  # the SDK's own refusal is a plain-text 413 that no JSON-RPC client can read
                log.event("mcp.too_large", user=principal.handle, tokenId=principal.token_id)
                await _send_json(send, 413, {"jsonrpc": "2.0", "id": None, "error": {
                    "code": INVALID_REQUEST, "message": TOO_LARGE}}, None)
                return
            receive = replayed(held, receive)
            data = message_check.parsed(body)
            # message_check.py; a session id the book does not know goes on, for the SDK's 404
            known = session_id is not None and self.book.owner(session_id) is not None
            malformed = message_check.refused(data, in_session=known)
            if malformed is not None:
                code, text, request_id = malformed
                log.event("mcp.malformed", code=code, user=principal.handle, tokenId=principal.token_id)
                await _send_json(send, 400, {"jsonrpc": "2.0", "id": request_id, "error": {
                    "code": code, "message": text}}, None)
                return
            is_request, asked_id = carried_id(data)
            forbidden = _scope_refused(data, principal, self.missing_scope) if is_request and (
                self.book.owner(session_id) is not None if session_id else version in MODERN_PROTOCOL_VERSIONS) \
                else None  # a notification, or no session the SDK would answer in: the SDK's own answer
            if forbidden is not None:
                tool, needed = forbidden
                text = scope_refusal(tool, needed)
                log.event("mcp.tool", tool=tool, durMs=0, outcome="error", reason="scope", user=principal.handle,
                          tokenId=principal.token_id)
                await _send_json(send, 403, {"jsonrpc": "2.0", "id": asked_id, "error": {
                    "code": FORBIDDEN, "message": text, "data": {"scope": needed}}},
                    f'Bearer realm="notewell", error="insufficient_scope", scope="{needed}", '
                    f'error_description="{text}"')
                return
            if is_request:  # error_ids.py: the SDK's own errors answer id null
                reply = IdInErrors(send, asked_id)
            if session_id:  # request_ids.py: an id still running in the session
                refused, running = self.ids.start(session_id, data)
                if refused is not None:
                    log.event("mcp.bad_id", sessionPrefix=session_id[:8], user=principal.handle,
                              tokenId=principal.token_id)
                    await _send_json(send, 400, {"jsonrpc": "2.0", "id": None, "error": {
                        "code": INVALID_REQUEST, "message": refused}}, None)
                    return
        try:
            await self.app(scope, receive, watch)
        finally:
            self.ids.finish(running)
        if session_id and scope.get("method") == "DELETE" and status < 400:  # a refused DELETE closed nothing
            closed, total = self.book.close(session_id)
            if closed is not None:
                op = "mcp.session.close" if closed.tool_calls else "mcp.session.orphan"
                log.event(op, sessionPrefix=session_id[:8], toolCalls=closed.tool_calls, total=total,
                          user=principal.handle, tokenId=principal.token_id)


MissingScope = Callable[[Principal, str], str | None]  # NotewellMCP.missing_scope


def _scope_refused(data: object, principal: Principal, missing_scope: MissingScope) -> tuple[str, str] | None:
    """(tool, scope) for a tools/call the token lacks the scope of, of a toolset that refuses it naming the scope
    (Toolset.scope_refused): answered 403 with WWW-Authenticate's insufficient_scope (RFC 6750 3.1), as XMemo's
    page says ("401/403"), before the SDK, which answers a tool's refusal as a JSON-RPC error in a 200."""
    if not isinstance(data, dict) or data.get("method") != "tools/call" or not isinstance(data.get("params"), dict):
        return None
    name = data["params"].get("name")
    scope = missing_scope(principal, name) if isinstance(name, str) else None
    return (name, scope) if isinstance(name, str) and scope is not None else None


@dataclass
class McpHttp:
    """The MCP door's parts: the /mcp route, which carries its own bearer authentication, and the SDK's session
    manager, which must run (``run()``, an async context manager) while the server serves."""

    route: Route
    run: Callable[[], AbstractAsyncContextManager[None]]
    mcp: NotewellMCP
    sessions: SessionBook
    cap: SessionCap


def build_mcp_http(rt: Runtime, toolsets: Sequence[Toolset], *, security: TransportSecuritySettings | None = None,
                   json_response: bool = True) -> McpHttp:
    """MCP over Streamable HTTP at /mcp, for mounting in the server's one application (notewell.http.app).
    ``security``: the SDK's Host and Origin checks (notewell.http.hosts builds them from --allowed-host)."""
    book = SessionBook()
    mcp = NotewellMCP(rt, toolsets, current_principal, on_tool_call=book.tool_called)
    manager = StreamableHTTPSessionManager(app=mcp.server, json_response=json_response,
                                           security_settings=security,
                                           session_idle_timeout=SESSION_IDLE_S)
    bearer = [Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(AccessTokenVerifier(rt.authentication))),
              Middleware(AuthContextMiddleware)]
    cap = SessionCap(manager.handle_request, on_gone=book.gone)
    route = Route(MCP_PATH, endpoint=McpGate(cap, book, mcp.missing_scope), middleware=bearer)
    return McpHttp(route, manager.run, mcp, book, cap)
