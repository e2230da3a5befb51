"""The vault watcher as a background task of the server (notewell serve without --no-watch)."""

from __future__ import annotations

import anyio

from notewell.http.door import ServeOptions
from notewell.http.tasks import BackgroundTask
from notewell.runtime import Runtime


def vault_watcher_task(rt: Runtime, options: ServeOptions) -> BackgroundTask:
    """Runs the watcher's thread while the server runs (when ``options.watch``); stops it at shutdown."""

    async def run() -> None:
        if not options.watch:
            return
        watcher = rt.indexing.watch(lambda leading: rt.servers.leading(options.server_id, leading))
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(watcher.stop)

    return BackgroundTask("vault-watcher", run)
