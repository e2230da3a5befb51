"""What a door of the HTTP server is: its routes, each carrying its own middleware, and what it runs while serving.

A door's authentication belongs to its routes (``Route(..., middleware=[...])`` or ``Mount(..., middleware=[...])``),
never to the whole application: /mcp takes bearer tokens, the browser pages take session cookies, and /healthz
takes nothing. The one check in front of every door is the Host header's (notewell.http.hosts); a door names
the paths that answer any Host in ``open_paths``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from starlette.routing import BaseRoute

from notewell.http.tasks import BackgroundTask
from notewell.mcp.http import ORPHAN_AFTER_S, SWEEP_EVERY_S
from notewell.mcp.toolset import Toolset
from notewell.services.servers import new_server_id


@dataclass(frozen=True)
class ServeOptions:
    """What ``notewell serve`` was asked for, beyond the vault and the database."""

    toolsets: Sequence[Toolset]  # the MCP toolsets to offer
    allowed_hosts: Sequence[str] = ()  # Host headers accepted besides localhost ("*": any)
    json_response: bool = True  # MCP answers as JSON rather than an SSE stream
    sweep_every: float = SWEEP_EVERY_S  # the MCP orphan-session sweeper's period, seconds
    orphan_after: float = ORPHAN_AFTER_S  # an MCP session this old with no tool call is swept as an orphan
    watch: bool = False  # sync the vault's changes as they happen (notewell serve does, unless --no-watch)
    jobs: bool = False  # run the learning loop's job queue (notewell serve does, unless --no-jobs)
    secure_cookies: bool = False  # the web session cookie is Secure (served behind HTTPS)
    server_id: str = field(default_factory=new_server_id)  # /healthz answers it; notewell serve records it
    metrics_secret_hash: str | None = None  # GET /metrics is served, to this bearer secret's holder (http/ops.py)


@dataclass(frozen=True)
class Door:
    """One way into the server, mounted in the one application."""

    name: str
    routes: Sequence[BaseRoute]
    # Entered when the server starts and left when it stops (e.g. the MCP session manager's task group).
    lifespan: Callable[[], AbstractAsyncContextManager[object]] | None = field(default=None, repr=False)
    # Background work the door needs for as long as the server serves (e.g. the MCP orphan-session sweeper).
    tasks: Sequence[BackgroundTask] = ()
    # Paths answered whatever the Host header (notewell.http.hosts); every other path of every door checks it.
    open_paths: Sequence[str] = ()
