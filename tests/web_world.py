"""The web test world: the MCP test world (tests/mcp_world.py) with passwords, served by the whole HTTP app
(pages at "/", MCP at /mcp), and Debian's chromium driven by Playwright.

One server and one browser for the whole test session; each test gets a fresh browser context (no cookies).
Screenshots go to SCREENSHOTS (artifacts/screenshots, or $NOTEWELL_SCREENSHOTS), at desktop and 400 px widths.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import anyio

from mcp_world import REPO_ROOT

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(os.environ.get("NOTEWELL_SCREENSHOTS", REPO_ROOT / "artifacts" / "screenshots"))
DESKTOP = {"width": 1280, "height": 800}
NARROW = {"width": 400, "height": 800}
PASSWORDS = {"admin": "admin pass phrase", "staff": "staff pass phrase", "alice": "alice pass phrase",
             "bob": "bob pass phrase"}
T = TypeVar("T")


def csrf_of(html: str) -> str:
    """The CSRF token a page's forms carry."""
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF field in the page"
    return found.group(1)


def email(handle: str) -> str:
    return f"{handle}@northwind.test"


def in_thread(make: Callable[[], Awaitable[T]]) -> T:
    """Run an async MCP client call to completion on a thread of its own (Playwright's sync API owns this one)."""
    out: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            out.append(anyio.run(make))
        except BaseException as exc:  # handed back to the test
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    if errors:
        raise errors[0]
    return out[0]
