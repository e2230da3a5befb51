"""The request's id in the SDK's own error answers over Streamable HTTP.

The SDK refuses a request before reading it as JSON-RPC (no session id: 400 "Bad Request: Missing session ID";
a session it does not know: 404 "Session not found"; a wrong Accept or Content-Type) with a JSON-RPC error
whose id is null, though the gate has read the request and its id (message_check). JSON-RPC answers null only
when the id could not be read: a client waiting on that id could not tell which of its requests failed. The
error answer is held, given the request's id, and sent.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import Message, Send


class IdInErrors:
    """A ``send`` that puts ``request_id`` into a JSON-RPC error answered with id null (HTTP 400 and above)."""

    def __init__(self, send: Send, request_id: Any) -> None:
        self.send = send
        self.request_id = request_id
        self.held: Message | None = None
        self.parts: list[bytes] = []

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] >= 400:
            self.held = message
            return
        if self.held is None or message["type"] != "http.response.body":
            await self.send(message)
            return
        self.parts.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        body = self._with_id(b"".join(self.parts))
        headers = [(k, v) for k, v in self.held.get("headers", []) if k.lower() != b"content-length"]
        await self.send({**self.held, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await self.send({"type": "http.response.body", "body": body})
        self.held, self.parts = None, []

    def _with_id(self, body: bytes) -> bytes:
        try:
            answer = json.loads(body)
        except ValueError:
            return body
        if not isinstance(answer, dict) or "error" not in answer or answer.get("id") is not None:
            return body
        return json.dumps({**answer, "id": self.request_id}).encode()
