"""A POST's JSON-RPC message over Streamable HTTP, checked before the SDK reads it.

The SDK answered a message of the wrong shape (a method that is a number, params that are a list, a batch,
jsonrpc "1.0") with -32602 and pydantic's whole report, several hundred characters of union branches and
links; an initialize with params it could not read with -32602 "Invalid request parameters" and no word of
which, yet with a new session's id (a session nobody could use, counted against the token's sessions); and
a second initialize inside a session was taken as the first. Here each is refused before the SDK sees it,
with the field named: -32600 for a message of no JSON-RPC shape, -32602 for params the method cannot take
(initialize, tools/call, resources/read, the lists: the SDK said "Invalid request parameters" and no more),
-32600 for an initialize inside a session. Text that is not JSON goes on: the SDK's -32700 names the place.
The stdio door checks each line with the same rules (stdio_input), where a request with an id of the wrong
type was taken for a notification and never answered.
"""

from __future__ import annotations

import json
from typing import Any, Final

from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    CallToolRequestParams,
    GetPromptRequestParams,
    InitializeRequestParams,
    PaginatedRequestParams,
    ReadResourceRequestParams,
)
from mcp_types.jsonrpc import jsonrpc_message_adapter
from pydantic import BaseModel, ValidationError

JsonRpcError = tuple[int, str, Any]  # (code, message, the request's id or None)
PARAMS: dict[str, type[BaseModel]] = {  # the methods whose params are checked here, naming the field at fault
    "initialize": InitializeRequestParams,
    "tools/call": CallToolRequestParams,
    "resources/read": ReadResourceRequestParams,
    "prompts/get": GetPromptRequestParams,
    "tools/list": PaginatedRequestParams,
    "resources/list": PaginatedRequestParams,
    "resources/templates/list": PaginatedRequestParams,
    "prompts/list": PaginatedRequestParams,
}


def _shape_fault(data: Any) -> str | None:
    """What keeps ``data`` from being one JSON-RPC 2.0 message, in words naming the member, or None."""
    if isinstance(data, list):
        return "a batch (a JSON array) is not taken: send one message per request"
    if not isinstance(data, dict):
        return "the body is JSON but not an object: send one JSON-RPC 2.0 message"
    if data.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    # an error response may carry id null: the client could not read the server's message it answers
    unreadable_answered = "error" in data and "method" not in data and data.get("id", 0) is None
    if "id" in data and not unreadable_answered and (isinstance(data["id"], bool)
                                                     or not isinstance(data["id"], (int, str))):
        return (f"the id {json.dumps(data['id'])[:40]} is not a string or a whole number; give each request one "
                "(a notification has no id at all)")
    if "method" in data:
        if not isinstance(data["method"], str):
            return "method must be a string, such as \"tools/call\""
        if data.get("params") is not None and not isinstance(data["params"], dict):  # null: as if left out
            return "params must be an object (named arguments), or left out"
        return None
    if "result" in data or "error" in data:
        return None  # a response to a request of the server's; the SDK's own check follows
    return "the message has no method (a request or notification) and no result or error (a response)"


def _lone_surrogate(data: Any) -> str | None:
    """Where ``data`` holds a lone UTF-16 surrogate ("\\ud800", legal JSON but no character), as
    "params.arguments.query", or None. The SDK's parser called a complete escape "unexpected end of hex escape"
    and named no member; a tool would fail storing it."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return where or "the message"
        elif isinstance(value, dict):
            for key, item in value.items():
                stack.append((f"{where}.{key}" if where else str(key), item))
                stack.append((f"{where} (a member's name)" if where else "a member's name", key))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
    return None


def _params_fault(method: str, params: Any) -> str | None:
    model = PARAMS.get(method)
    if model is None:
        return None
    try:
        model.model_validate(params if params is not None else {}, by_name=False)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return (f"Invalid params for {method}: params{'.' + where if where else ''}: {first['msg']} "
                f"({len(error.errors())} fault(s) in all)")
    return None


UNREAD: Final = object()  # what ``parsed`` gives for a body it could not read as JSON


def parsed(body: bytes | str | None) -> Any:
    """The message's JSON, read once for every check of the door (UNREAD: over the peek's bound, which the SDK
    refuses by size, or not JSON, which the SDK answers -32700 naming the place)."""
    if body is None:
        return UNREAD
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return UNREAD


def refused(data: Any, *, in_session: bool) -> JsonRpcError | None:
    """Why the SDK should not be handed the message ``data`` (``parsed``'s) (code, message, id), or None to let
    it through."""
    if data is UNREAD:
        return None
    fault = _shape_fault(data)
    request_id = data.get("id") if isinstance(data, dict) and isinstance(data.get("id"), (int, str)) \
        and not isinstance(data.get("id"), bool) else None
    if fault is not None:
        return INVALID_REQUEST, f"Invalid Request: {fault}", request_id
    surrogate = _lone_surrogate(data)
    if surrogate is not None:
        code = INVALID_PARAMS if surrogate.startswith("params") else INVALID_REQUEST
        return code, (f"Invalid {'params' if code == INVALID_PARAMS else 'Request'}: {surrogate} holds a lone UTF-16 "
                      "surrogate (an escape from \\ud800 to \\udfff without its pair), which is no character: send "
                      "the text as valid Unicode"), request_id
    try:
        jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError:
        return INVALID_REQUEST, ("Invalid Request: not a JSON-RPC 2.0 message this server takes (one object with "
                                 "jsonrpc \"2.0\", a method, params as an object, an id that is a string or a whole "
                                 "number)"), request_id
    if "method" not in data or "id" not in data:
        return None  # a notification or a response: nobody waits for an answer
    if data["method"] == "initialize" and in_session:
        return INVALID_REQUEST, ("Invalid Request: this session is already initialized; to start again, send "
                                 "initialize without Mcp-Session-Id (and DELETE this session)"), request_id
    fault = _params_fault(data["method"], data.get("params"))
    return None if fault is None else (INVALID_PARAMS, fault, request_id)
