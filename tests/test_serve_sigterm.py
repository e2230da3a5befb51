"""`notewell serve`'s SIGTERM handler, wherever the signal lands: the CI once saw a SIGTERM sent just as the server
said where it listens swallowed (the handler raised SystemExit inside a weakref callback, where Python prints and
drops exceptions), and the server then served on for 90 s, deaf to the signal."""

from __future__ import annotations

import signal
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn

from mcp_world import free_port
from notewell.cli.serve_cmd import _stop_cleanly, bind_or_fail
from notewell.http.server import server_config


async def _app(scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
               send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
    """An ASGI app that starts and stops (lifespan) and answers nothing else: the server around it is under test."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            kind = message["type"]
            await send({"type": f"{kind}.complete"})
            if kind == "lifespan.shutdown":
                return


class _Held:
    """Something whose collection runs a callback: where Python swallows what the callback raises."""


def test_a_sigterm_swallowed_where_it_lands_still_stops_the_server() -> None:
    port = free_port()
    server = uvicorn.Server(server_config(_app, "127.0.0.1", port))
    stop = _stop_cleanly(server)
    held = _Held()
    ref = weakref.ref(held, lambda _gone: stop(signal.SIGTERM, None))  # the signal handler runs in the callback
    del held  # the callback runs here; an exception it raised would be printed and dropped
    assert ref() is None
    sock = bind_or_fail("127.0.0.1", port)
    try:
        runner = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        runner.start()
        runner.join(timeout=30)
        assert not runner.is_alive(), "the server kept serving after SIGTERM"
    finally:
        server.should_exit = True
        sock.close()
