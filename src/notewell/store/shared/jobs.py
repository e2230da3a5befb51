"""The job queue of the brain's learning loop, in SQL both backends run.

A job is a row of ``jobs``: its kind (what runs it), a JSON payload, its state (pending, running, done,
failed), the tries started, when it is next due, and while it runs a lease (``lease_until``, ``lease_owner``).
Whatever makes work queues its job in its own transaction (``insert_job``; a session's close does), so committed
work is queued work that no crash can lose. A runner claims due jobs (``FOR UPDATE SKIP LOCKED`` on
PostgreSQL; under the writer lock on SQLite, whose write transactions lock the database), runs each, and
marks it done in the same transaction as the job's own writes (``completing``): that commit is conditional on
the runner still holding the job's lease, so a job is done exactly when its writes are, and a runner that lost
its lease (killed, or too slow) has its writes rolled back. A job a runner was killed in is taken over when its
lease runs out, or at once by the next runner elected (``release_orphans``: the jobs runners held). A failure
counts against ``max_attempts`` and waits a growing delay (the runner decides it); the last one leaves the job
``failed`` until a person retries it. A job deferred (``deferred``: it cannot run yet, for a reason not its own)
is due again when the runner says, its try given back.

A scheduled job carries a ``once_key`` (``kea.cross_extract:2026-12-02``): two servers that wake at once queue
it once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from notewell.errors import Conflict
from notewell.records.jobs import JOB_STATES, JobCounts, JobRecord, JobState, NewJob
from notewell.store.shared.dialect import Dialect, Executor, marks
from notewell.store.shared.migrations import Migration

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE jobs (
            id {serial},
            kind {key} NOT NULL,
            payload TEXT NOT NULL,
            state {key} NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at {key} NOT NULL,
            lease_until {key},
            lease_owner {key},
            last_error TEXT,
            result {key},
            once_key {key},
            created_at {key} NOT NULL,
            finished_at {key}
        )
        """,
        "CREATE INDEX jobs_due ON jobs (state, next_at, id)",
        "CREATE UNIQUE INDEX jobs_once ON jobs (once_key)",
    ),
]

def insert_job(conn: Executor, job: NewJob, now: str) -> int:
    """Queue ``job`` in the writer's transaction (``conn``); its id."""
    state = "running" if job.leased_to else "pending"
    return int(conn.execute("INSERT INTO jobs (kind, payload, state, attempts, next_at, lease_until, lease_owner,"
                            f" created_at) VALUES ({marks(8)}) RETURNING id",
                            (job.kind, payload_text(job.payload), state, 1 if job.leased_to else 0, "",
                             job.lease_until, job.leased_to, now)).fetchone()[0])


_COLUMNS = ("id, kind, payload, state, attempts, next_at, lease_until, last_error, result, created_at,"
            " finished_at, once_key")
ERROR_MAX_CHARS = 500


class LeaseLost(Conflict):
    """The job's lease went to another runner (or a person retried it) while it ran: its writes roll back."""


@dataclass
class Completion:
    """What a job's run sets before its transaction commits: its outcome (``ok``, ``skipped_session_gone``)."""

    result: str = "ok"


def payload_text(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _job(row: Sequence[Any]) -> JobRecord:
    return JobRecord(id=int(row[0]), kind=str(row[1]), payload=json.loads(row[2]), state=cast(JobState, row[3]),
                     attempts=int(row[4]), next_at=str(row[5]), lease_until=row[6], last_error=row[7],
                     result=row[8], created_at=str(row[9]), finished_at=row[10], key=row[11])


class SqlJobs:
    def __init__(self, dialect: Dialect) -> None:
        self.sql = dialect
        dialect.migrate("jobs", dialect.rendered(MIGRATIONS))

    def enqueue(self, job: NewJob, now: str) -> int:
        with self.sql.transaction() as conn:
            return insert_job(conn, job, now)

    def schedule(self, kind: str, once_key: str, payload: dict[str, Any], now: str, due: str = "") -> bool:
        """Queue a job once for its key; False when a job of that key was queued already (by anyone)."""
        with self.sql.transaction() as conn:
            cur = conn.execute("INSERT INTO jobs (kind, payload, next_at, created_at, once_key) VALUES (?, ?, ?, ?, ?)"
                               " ON CONFLICT (once_key) DO NOTHING", (kind, payload_text(payload), due, now, once_key))
            return bool(cur.rowcount)

    def claim(self, owner: str, now: str, lease_until: str, limit: int, max_attempts: int) -> list[JobRecord]:
        """Up to ``limit`` jobs that are due, or whose runner's lease ran out, leased to ``owner`` (oldest due
        first); each counts a try. A job whose last try was cut off (its lease ran out, or an elected runner
        took it back) is failed instead: a job that kills its runner each time must not be tried for ever."""
        skip = " SKIP LOCKED" if self.sql.lock else ""
        with self.sql.transaction() as conn:
            rows = conn.execute(
                "SELECT id, attempts FROM jobs WHERE (state = 'pending' AND next_at <= ?)"
                " OR (state = 'running' AND lease_until <= ?) ORDER BY next_at, id"
                f" LIMIT ?{self.sql.lock}{skip}", (now, now, limit)).fetchall()
            spent = [int(r[0]) for r in rows if int(r[1]) >= max_attempts]  # only a cut-off try leaves one
            taken = [int(r[0]) for r in rows if int(r[0]) not in spent]
            for job_id in spent:
                conn.execute("UPDATE jobs SET state = 'failed', lease_until = NULL, lease_owner = NULL,"
                             " last_error = ?, finished_at = ? WHERE id = ?",
                             ("its runner stopped during each of its tries", now, job_id))
            if not taken:
                return []
            conn.execute(f"UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_until = ?,"
                         f" lease_owner = ? WHERE id IN ({marks(len(taken))})", (lease_until, owner, *taken))
            found = conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id IN ({marks(len(taken))})"
                                 " ORDER BY next_at, id", taken).fetchall()
        return [_job(r) for r in found]

    @contextmanager
    def completing(self, job_id: int, owner: str, now: str) -> Iterator[Completion]:
        """A transaction for the job's writes that marks it done as it commits; LeaseLost (and nothing
        written) when ``owner`` no longer holds the job."""
        done = Completion()
        with self.sql.transaction() as conn:
            yield done
            cur = conn.execute("UPDATE jobs SET state = 'done', result = ?, finished_at = ?, lease_until = NULL,"
                               " lease_owner = NULL WHERE id = ? AND lease_owner = ? AND state = 'running'",
                               (done.result, now, job_id, owner))
            if not cur.rowcount:
                raise LeaseLost(f"job {job_id} was taken over by another runner while it ran; its writes are "
                                "rolled back")

    def failed(self, job_id: int, owner: str, error: str, now: str, next_at: str | None) -> None:
        """A try failed: due again at ``next_at``, or (None: it was the last) failed for good."""
        with self.sql.transaction() as conn:
            if next_at is None:
                conn.execute("UPDATE jobs SET state = 'failed', last_error = ?, finished_at = ?, lease_until = NULL,"
                             " lease_owner = NULL WHERE id = ? AND lease_owner = ?",
                             (error[:ERROR_MAX_CHARS], now, job_id, owner))
            else:
                conn.execute("UPDATE jobs SET state = 'pending', last_error = ?, next_at = ?, lease_until = NULL,"
                             " lease_owner = NULL WHERE id = ? AND lease_owner = ?",
                             (error[:ERROR_MAX_CHARS], next_at, job_id, owner))

    def deferred(self, job_id: int, owner: str, reason: str, next_at: str) -> None:
        """The job cannot run before ``next_at`` for a reason not its own: due again then, the try its claim counted
        given back, ``reason`` kept as its last error."""
        with self.sql.transaction() as conn:
            conn.execute("UPDATE jobs SET state = 'pending', attempts = attempts - 1, last_error = ?, next_at = ?,"
                         " lease_until = NULL, lease_owner = NULL"
                         " WHERE id = ? AND lease_owner = ? AND state = 'running'",
                         (reason[:ERROR_MAX_CHARS], next_at, job_id, owner))

    def release_orphans(self, owner_prefix: str) -> int:
        """Make every running job leased to a runner (its owner starting with ``owner_prefix``) pending again:
        called by a runner just elected, when no other runner can hold one (their writes, if any, were rolled
        back or marked them done). A job leased to another holder (a close refining its learnings) keeps its
        lease until it runs out. How many."""
        with self.sql.transaction() as conn:
            return int(conn.execute("UPDATE jobs SET state = 'pending', lease_until = NULL, lease_owner = NULL"
                                    " WHERE state = 'running' AND substr(lease_owner, 1, ?) = ?",
                                    (len(owner_prefix), owner_prefix)).rowcount or 0)

    def retry(self, job_id: int, now: str) -> JobRecord | None:
        """A failed job due again at once with its tries counted afresh; None when there is no failed job ``id``."""
        with self.sql.transaction() as conn:
            row = conn.execute("UPDATE jobs SET state = 'pending', attempts = 0, next_at = ?, finished_at = NULL"
                               f" WHERE id = ? AND state = 'failed' RETURNING {_COLUMNS}", (now, job_id)).fetchone()
        return _job(row) if row else None

    def get(self, job_id: int) -> JobRecord | None:
        with self.sql.reading() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return _job(row) if row else None

    def listing(self, state: JobState | None, limit: int, kind: str | None = None) -> list[JobRecord]:
        """The newest jobs first (of one state, one kind, when given)."""
        where: list[str] = []
        params: list[str] = []
        if state is not None:
            where.append("state = ?")
            params.append(state)
        if kind is not None:
            where.append("kind = ?")
            params.append(kind)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        with self.sql.reading() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM jobs{clause} ORDER BY id DESC LIMIT ?",
                                (*params, limit)).fetchall()
        return [_job(r) for r in rows]

    def counts(self) -> JobCounts:
        with self.sql.reading() as conn:
            by_state = dict.fromkeys(JOB_STATES, 0)
            for state, n in conn.execute("SELECT state, count(*) FROM jobs GROUP BY state").fetchall():
                by_state[state] = int(n)
            oldest = conn.execute(  # a job due at once ('') was due when it was queued
                "SELECT min(CASE WHEN next_at = '' THEN created_at ELSE next_at END) FROM jobs"
                " WHERE state = 'pending'").fetchone()
        return JobCounts(by_state["pending"], by_state["running"], by_state["done"], by_state["failed"],
                         oldest[0] if oldest else None)
