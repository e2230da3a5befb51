"""Over stdio, a line that is not a JSON-RPC message this server takes is answered with an error.

The SDK's stdio transport hands such a line to its server as an exception, which the server drops without a
word: a client that sent a request it could not read (bad JSON, a batch, params that are not an object) waited
for its answer for ever. This stream stands between them and answers each with a JSON-RPC error, id null (the
line could not be read, so neither can its id): -32700 when it is not JSON, -32600 when it is JSON but no
message; and the lines stdio_input dropped (over its bound, or refused by message_check) with their refusal,
which names the fault and the id when it could be read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR
from mcp_types import ErrorData, JSONRPCError
from pydantic import ValidationError

from notewell.mcp import log
from notewell.mcp.message_check import JsonRpcError
from notewell.mcp.read_stream import ReadStreamWrapper


def _error(exc: Exception, refusal: JsonRpcError | None) -> JSONRPCError:
    if refusal is not None:  # stdio_input dropped the line: its refusal names why
        code, message, request_id = refusal
        return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))
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
    ``refusal()`` gives the refusal of a line stdio_input dropped, when the error just read stands for one."""

    def __init__(self, inner: Any, write: Any, refusal: Callable[[], JsonRpcError | None]) -> None:
        super().__init__(inner)
        self.write = write
        self.refusal = refusal

    async def receive(self) -> SessionMessage:
        while True:
            item = await self.inner.receive()
            if not isinstance(item, Exception):
                return item  # type: ignore[no-any-return]
            answer = _error(item, self.refusal())
            log.event("mcp.stdio.malformed", code=answer.error.code)
            await self.write.send(SessionMessage(answer))
