"""Over stdio, a line that is not a JSON-RPC message this server takes is answered with an error.

The SDK's stdio transport hands such a line to its server as an exception, which the server drops without a
word: a client that sent a request it could not read (bad JSON, a batch, params that are not an object) waited
for its answer for ever. This stream stands between them and answers each with a JSON-RPC error, id null (the
line could not be read, so neither can its id): -32700 when it is not JSON, -32600 when it is JSON but no
message or longer than stdio_input's bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR
from mcp_types import ErrorData, JSONRPCError
from pydantic import ValidationError

from notewell.mcp import log
from notewell.mcp.read_stream import ReadStreamWrapper
from notewell.mcp.stdio_input import LINE_BYTES_MAX


def _error(exc: Exception, oversized: bool) -> JSONRPCError:
    if oversized:
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=INVALID_REQUEST, message=f"Invalid Request: a line over {LINE_BYTES_MAX // (1024 * 1024)} MB was "
                                          "dropped unread; send each message in fewer bytes"))
    not_json = isinstance(exc, ValidationError) and any(e.get("type") == "json_invalid" for e in exc.errors())
    if not_json:
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=PARSE_ERROR, message="Parse error: the line is not JSON; send one JSON-RPC 2.0 message per line"))
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
        code=INVALID_REQUEST, message="Invalid Request: the line is JSON but no JSON-RPC 2.0 message this server "
                                      "takes (one object with jsonrpc \"2.0\", a method, params as an object, an "
                                      "id that is a string or a whole number; no batches)"))


class AnsweringMalformed(ReadStreamWrapper):
    """The read side of the stdio transport, answering (on ``write``) the lines it could not read;
    ``oversized()`` says whether the error just read stands for a line dropped for its length."""

    def __init__(self, inner: Any, write: Any, oversized: Callable[[], bool]) -> None:
        super().__init__(inner)
        self.write = write
        self.oversized = oversized

    async def receive(self) -> SessionMessage:
        while True:
            item = await self.inner.receive()
            if not isinstance(item, Exception):
                return item  # type: ignore[no-any-return]
            answer = _error(item, self.oversized())
            log.event("mcp.stdio.malformed", code=answer.error.code)
            await self.write.send(SessionMessage(answer))
