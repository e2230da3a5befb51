"""The job runner's idle hook: queue each daily job once per UTC day (the cross-session extraction, nightly
evolution), at the runner's first idle moment of the day.

Each kind's run of a day is keyed ``<kind>:<YYYY-MM-DD>`` (store.jobs.schedule queues a key once), so servers
that wake at once queue it once, and the queue runs it once. The payload's ``through`` is the moment it was
queued for: the run's "now", so a day's work does not depend on when the job runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from notewell.services.jobs import Clock
from notewell.store.base import Store
from notewell.timestamps import iso


class DailySchedule:
    """Queues ``kinds`` once a day (per process, and per store by their keys)."""

    def __init__(self, store: Store, clock: Clock, kinds: Sequence[str]) -> None:
        self.store = store
        self.clock = clock
        self.kinds = tuple(kinds)
        self._day: str | None = None

    def __call__(self) -> bool:
        """True when this call queued any of the day's jobs."""
        now = self.clock()
        day = now.strftime("%Y-%m-%d")
        if day == self._day:
            return False
        self._day = day
        queued = [self.store.jobs.schedule(kind, f"{kind}:{day}", {"through": iso(now)}, iso(now))
                  for kind in self.kinds]
        return any(queued)
