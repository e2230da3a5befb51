"""Over stdio, the requests still running when stdin closes are answered before the server ends.

A client may write its requests and close stdin at once (`notewell serve --stdio < requests.jsonl`, or a
client shutting down that still reads). The SDK's server stopped at the end of its input and cancelled what
was running: whichever request was in flight went unanswered. Here the end of the input is held back until
every request read has been answered (or cancelled by the client), for at most ANSWER_WAIT_S.
"""

from __future__ import annotations

from collections import Counter
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from notewell.limits import SCAN_BUDGET_S
from notewell.mcp import log
from notewell.mcp.read_stream import ReadStreamWrapper

ANSWER_WAIT_S = SCAN_BUDGET_S * 6  # past a search's own budget, for a write or a session close that takes longer


class Unanswered:
    """The ids of the requests read and not yet answered (an id sent twice is counted twice: each request is
    answered), with an event set whenever none are left."""

    def __init__(self) -> None:
        self.ids: Counter[str | int] = Counter()
        self.none_left = anyio.Event()
        self.none_left.set()

    def read(self, message: SessionMessage) -> None:
        inner = message.message
        if isinstance(inner, JSONRPCRequest):
            self.ids[inner.id] += 1
            self.none_left = anyio.Event() if self.none_left.is_set() else self.none_left
        elif isinstance(inner, JSONRPCNotification) and inner.method == "notifications/cancelled":
            self._done((inner.params or {}).get("requestId"))

    def written(self, message: SessionMessage) -> None:
        inner = message.message
        if isinstance(inner, (JSONRPCResponse, JSONRPCError)):
            self._done(inner.id)

    def _done(self, request_id: Any) -> None:
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            return  # a cancellation naming no request id (a list, an object): nothing of ours
        if self.ids.get(request_id, 0) > 1:
            self.ids[request_id] -= 1
        else:
            self.ids.pop(request_id, None)
        if not self.ids:
            self.none_left.set()


class ReadUntilAnswered(ReadStreamWrapper):
    """A read stream whose end comes only once ``unanswered`` has none left (or ANSWER_WAIT_S has passed)."""

    def __init__(self, inner: Any, unanswered: Unanswered) -> None:
        super().__init__(inner)
        self.unanswered = unanswered

    async def receive(self) -> SessionMessage:
        try:
            message: SessionMessage = await self.inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            with anyio.move_on_after(ANSWER_WAIT_S) as waited:
                await self.unanswered.none_left.wait()
            if waited.cancelled_caught:
                log.event("mcp.stdio.unanswered", requests=self.unanswered.ids.total())
            raise
        self.unanswered.read(message)
        return message


class WriteNotingAnswers:
    """A write stream that tells ``unanswered`` of each answer it sends."""

    def __init__(self, inner: Any, unanswered: Unanswered) -> None:
        self.inner = inner
        self.unanswered = unanswered

    async def send(self, message: SessionMessage, /) -> None:
        await self.inner.send(message)
        self.unanswered.written(message)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()
