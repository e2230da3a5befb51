"""The one HTTP application: doors side by side, each with its own authentication, and background tasks
that run while the server serves and stop cleanly when it stops."""

from __future__ import annotations

import threading

import anyio
import httpx
import pytest

from mcp_world import ServerThread, World
from notewell.http.app import DOORS, build_app
from notewell.http.door import ServeOptions
from notewell.http.tasks import BackgroundTask
from notewell.mcp.registry import choose


def test_doors_side_by_side_each_with_its_own_authentication(mcp_world: World) -> None:
    with ServerThread(build_app(mcp_world.runtime, ServeOptions(choose(None)), doors=DOORS)) as srv:
        base = f"http://127.0.0.1:{srv.port}"
        assert httpx.post(f"{base}/mcp", json={}, timeout=10).status_code == 401  # the bearer door
        bogus = {"Authorization": "Bearer nw_bogus"}
        assert httpx.get(f"{base}/healthz", headers=bogus, timeout=10).json()["status"] == "ok"
        page = httpx.get(f"{base}/", headers=bogus, timeout=10)  # bearer middleware is /mcp's only
        assert page.status_code == 200 and "<h1>Notewell</h1>" in page.text  # the web door, mounted last at "/"
        cookie = page.headers["set-cookie"].lower()  # the session, carrying the sign-in form's CSRF token
        assert "httponly" in cookie and "samesite=lax" in cookie
        other = httpx.get(f"{base}/notes/today", headers=bogus, timeout=10)  # every other path is the web door's
        assert other.status_code == 404 and "Not found" in other.text


def test_background_tasks_run_while_serving_and_stop_cleanly(mcp_world: World,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    started, stopped = threading.Event(), threading.Event()

    async def ticker() -> None:
        try:
            started.set()
            await anyio.sleep_forever()
        finally:
            stopped.set()

    async def broken() -> None:
        raise RuntimeError("a task that fails")

    tasks = (lambda _rt, _o: BackgroundTask("ticker", ticker), lambda _rt, _o: BackgroundTask("broken", broken))
    with ServerThread(build_app(mcp_world.runtime, ServeOptions(choose(None)), tasks=tasks)) as srv:
        assert started.wait(10)
        assert httpx.get(f"http://127.0.0.1:{srv.port}/healthz", timeout=10).status_code == 200  # despite "broken"
        assert not stopped.is_set()
    assert stopped.is_set()
    assert not srv.thread.is_alive()
    assert "background task broken failed" in caplog.text


def test_secure_cookies_mark_the_web_session_cookie_secure(mcp_world: World) -> None:
    for secure in (False, True):
        app = build_app(mcp_world.runtime, ServeOptions(choose(None), secure_cookies=secure))
        with ServerThread(app) as srv:
            cookie = httpx.get(f"http://127.0.0.1:{srv.port}/signin", timeout=10).headers["set-cookie"].lower()
        assert ("; secure" in cookie) is secure
