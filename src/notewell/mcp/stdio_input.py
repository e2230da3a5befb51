"""Over stdio, the client's lines are read up to a bound, as the HTTP door bounds a request's body, and checked
as the HTTP door checks a message (message_check).

The SDK's stdio transport read each line whole, however long: a client that sent gigabytes without a newline
grew the server until it was killed. Here stdin is read a line at a time up to LINE_BYTES_MAX; a longer line is
read to its end and dropped (never held). A line message_check refuses (a request whose id is of no JSON-RPC
type, which the SDK took for a notification and never answered; params a method cannot take) is dropped too.
Each dropped line's refusal waits in ``refusals`` and the reader answers it (stdio_malformed). Like the SDK's
own, this takes the process's fd 0 for itself and points fd 0 at the null device while it serves, so that
nothing run from a tool (git, say) reads the client's messages.
"""

from __future__ import annotations

import fcntl
import os
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, Self

import anyio
from mcp.types import INVALID_REQUEST, PARSE_ERROR

from notewell.mcp.message_check import JsonRpcError, parsed, refused

LINE_BYTES_MAX = 4 * 1024 * 1024  # as an MCP request's body over HTTP (docs/security.md)
_DRAIN_BYTES = 64 * 1024  # how much of an oversized line is read (and dropped) at a time
DROPPED_LINE = "\x00"  # stands in for a dropped line: no JSON, so the reader gets it as an error to answer
OVERSIZED: JsonRpcError = (INVALID_REQUEST, f"Invalid Request: a line over {LINE_BYTES_MAX // (1024 * 1024)} MB was "
                                            "dropped unread; send each message in fewer bytes", None)


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The client's stdin as a binary file on a descriptor of its own, with fd 0 on the null device meanwhile."""
    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        with open(private, "rb", closefd=False) as wire:
            yield wire
    finally:
        os.dup2(private, 0)
        os.close(private)


class BoundedLines:
    """The lines of ``wire`` as text, each within LINE_BYTES_MAX bytes; one that is longer, or not UTF-8 (the SDK
    replaced its bad bytes), or that message_check refuses, comes as DROPPED_LINE, its refusal kept in order until
    ``take_refusal`` answers for it."""

    def __init__(self, wire: BinaryIO) -> None:
        self._wire = wire
        self._refusals: deque[JsonRpcError] = deque()

    def take_refusal(self) -> JsonRpcError | None:
        """The refusal of the line just read as an error (None: the SDK's own reading failed)."""
        return self._refusals.popleft() if self._refusals else None

    async def _readline(self, most: int) -> bytes:
        return await anyio.to_thread.run_sync(self._wire.readline, most)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        line = await self._readline(LINE_BYTES_MAX + 2)  # the bound is the message's: its LF or CRLF comes on top
        if not line:
            raise StopAsyncIteration
        ended = line.endswith(b"\n")
        if len(line.removesuffix(b"\n").removesuffix(b"\r") if ended else line) > LINE_BYTES_MAX:
            while not ended and (rest := await self._readline(_DRAIN_BYTES)) and not rest.endswith(b"\n"):
                pass
            self._refusals.append(OVERSIZED)
            return DROPPED_LINE
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:  # as the HTTP door refuses such a body: never a U+FFFD stored in its place
            self._refusals.append((PARSE_ERROR, f"Parse error: the line is not UTF-8 (byte {exc.start + 1} of it); "
                                                "send UTF-8 text", None))
            return DROPPED_LINE
        refusal = refused(parsed(text), in_session=False) if text.strip() else None
        if refusal is not None:
            self._refusals.append(refusal)
            return DROPPED_LINE
        return text
