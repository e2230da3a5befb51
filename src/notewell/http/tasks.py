"""Background tasks: work that runs beside the doors for the life of the server (a vault watcher, a sweeper).

Each task is an async function that runs until it is cancelled. The server starts every task once its doors
are up and cancels them all at shutdown, then waits for them to finish: a task keeps its clean-up in
``finally`` blocks and does blocking work in worker threads (``anyio.to_thread``) in short steps. A task that
fails is logged with its traceback; the doors keep serving.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Protocol

import anyio

_log = logging.getLogger("notewell.server")


@dataclass(frozen=True)
class BackgroundTask:
    name: str
    run: Callable[[], Awaitable[None]] = field(repr=False)


class Stoppable(Protocol):
    def stop(self) -> None: ...


def thread_task(name: str, start: Callable[[], Stoppable | None]) -> BackgroundTask:
    """A task for work that runs on a thread of its own: ``start`` starts it (None: nothing to run) when the
    server is up; its ``stop`` is called, off the event loop, at shutdown."""

    async def run() -> None:
        started = start()
        if started is None:
            return
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(started.stop)

    return BackgroundTask(name, run)


async def _supervised(task: BackgroundTask) -> None:
    try:
        await task.run()
    except anyio.get_cancelled_exc_class():
        raise
    except Exception:
        _log.exception("background task %s failed; the server goes on without it", task.name)


@asynccontextmanager
async def running(tasks: Sequence[BackgroundTask]) -> AsyncIterator[None]:
    """Run ``tasks`` while the body runs; on leaving, cancel them and wait for each to finish."""
    async with anyio.create_task_group() as group:
        for task in tasks:
            group.start_soon(_supervised, task, name=f"notewell:{task.name}")
        try:
            yield
        finally:
            group.cancel_scope.cancel()
