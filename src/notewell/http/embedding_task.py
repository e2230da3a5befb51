"""The embedding runner as a background task of the server (services/meaning.py: EmbeddingRunner)."""

from __future__ import annotations

from notewell.http.door import ServeOptions
from notewell.http.tasks import BackgroundTask, thread_task
from notewell.runtime import Runtime


def embedding_task(rt: Runtime, options: ServeOptions) -> BackgroundTask:
    """Embeds what the store queues while the server runs (nothing when meaning is off); stops at shutdown."""
    return thread_task("embedding-runner", rt.meaning.run_in_background)
