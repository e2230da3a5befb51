"""The vault watcher as a background task of the server (notewell serve without --no-watch)."""

from __future__ import annotations

from notewell.http.door import ServeOptions
from notewell.http.tasks import BackgroundTask, thread_task
from notewell.runtime import Runtime


def vault_watcher_task(rt: Runtime, options: ServeOptions) -> BackgroundTask:
    """Runs the watcher's thread while the server runs (when ``options.watch``); stops it at shutdown."""
    return thread_task("vault-watcher", lambda: rt.indexing.watch(
        lambda leading: rt.servers.leading(options.server_id, leading)) if options.watch else None)
