"""The HTTP server's limits on its connections: slow or idle clients are timed out.

uvicorn closes a keep-alive connection that stays idle between requests, but a client that opens a
connection and sends its request slowly (slowloris: a header line every few seconds, or a body a byte
at a time) holds it, and a task, for ever. Here a connection must deliver each whole request (headers
and body) within REQUEST_READ_TIMEOUT_S of the connection opening or of the previous response ending,
or it is closed; once a request is read, the application takes as long as it needs (a search has its own
time budget), and a request head over MAX_HEAD_BYTES is answered 431. uvicorn's own limits complete the
set: keep-alive, and how many connections and requests are served at once (more are answered 503). The MCP
door refuses a body over 4 MB (the SDK's limit). docs/security.md lists every limit.

uvicorn counts every open connection against its limit, those that have not yet sent a whole request head
included, so a few hundred connections that send half a head and stall (no token needed) would have every
caller answered 503 until their deadlines passed, and a flood renewed every few seconds for ever. So a new
connection that finds the server at its limit closes the one that has waited longest with no response under
way (an idle keep-alive connection, a head that stalls, or the unsent rest of a body the application answered
without reading it): a connection whose request the application is answering is never closed for this, and a
client that sends its head at once is served whatever the flood.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

REQUEST_READ_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
MAX_CONCURRENCY = 512  # open connections (and requests in progress) served at once; more are answered 503
MAX_HEAD_BYTES = 64 * 1024  # the request line and headers
GRACEFUL_SHUTDOWN_S = 10
REFUSED_DRAIN_S = 1.0  # how long a connection whose head was refused is still read (and dropped) before closing
_HEAD_TOO_LARGE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
                   b"connection: close\r\ncontent-length: %d\r\n\r\n%s")


_WAITING_ORDER = itertools.count()


class HeadTooLarge(Exception):
    """Raised in a parser callback when a request's head passes MAX_HEAD_BYTES."""


class LimitedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol (its parser is C: 13% less server CPU per MCP call than h11's, measured in
    docs/performance.md) with a deadline for reading each request and a bound on its head. uvicorn bounds
    the head for h11 alone, so it is bounded here twice: the request line and headers the parser hands over are counted
    exactly, and the bytes read while a head is still incomplete are counted too (httptools holds a header
    until its line ends), give or take the one read that crossed the bound. Past ``MAX_HEAD_BYTES`` the
    request is answered 431 and the connection closed."""

    _read_deadline: asyncio.TimerHandle | None = None
    _head_open = True  # between requests, or inside a head: the bytes that come count towards the bound
    _head_bytes = 0  # read while the head was open
    _head_size = 0  # the request line and headers the parser has handed over
    _heads_read = 0
    _refused = False
    _head_too_large = False
    _waiting_since = 0  # when it last began to wait for its client, as a place in the order of such starts

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()
        self._make_room()

    def _make_room(self) -> None:
        """At the connection limit, close the connections that have waited longest with no answer under way (this
        one last: it has just come), so that the count is below the limit when this one's head is read."""
        if self.limit_concurrency is None or len(self.connections) < self.limit_concurrency:
            return
        waiting = sorted((connection for connection in self.connections
                          if isinstance(connection, LimitedHttpProtocol) and connection is not self
                          and connection._answering_nobody()), key=lambda connection: connection._waiting_since)
        for connection in waiting[:len(self.connections) - self.limit_concurrency + 1]:
            connection._evict()

    def _answering_nobody(self) -> bool:
        """No response under way (between requests, inside a head, or the rest of a body the application
        answered without reading): closing it loses nobody's answer."""
        return (not self._refused and not self.transport.is_closing()
                and (self.cycle is None or self.cycle.response_complete))

    def _evict(self) -> None:
        self._disarm()
        self.connections.discard(self)  # counted out now: its connection_lost comes on a later turn of the loop
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # read and dropped until the connection closes, so the client reads the 431 (see _refuse_head)
        heads_before, open_before = self._heads_read, self._head_open
        super().data_received(data)
        if self._refused:
            return
        if self._heads_read != heads_before or not open_before:
            self._head_bytes = 0  # this read completed a head, or a body: what follows is another request's
        elif self._head_open and not self.transport.is_closing():
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._refuse_head()
                return
        if self.cycle is not None and not self.cycle.more_body and not self.cycle.response_complete:
            self._disarm()  # the whole request is in: the application has it

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_size = 0

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        self._count_head(len(url))

    def on_header(self, name: bytes, value: bytes) -> None:
        super().on_header(name, value)
        self._count_head(len(name) + len(value) + 4)  # "name: value\r\n"

    def _count_head(self, size: int) -> None:
        self._head_size += size
        if self._head_size > MAX_HEAD_BYTES:
            self._head_too_large = True
            raise HeadTooLarge  # stops the parser; uvicorn then calls send_400_response, which answers 431

    def send_400_response(self, msg: str) -> None:
        if self._head_too_large:
            self._refuse_head()
        else:
            super().send_400_response(msg)

    def on_headers_complete(self) -> None:
        self._head_open = False
        self._heads_read += 1
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._head_open = True

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()  # the next request on this connection gets its own deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _refuse_head(self) -> None:
        """Answer 431 and end the sending side, then read and drop what comes for REFUSED_DRAIN_S before
        closing: closing with unread bytes would reset the connection, and the client would never see why."""
        message = f"Request head over {MAX_HEAD_BYTES // 1024} KB: send shorter headers".encode()
        self._refused = True
        self._disarm()
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # an earlier request still at work on this connection answers no one
        self.transport.write(_HEAD_TOO_LARGE % (len(message), message))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(REFUSED_DRAIN_S, self.transport.close)

    def _arm(self) -> None:
        self._disarm()
        self._waiting_since = next(_WAITING_ORDER)  # not the clock: connections made in one tick share its time
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
    return uvicorn.Config(app, host=host, port=port, http=LimitedHttpProtocol, log_level="warning",
                          access_log=False, lifespan="on", timeout_keep_alive=KEEP_ALIVE_S,
                          limit_concurrency=MAX_CONCURRENCY, timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S)
