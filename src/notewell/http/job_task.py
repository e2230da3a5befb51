"""The job runner as a background task of the server (services/jobs.py: JobRunner), when ``options.jobs``."""

from __future__ import annotations

from notewell.http.door import ServeOptions
from notewell.http.tasks import BackgroundTask, thread_task
from notewell.runtime import Runtime


def job_task(rt: Runtime, options: ServeOptions) -> BackgroundTask:
    """Runs the learning loop's jobs while this server holds the store's job lease; stops at shutdown."""
    return thread_task("job-runner", lambda: rt.job_runner().start() if options.jobs else None)
