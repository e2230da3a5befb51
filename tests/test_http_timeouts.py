"""Slow and idle clients are timed out (issue 14, defect 8).

On the code before the fix 200 slowloris connections were held for as long as their clients liked. The
read deadline is shortened here so the test is quick; the server is the one `notewell serve` runs.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from mcp_world import ServerThread, World
from notewell.http import server as http_server
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose

DEADLINE_S = 1.0


@pytest.fixture
def served(mcp_world: World, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    monkeypatch.setattr(http_server, "REQUEST_READ_TIMEOUT_S", DEADLINE_S)
    with ServerThread(build_app(mcp_world.runtime, ServeOptions(choose(None)))) as server:
        yield server.port


def _closed_by_server(sock: socket.socket) -> bool:
    """Does the server close the connection (whatever it says first) before the socket's timeout?"""
    try:
        while sock.recv(4096):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True


def test_slow_and_idle_connections_are_closed(served: int) -> None:
    idle = [socket.create_connection(("127.0.0.1", served)) for _ in range(5)]
    slow_head = [socket.create_connection(("127.0.0.1", served)) for _ in range(5)]
    slow_body = [socket.create_connection(("127.0.0.1", served)) for _ in range(5)]
    for sock in slow_head:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    for sock in slow_body:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"jsonrpc\"")
    cut: set[socket.socket] = set()
    started = time.monotonic()
    while time.monotonic() - started < DEADLINE_S * 2:  # keep trickling: the deadline is for the whole request
        for sock in slow_head:
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:  # the server closed it
                cut.add(sock)
        time.sleep(0.2)
    assert cut == set(slow_head)
    for sock in idle + slow_body:
        sock.settimeout(DEADLINE_S * 3)
        assert _closed_by_server(sock)
    for sock in idle + slow_head + slow_body:
        sock.close()
    assert httpx.get(f"http://127.0.0.1:{served}/healthz", timeout=10).status_code == 200


def test_a_request_that_takes_its_time_to_answer_is_not_cut(served: int) -> None:
    with httpx.Client(timeout=10) as client:
        first = client.get(f"http://127.0.0.1:{served}/healthz")
        time.sleep(DEADLINE_S / 2)
        second = client.get(f"http://127.0.0.1:{served}/healthz")  # the same keep-alive connection
    assert first.status_code == second.status_code == 200


def test_the_limits_are_set() -> None:
    config = http_server.server_config(None, "127.0.0.1", 1)
    assert config.limit_concurrency == http_server.MAX_CONCURRENCY
    assert config.timeout_keep_alive == http_server.KEEP_ALIVE_S
    assert config.http is http_server.LimitedHttpProtocol


def _answer(port: int, head: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
            if b"\r\n\r\n" in answer and b"connection: close" not in answer.lower():
                break  # a kept-alive answer's head: enough to read its status
        return answer


def test_a_request_head_over_the_bound_is_refused(served: int) -> None:
    """A head within MAX_HEAD_BYTES is served; a longer one, in one write or many, is answered 431 and the
    connection closed, never held in memory until it ends."""
    def head(size: int) -> bytes:
        return b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * size + b"\r\n\r\n"

    assert _answer(served, head(60 * 1024)).startswith(b"HTTP/1.1 200")
    with httpx.Client(timeout=10) as client:  # bodies are not heads: large ones, one after another on a connection
        statuses = [client.post(f"http://127.0.0.1:{served}/healthz", content=b"x" * 300_000).status_code
                    for _ in range(3)]
    assert 431 not in statuses and len(set(statuses)) == 1, statuses
    for size in (66 * 1024, 200 * 1024):  # a head that fits in one read, and one that does not
        refused = _answer(served, head(size))
        assert refused.startswith(b"HTTP/1.1 431") and b"send shorter headers" in refused, size
    with socket.create_connection(("127.0.0.1", served), timeout=10) as sock:  # a head in many writes
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
        for _ in range(70):
            sock.sendall(b"X-Pad: " + b"b" * 1000 + b"\r\n")
            time.sleep(0.001)
        assert sock.recv(4096).startswith(b"HTTP/1.1 431") and sock.recv(4096) == b""  # then the end


def test_a_flood_of_stalled_heads_does_not_shut_callers_out(mcp_world: World,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Connections that send half a head and stall (no token needed) filled uvicorn's connection limit, and
    every caller was answered 503 for as long as the flood went on. Now a newcomer closes the connection that
    has waited longest for its head; a request being answered is never closed for it."""
    limit = 20
    monkeypatch.setattr(http_server, "MAX_CONCURRENCY", limit)
    with ServerThread(build_app(mcp_world.runtime, ServeOptions(choose(None)))) as server, \
            httpx.Client(timeout=10) as kept:
        port = server.port
        assert kept.get(f"http://127.0.0.1:{port}/healthz").status_code == 200  # an idle keep-alive one
        stalled = []
        for _ in range(limit * 2):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            stalled.append(sock)
        statuses = [httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code for _ in range(5)]
        assert statuses == [200] * 5
        for sock in stalled[:limit]:  # the oldest stalled heads were closed to make room
            sock.settimeout(5)
            assert _closed_by_server(sock)
        newest = stalled[-1]
        newest.sendall(b"\r\n")  # the newest ones are still open: its head completes and is answered
        newest.settimeout(5)
        assert newest.recv(4096).startswith(b"HTTP/1.1 200")
        for sock in stalled:
            sock.close()


def test_a_flood_of_answered_requests_whose_bodies_stall_does_not_shut_callers_out(
        mcp_world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Connections that announce a long body, get their answer at once (no token: 401; /healthz: 200) and then
    never send the body held the limit as surely as half-sent heads: they were not counted as waiting."""
    limit = 20
    monkeypatch.setattr(http_server, "MAX_CONCURRENCY", limit)
    with ServerThread(build_app(mcp_world.runtime, ServeOptions(choose(None)))) as server:
        port = server.port
        stalled = []
        for n in range(limit * 2):
            sock = socket.create_connection(("127.0.0.1", port))
            path = b"/mcp" if n % 2 else b"/healthz"
            sock.sendall(b"POST " + path + b" HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\nx")
            stalled.append(sock)
        statuses = [httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code for _ in range(5)]
        assert statuses == [200] * 5
        for sock in stalled:
            sock.close()
