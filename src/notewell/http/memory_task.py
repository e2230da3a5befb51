"""Memory a server freed, given back to the system every ``TRIM_SECONDS`` (malloc_arenas.py: give_back_freed).

A burst of calls (searches reading many regions, the model's runs) frees memory in the middle of malloc's
arenas, which stays resident otherwise. The trim runs on a worker thread (it holds an arena's lock for a
few milliseconds), never on the event loop.
"""

from __future__ import annotations

import anyio

from notewell.http.door import ServeOptions
from notewell.http.tasks import BackgroundTask
from notewell.malloc_arenas import give_back_freed
from notewell.runtime import Runtime

TRIM_SECONDS = 5.0


def memory_trim_task(rt: Runtime, options: ServeOptions) -> BackgroundTask:
    async def run() -> None:
        while True:
            await anyio.sleep(TRIM_SECONDS)
            await anyio.to_thread.run_sync(give_back_freed)

    return BackgroundTask("memory-trim", run)
