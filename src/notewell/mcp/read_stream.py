"""A read stream that stands in for the SDK's (over stdio) and changes only what ``receive`` gives: the rest of
the stream's protocol (iteration, closing, the sender's context) is passed on, written once for the wrappers of
stdio_malformed and stdio_eof."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.shared.message import SessionMessage


class ReadStreamWrapper(ABC):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def last_context(self) -> Any:
        return getattr(self.inner, "last_context", None)

    @abstractmethod
    async def receive(self) -> SessionMessage: ...

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()
