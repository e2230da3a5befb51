"""One line per REST request at info, as MCP has: ``op=rest.request method=GET route=/memories/{ref} status=200``.

The line names the route's template, not the path, so no document path, query or memory text reaches the
log; the caller is named by handle and token id (never the secret), when the token was valid.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from notewell.mcp import log


class RequestLog:
    """ASGI middleware writing ``op=rest.request`` after each HTTP request is answered."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_noting_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_noting_status)
        finally:
            route: Any = scope.get("route")
            who: Any = scope.get("state", {}).get("principal")
            log.event("rest.request", method=scope.get("method"), route=getattr(route, "path", None) or "-",
                      status=status, durMs=round((time.perf_counter() - started) * 1000, 2),
                      user=getattr(who, "handle", None), tokenId=getattr(who, "token_id", None))
