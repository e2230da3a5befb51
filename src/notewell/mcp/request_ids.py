"""A request's id in a session over Streamable HTTP: not one still running there.

The SDK keys a session's answers by request id. A second request with the id of one still running took its
answer, and the first waited for ever (its work went on, holding the session busy). So the gate reads a POST's
body first (up to the SDK's own 4 MB: a larger one is refused by the gate, BodyTooLarge) and refuses it with
-32600, naming the id. An id of a type JSON-RPC does not allow (null, a fraction, an object), which the SDK
took for a notification (202, never run), is refused before this by message_check.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from starlette.types import Message, Receive

BODY_PEEK_MAX = 4 * 1024 * 1024  # the SDK's body limit, MCP's bound for one message over HTTP


class BodyTooLarge(Exception):
    """A POST body past BODY_PEEK_MAX (declared by its Content-Length, or grown past it while read)."""


async def peek_body(receive: Receive, declared: str | None = None) -> tuple[list[Message], bytes | None]:
    """The request's messages read so far, and its whole body (None when the client went away before its end).
    Raises BodyTooLarge, before reading, for a ``declared`` Content-Length over BODY_PEEK_MAX, or as soon as the
    body read grows past it."""
    if declared is not None and declared.isdigit() and int(declared) > BODY_PEEK_MAX:
        raise BodyTooLarge
    held: list[Message] = []
    size = 0
    while True:
        message = await receive()
        held.append(message)
        if message["type"] != "http.request":
            return held, None
        size += len(message.get("body", b""))
        if size > BODY_PEEK_MAX:
            raise BodyTooLarge
        if not message.get("more_body", False):
            return held, b"".join(m.get("body", b"") for m in held)


def replayed(held: list[Message], receive: Receive) -> Receive:
    """A receive that gives the held messages again, then what ``receive`` gives."""
    async def again() -> Message:
        return held.pop(0) if held else await receive()
    return again


def carried_id(data: Any) -> tuple[bool, Any]:
    """(whether the message, message_check.parsed's JSON, is one request carrying an id, the id)."""
    if not isinstance(data, dict) or "method" not in data or "id" not in data:
        return False, None
    return True, data["id"]


class RunningIds:
    """The ids of the requests running in each session."""

    def __init__(self) -> None:
        self._running: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def start(self, session_id: str, data: Any) -> tuple[str | None, tuple[str, str] | None]:
        """(why the request ``data`` (message_check.parsed's) is refused, or None; the key to ``finish`` when it
        was let through with an id)."""
        has_id, request_id = carried_id(data)
        if not has_id:
            return None, None
        key = (session_id, json.dumps(request_id))
        with self._lock:
            if key in self._running:
                return (f"Invalid Request: the id {key[1][:40]} is in use by a request still running in this "
                        "session; give each request its own id"), None
            self._running.add(key)
        return None, key

    def finish(self, key: tuple[str, str] | None) -> None:
        if key is not None:
            with self._lock:
                self._running.discard(key)
