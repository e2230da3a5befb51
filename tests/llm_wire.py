"""A local HTTP server in the test process that speaks two providers' wire formats, for KEA's language model
extractor to call through the real SDKs (no provider is reached; nothing leaves 127.0.0.1):

- OpenAI chat completions, ``POST …/chat/completions`` (the wire of OpenAI, DashScope's compatible mode and
  local servers such as llama.cpp and Ollama): the answer in ``choices[0].message.content``, ``usage`` counted.
- Anthropic messages, ``POST /v1/messages``: the answer as a ``tool_use`` block's input (or a text block when the
  test gives text), ``usage`` counted.

Each request is recorded (path, the key headers, the JSON body). Answers come from ``answers`` in order (the
last one repeats): a dict is a JSON answer (a tool's input on the Anthropic wire), a str is sent as the text, a
``Failure`` is an HTTP error whose message may quote the request (``{authorization}``: its Authorization header,
as a badly-behaved proxy echoes it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROMPT_TOKENS = 120
ANSWER_TOKENS = 30


@dataclass
class Seen:
    path: str
    authorization: str | None  # OpenAI wire: "Bearer <key>"
    api_key: str | None  # Anthropic wire: x-api-key
    body: dict[str, Any]


@dataclass(frozen=True)
class Failure:
    status: int
    message: str  # "{authorization}" is replaced by the request's Authorization header


Answer = dict[str, Any] | str | Failure


@dataclass
class WireServer:
    answers: list[Answer]
    seen: list[Seen] = field(default_factory=list)
    url: str = ""  # http://127.0.0.1:PORT

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    def answer(self) -> Answer:
        return self.answers[min(len(self.seen) - 1, len(self.answers) - 1)]


def _chat_completion(body: dict[str, Any], answer: dict[str, Any] | str) -> dict[str, Any]:
    text = answer if isinstance(answer, str) else json.dumps(answer)
    return {"id": "chatcmpl-local", "object": "chat.completion", "created": 1_700_000_000, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                         "logprobs": None}],
            "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": ANSWER_TOKENS,
                      "total_tokens": PROMPT_TOKENS + ANSWER_TOKENS}}


def _message(body: dict[str, Any], answer: dict[str, Any] | str) -> dict[str, Any]:
    block: dict[str, Any] = ({"type": "text", "text": answer} if isinstance(answer, str) else
                             {"type": "tool_use", "id": "toolu_local", "name": body["tools"][0]["name"],
                              "input": answer})
    return {"id": "msg_local", "type": "message", "role": "assistant", "model": body["model"], "content": [block],
            "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": PROMPT_TOKENS, "output_tokens": ANSWER_TOKENS}}


def _handler(server: WireServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
            server.seen.append(Seen(self.path, self.headers.get("authorization"), self.headers.get("x-api-key"),
                                    body))
            answer = server.answer()
            if isinstance(answer, Failure):
                message = answer.message.replace("{authorization}", self.headers.get("authorization") or "")
                self._send(answer.status, {"error": {"message": message, "type": "invalid_request_error"}})
            elif self.path.endswith("/chat/completions"):
                self._send(200, _chat_completion(body, answer))
            elif self.path == "/v1/messages":
                self._send(200, _message(body, answer))
            else:
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def wire_server(*answers: Answer) -> Iterator[WireServer]:
    """A running local server answering ``answers`` (module docstring); stopped after the block."""
    server = WireServer(list(answers) or [{"learnings": []}])
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
