"""The one ASGI application ``notewell serve`` runs: every door side by side, one lifespan.

Adding a door: write ``<name>_door(rt, options) -> Door`` in notewell/http/doors.py (its routes carry their own
middleware) and add it to DOORS below. Order is match order: a door mounted at "/" (the browser pages) goes
last, because it matches every path.

Adding a background task: write ``<name>_task(rt, options) -> BackgroundTask`` (notewell/http/tasks.py says what
a task must do) and add it to BACKGROUND_TASKS below.

Every request but those to a door's open paths (/healthz, /readyz, /metrics) first passes the Host check
(notewell.http.hosts):
the one middleware over the whole application, since DNS rebinding threatens every door alike.

The lifespan enters each door's own lifespan (the MCP session manager), then starts the background tasks; at
shutdown it cancels the tasks, waits for them, and leaves the doors' lifespans in reverse order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware

from notewell.http.door import Door, ServeOptions
from notewell.http.doors import health_door, mcp_door, rest_door, web_door
from notewell.http.embedding_task import embedding_task
from notewell.http.hosts import AllowedHosts, HostCheck
from notewell.http.job_task import job_task
from notewell.http.memory_task import memory_trim_task
from notewell.http.ops import ops_door
from notewell.http.tasks import BackgroundTask, running
from notewell.http.unavailable import UnavailableAnswered
from notewell.http.watch_task import vault_watcher_task
from notewell.runtime import Runtime

DoorFactory = Callable[[Runtime, ServeOptions], Door]
TaskFactory = Callable[[Runtime, ServeOptions], BackgroundTask]

DOORS: tuple[DoorFactory, ...] = (
    health_door,  # GET /healthz, unauthenticated
    ops_door,  # GET /readyz (unauthenticated), GET /metrics (with --metrics, a bearer secret)
    mcp_door,  # /mcp, bearer tokens
    rest_door,  # /api/v1, bearer tokens
    web_door,  # / (browser pages, session cookies and CSRF), last
)

BACKGROUND_TASKS: tuple[TaskFactory, ...] = (
    vault_watcher_task,  # syncs the vault's changes (ServeOptions.watch)
    embedding_task,  # embeds the memories, knowledge and sessions the store queues (services/meaning.py)
    job_task,  # runs the learning loop's jobs (ServeOptions.jobs; services/jobs.py)
    memory_trim_task,  # gives the memory a burst of calls freed back to the system (malloc_arenas.py)
)


def build_app(rt: Runtime, options: ServeOptions, *, doors: Sequence[DoorFactory] = DOORS,
              tasks: Sequence[TaskFactory] = BACKGROUND_TASKS) -> Starlette:
    """The application serving every door over ``rt``; its lifespan runs the doors' own and the background tasks."""
    built = [make(rt, options) for make in doors]
    background = [task for door in built for task in door.tasks] + [make(rt, options) for make in tasks]

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for door in built:
                if door.lifespan is not None:
                    await stack.enter_async_context(door.lifespan())
            await stack.enter_async_context(running(background))
            yield

    # The one middleware over every door: the Host check against DNS rebinding (notewell.http.hosts)
    host_check = Middleware(HostCheck, hosts=AllowedHosts(options.allowed_hosts),
                            open_paths=[path for door in built for path in door.open_paths])
    # and outermost, a store that cannot be reached answered 503 wherever it surfaces (notewell.http.unavailable)
    return Starlette(routes=[route for door in built for route in door.routes],
                     middleware=[Middleware(UnavailableAnswered), host_check], lifespan=lifespan)
