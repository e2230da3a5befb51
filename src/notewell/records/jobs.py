"""The records of the job queue: a job of the brain's learning loop, and how the queue stands."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

JobState = Literal["pending", "running", "done", "failed"]
JOB_STATES: tuple[JobState, ...] = ("pending", "running", "done", "failed")


@dataclass(frozen=True)
class JobRecord:
    id: int
    kind: str  # what runs it: "kea.extract", "kea.cross_extract"
    payload: dict[str, Any]
    state: JobState
    attempts: int  # tries started (a try that was cut off by a crash counts)
    next_at: str  # when it is due (pending), ISO 8601 UTC; '' for at once
    lease_until: str | None  # while running: when another runner may take it over
    last_error: str | None
    result: str | None  # a done job's outcome: ok, skipped_session_gone, ...
    created_at: str
    finished_at: str | None
    key: str | None = None  # a scheduled job's once-only key (two servers waking at once queue it once)


@dataclass(frozen=True)
class JobCounts:
    pending: int
    running: int
    done: int
    failed: int
    oldest_due: str | None  # the oldest pending job's due time (its queueing, if due at once): the queue's lag


@dataclass(frozen=True)
class NewJob:
    """A job to queue. ``leased_to``: the process queueing it runs it at once (a refine at a session's close),
    holding it until ``lease_until``; should it die, the job is taken over as any other."""

    kind: str
    payload: dict[str, Any]
    leased_to: str | None = None
    lease_until: str | None = None
