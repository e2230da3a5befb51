"""Every REST request body is bounded (4 MB, as MCP's): a larger one is a 413 problem naming the body,
answered from its Content-Length before anything is read, or as soon as a body without one grows past it."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from notewell.api.problems import TOO_LARGE, problem

MAX_BODY_BYTES = 4 * 1024 * 1024  # the largest create (a 100,000-character memory) fits with room


class BodyLimit:
    """ASGI middleware refusing a request body over MAX_BODY_BYTES."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", ())).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            await problem(413, TOO_LARGE, field="body")(scope, receive, send)
            return
        total = 0

        async def receive_within_limit() -> Message:
            nonlocal total
            message = await receive()
            total += len(message.get("body", b""))
            if total > MAX_BODY_BYTES:
                raise HTTPException(413)  # inside the API: its handler answers the problem
            return message

        await self.app(scope, receive_within_limit, send)
