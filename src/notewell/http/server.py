"""The HTTP server's limits on its connections: slow or idle clients are timed out.

uvicorn closes a keep-alive connection that stays idle between requests, but a client that opens a
connection and sends its request slowly (slowloris: a header line every few seconds, or a body a byte
at a time) holds it, and a task, for ever. Here a connection must deliver each whole request (headers
and body) within REQUEST_READ_TIMEOUT_S of the connection opening or of the previous response ending,
or it is closed; once a request is read, the application takes as long as it needs (a search has its own
time budget). uvicorn's own limits complete the set: keep-alive, the size of the request head, and how
many connections and requests are served at once (more are answered 503). The MCP door refuses a body
over 4 MB (the SDK's limit). docs/security.md lists every limit.
"""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

REQUEST_READ_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
MAX_CONCURRENCY = 512  # open connections (and requests in progress) served at once; more are answered 503
MAX_HEAD_BYTES = 64 * 1024  # the request line and headers
GRACEFUL_SHUTDOWN_S = 10


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for reading each request."""

    _read_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not None and not self.cycle.more_body and not self.cycle.response_complete:
            self._disarm()  # the whole request is in: the application has it

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()  # the next request on this connection gets its own deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._read_deadline = self.loop.call_later(REQUEST_READ_TIMEOUT_S, self._too_slow)

    def _disarm(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _too_slow(self) -> None:
        self._read_deadline = None
        cycle = self.cycle
        waiting_for_client = cycle is None or cycle.response_complete or cycle.more_body
        if waiting_for_client and not self.transport.is_closing():
            self.transport.close()


def server_config(app: Any, host: str, port: int) -> uvicorn.Config:
    """uvicorn's configuration for ``notewell serve``: the protocol above and the documented limits."""
    return uvicorn.Config(app, host=host, port=port, http=TimedH11Protocol, log_level="warning", access_log=False,
                          lifespan="on", timeout_keep_alive=KEEP_ALIVE_S, limit_concurrency=MAX_CONCURRENCY,
                          h11_max_incomplete_event_size=MAX_HEAD_BYTES,
                          timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S)
