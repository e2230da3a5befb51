"""The job runner of the brain's learning loop, and the people's view of its queue (store/shared/jobs.py).

One runner per store runs jobs: the one holding the store's job lease (store.leadership, the lease the vault
watcher uses, under its own name), so `notewell serve` on several hosts and a `notewell worker` beside them
run each job once between them; a runner just elected first takes back the jobs a killed one held. Each job is
run in two steps (``Step``): ``prepare`` reads and decides outside any transaction; ``write`` runs in the
transaction that marks the job done, so a job's writes and its completion commit together or not at all. A
try that raises is retried after ``retry_delay`` (doubling from RETRY_BASE_SECONDS), up to MAX_ATTEMPTS, then
left ``failed`` for a person to retry (`notewell jobs retry ID`). A job that cannot run yet, for a reason not its
own (``Deferred``: KEA's provider did not answer its last call), is due again when the reason says, its try not
counted, and the runner goes on with the next job at once.

Time comes from the runner's clock (``now``), which tests set.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from notewell.access.authorization import Authorization
from notewell.access.policy import Action
from notewell.access.principal import Principal
from notewell.errors import InvalidArgument, NotFound
from notewell.log_lines import line
from notewell.records.jobs import JOB_STATES, JobCounts, JobRecord, JobState
from notewell.store.base import Store
from notewell.store.leadership import Leadership
from notewell.store.shared.jobs import LeaseLost
from notewell.timestamps import iso

# jobs claimed per step: one, so that each job's lease starts when it starts (a batch leased at once ran past
# its later jobs' leases behind slow model calls, and doctor then took a working runner for a dead one)
BATCH = 1
LEASE_SECONDS = 300  # a runner killed mid-job: its jobs are taken over after this (at once by the next elected)
MAX_ATTEMPTS = 5
RETRY_BASE_SECONDS = 30.0
RETRY_MAX_SECONDS = 6 * 3600.0
POLL_SECONDS = 1.0  # another process's new job is seen within this
LEADER_POLL_SECONDS = 5.0
LIST_MAX = 500
MANAGE: Action = "jobs:manage"
RUNNER_PREFIX = "runner-"  # a runner's lease owner starts so (a close refining at once leases as close-…)

_log = logging.getLogger("notewell.jobs")
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


JOB_ID_MAX = 2**63 - 1  # a job's id is a 64-bit integer in both stores


def retry_delay(attempts: int) -> float:
    """Seconds before the next try of a job that has failed ``attempts`` times (1 or more)."""
    return float(min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2 ** max(0, attempts - 1)))


class Deferred(Exception):
    """Raised by a job's ``prepare``: the job cannot run before ``until`` for a reason not its own (``reason``, kept
    as its last error); it is due again then, the try not counted against MAX_ATTEMPTS."""

    def __init__(self, until: datetime, reason: str) -> None:
        super().__init__(reason)
        self.until = until
        self.reason = reason


DEFER_MIN_SECONDS = 1.0  # a deferral is never sooner: a job is never claimed again in a tight loop


@dataclass(frozen=True)
class Step:
    """A prepared job: ``write`` runs in the job's completing transaction and returns its outcome; ``after``
    runs once that committed (its log lines)."""

    write: Callable[[], str]
    after: Callable[[str], None] = field(default=lambda _result: None)


@dataclass(frozen=True)
class JobKind:
    """How a kind of job runs: ``prepare`` makes its Step; ``failed`` says a try failed (its log line)."""

    prepare: Callable[[JobRecord], Step]
    failed: Callable[[JobRecord, Exception], None] = field(default=lambda _job, _exc: None)


def run_job(store: Store, kinds: Mapping[str, JobKind], job: JobRecord, owner: str, clock: Clock) -> str | None:
    """Run one claimed job: its outcome when done, None when it failed (retried later) or its lease was lost."""
    kind = kinds.get(job.kind)
    try:
        if kind is None:
            raise LookupError(f"no runner knows jobs of kind {job.kind!r}; upgrade this Notewell")
        step = kind.prepare(job)
        with store.jobs.completing(job.id, owner, iso(clock())) as done:
            done.result = step.write()
    except LeaseLost:
        _log.warning(line("jobs.lease_lost", job=job.id, kind=job.kind))
        return None
    except Deferred as later:
        until = iso(max(later.until, clock() + timedelta(seconds=DEFER_MIN_SECONDS)))
        store.jobs.deferred(job.id, owner, later.reason, until)
        _log.info(line("jobs.deferred", job=job.id, kind=job.kind, until=until))
        return None
    except Exception as exc:
        last = job.attempts >= MAX_ATTEMPTS
        retry_at = None if last else iso(clock() + timedelta(seconds=retry_delay(job.attempts)))
        store.jobs.failed(job.id, owner, f"{type(exc).__name__}: {exc}", iso(clock()), retry_at)
        if kind is not None:
            kind.failed(job, exc)
        _log.warning(line("jobs.failed", job=job.id, kind=job.kind, attempts=job.attempts,
                          retry="no" if last else retry_at, error=type(exc).__name__))
        return None
    step.after(done.result)
    return done.result


class JobRunner:
    """Runs due jobs while it holds the job lease, until stopped (a thread of `notewell serve`, or the
    foreground of `notewell worker`)."""

    def __init__(self, store: Store, kinds: Mapping[str, JobKind], leadership: Leadership, wake: threading.Event,
                 clock: Clock = utc_now, lease_seconds: float = LEASE_SECONDS,
                 on_idle: Callable[[], bool] | None = None) -> None:
        self.store = store
        self.kinds = kinds
        self.leadership = leadership
        self.wake = wake
        self.clock = clock
        self.lease_seconds = lease_seconds
        self.on_idle = on_idle  # called when nothing is due (the daily schedule); True: it queued a job
        self.owner = f"{RUNNER_PREFIX}{secrets.token_hex(6)}"
        self.leading: bool | None = None  # None until its first try for the lease (then each change is logged)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_due(self) -> int:
        """One step: claim and run up to BATCH due jobs; how many were claimed."""
        now = self.clock()
        jobs = self.store.jobs.claim(self.owner, iso(now), iso(now + timedelta(seconds=self.lease_seconds)), BATCH,
                                     MAX_ATTEMPTS)
        for job in jobs:
            if self._stop.is_set():
                break  # the rest stay leased to this runner: the next elected takes them back at once
            run_job(self.store, self.kinds, job, self.owner, self.clock)
        return len(jobs)

    def run(self, drain: bool = False) -> bool:
        """Run until stopped (``drain``: until no job is due, or at once when another process holds the job lease
        and runs them); never raises. False: a drain that ran nothing, the lease being another's."""
        try:
            while not self._stop.is_set():
                if not self._lead():
                    if drain:
                        return False
                    self._stop.wait(LEADER_POLL_SECONDS)
                    continue
                try:
                    taken = self.run_due()
                    if taken == 0 and self.on_idle is not None and self.on_idle():
                        continue  # it queued a job: run it now
                except Exception:  # the store was unreachable for a moment: try again after a pause
                    _log.exception(line("jobs.runner", outcome="error"))
                    taken = 0
                    self._stop.wait(5 * POLL_SECONDS)
                if taken == 0:
                    if drain:
                        return True
                    self.wake.wait(POLL_SECONDS)
                    self.wake.clear()
            return True
        finally:
            self.leadership.release()
            if self.leading:
                self._set_leading(False)

    def request_stop(self) -> None:
        """Stop after the job in hand (from a signal handler: nothing waits here)."""
        self._stop.set()
        self.wake.set()

    def _lead(self) -> bool:
        if not self.leadership.try_acquire():
            self._set_leading(False)
            return False
        if not self.leading:
            released = self.store.jobs.release_orphans(RUNNER_PREFIX)  # no other runner leads: theirs are orphans
            self._set_leading(True, released)
        return True

    def _set_leading(self, leading: bool, released: int = 0) -> None:
        if leading != self.leading:
            self.leading = leading
            _log.info(line("jobs.leader", state="leading" if leading else "following", runner=self.owner,
                           released=released if leading else None))

    def start(self) -> JobRunner:
        self._thread = threading.Thread(target=self.run, name="notewell-jobs", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the job in hand (its transaction commits or rolls back whole), and wait for it."""
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout)


class JobService:
    """The queue for operators (`notewell jobs`): list and retry, for an admin (the policy's jobs:manage)."""

    def __init__(self, store: Store, authorization: Authorization, wake: threading.Event) -> None:
        self.store = store
        self.authorization = authorization
        self.wake = wake

    def listing(self, p: Principal, state: str | None = None, limit: int = 50) -> list[JobRecord]:
        self.authorization.authorize(p, MANAGE)
        if state is not None and state not in JOB_STATES:
            raise InvalidArgument("state", f"unknown state {state!r}; use one of {', '.join(JOB_STATES)}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIST_MAX:
            raise InvalidArgument("limit", f"must be a whole number from 1 to {LIST_MAX}")
        chosen: JobState | None = next((s for s in JOB_STATES if s == state), None)
        return self.store.jobs.listing(chosen, limit)

    def counts(self, p: Principal) -> JobCounts:
        self.authorization.authorize(p, MANAGE)
        return self.store.jobs.counts()

    def retry(self, p: Principal, job_id: int) -> JobRecord:
        """A failed job due again at once, its tries counted afresh."""
        self.authorization.authorize(p, MANAGE)
        if isinstance(job_id, bool) or not isinstance(job_id, int) or not 1 <= job_id <= JOB_ID_MAX:
            raise InvalidArgument("job_id", f"must be a job's id, from 1 to {JOB_ID_MAX}")
        job = self.store.jobs.retry(job_id, iso(utc_now()))
        if job is None:
            found = self.store.jobs.get(job_id)
            if found is None:
                raise NotFound(f"no job {job_id}; `notewell jobs` lists them")
            raise InvalidArgument("job_id", f"job {job_id} is {found.state}, not failed; only a failed job is retried")
        self.wake.set()
        return job
