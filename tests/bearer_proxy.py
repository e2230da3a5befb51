"""A loopback reverse proxy that adds a bearer token to every request, for clients that cannot send one.

The MCP conformance suite has no option for an Authorization header, and every request to Notewell's
/mcp needs one. This ASGI app forwards each request unchanged (method, path, query, body and headers,
Host and Origin included, so the DNS-rebinding checks still reach the server) with the token added,
and streams the answer back as it comes (server-sent events included).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
from starlette.types import Message, Receive, Scope, Send

_HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"trailer", b"upgrade",
               b"proxy-authorization", b"proxy-authenticate", b"content-length"}


class BearerProxy:
    def __init__(self, upstream: str, token: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.token = token
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _HOP_BY_HOP]
        if not any(k.lower() == b"authorization" for k, _ in headers):
            headers.append((b"authorization", f"Bearer {self.token}".encode()))
        url = self.upstream + scope["path"] + (f"?{scope['query_string'].decode()}" if scope["query_string"] else "")
        request = self.client.build_request(scope["method"], url, headers=headers, content=_body(receive))
        response = await self.client.send(request, stream=True)
        try:
            await send({"type": "http.response.start", "status": response.status_code,
                        "headers": [(k, v) for k, v in response.headers.raw if k.lower() not in _HOP_BY_HOP]})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await response.aclose()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _body(receive: Receive) -> AsyncIterator[bytes]:
    while True:
        message: Message = await receive()
        if message["type"] != "http.request":
            return
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return
