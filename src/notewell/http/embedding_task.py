"""The embedding runner as a background task of the server (services/meaning.py: EmbeddingRunner)."""

from __future__ import annotations

import anyio

from notewell.http.door import ServeOptions
from notewell.http.tasks import BackgroundTask
from notewell.runtime import Runtime


def embedding_task(rt: Runtime, options: ServeOptions) -> BackgroundTask:
    """Embeds what the store queues while the server runs (nothing when meaning is off); stops at shutdown."""

    async def run() -> None:
        runner = rt.meaning.run_in_background()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(runner.stop)

    return BackgroundTask("embedding-runner", run)
