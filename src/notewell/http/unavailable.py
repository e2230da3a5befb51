"""A request the store could not serve (its database down or out of connections) is answered 503, never 500.

The doors answer Unavailable themselves where they catch errors (REST's problems, the web's error page, an MCP
tool's result), but authentication comes first and reads the store too: a bearer token checked while PostgreSQL
was down raised out of the middleware, and the client got "Internal Server Error" with a traceback in the log.
This middleware, outermost, answers any Unavailable that reaches it with a 503 naming the reason (and
Retry-After), logged as one op=store.unavailable line.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from notewell.errors import Unavailable
from notewell.mcp import log


class UnavailableAnswered:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Unavailable as exc:
            log.event("store.unavailable", method=scope.get("method"), path=str(scope.get("path", ""))[:200],
                      answered=not started)
            if started:
                return  # the answer was under way: its connection ends here, cut
            body = json.dumps({"error": "unavailable", "error_description": str(exc)}).encode()
            await send({"type": "http.response.start", "status": 503, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(exc.retry_after_s).encode())]})
            await send({"type": "http.response.body", "body": body})
