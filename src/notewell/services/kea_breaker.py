"""KEA's circuit breaker: once its provider leaves a call unanswered, no call is made to it for a while.

A provider that accepts connections and never answers (a local model server wedged, a proxy in front of a dead
one) held the single job runner for a whole timeout per call: each job waited, was retried, and waited again, and
every job behind it, those that call no model included, waited too; each close carrying learnings waited as long.
So a call that gets no answer at all (``kea_providers.unanswered``: no connection, or none within
KEA_TIMEOUT_SECONDS) opens the breaker for KEA_BREAKER_SECONDS: until then no call is made, a close's learnings
are judged by the deterministic judge at once, and a mining job is deferred to the breaker's end without its try
counted (``services.jobs.Deferred``). The first call after that is tried: answered (even with an error, a refusal
being an answer), the breaker closes; unanswered, it opens again. An answer that refuses the call (a bad key, an
unknown model) never opens it: that is the job's error, retried with the queue's backoff.

One breaker per provider: KEA calls one (KEA_MODEL's, at its URL), through the one extractor of its process, so
the breaker is that extractor's, shared by the job runner and the closes of one process; another process (a
worker beside a server) keeps its own. Time is the extractor's clock.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from notewell.services.jobs import Clock


class Breaker:
    """Whether calls to one provider are held, and until when (module docstring)."""

    def __init__(self, seconds: float, clock: Clock) -> None:
        self.seconds = seconds
        self.clock = clock
        self._until: datetime | None = None
        self._lock = threading.Lock()

    def held_until(self) -> datetime | None:
        """When calls may be made again, while they are held; None: a call may be made now."""
        with self._lock:
            if self._until is not None and self.clock() < self._until:
                return self._until
            return None

    def unanswered(self) -> datetime:
        """A call got no answer: calls are held from now for ``seconds``; until when."""
        with self._lock:
            self._until = self.clock() + timedelta(seconds=self.seconds)
            return self._until

    def answered(self) -> bool:
        """A call got an answer: calls are made again. Whether the breaker was open (it closes now)."""
        with self._lock:
            was, self._until = self._until is not None, None
            return was
