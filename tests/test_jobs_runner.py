"""The job runner and its commands, on both backends: a job whose session is gone completes without a retry, a
failing job waits its doubling delay and ends failed for `notewell jobs retry`, one runner leads per store, and
kill -9 of `notewell worker` in a queue of 500 jobs loses and repeats none."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import run_cli, run_module
from loop_world import Clock
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.records.brain import KnowledgeFilter
from notewell.records.jobs import JobRecord, NewJob
from notewell.runtime import Runtime
from notewell.services.jobs import LEASE_SECONDS, MAX_ATTEMPTS, RETRY_BASE_SECONDS, JobKind, JobRunner, Step
from notewell.store.leadership import open_leadership
from notewell.timestamps import iso, parse_iso


def person(rt: Runtime) -> Principal:
    user = rt.administration.add_user(LOCAL_OWNER, "dana@example.test", "member", handle="dana")
    return user_principal(user)


def close_corrected(rt: Runtime, p: Principal, n: int) -> str:
    """A session closed without learnings whose one correction the miner turns into one rule."""
    session = rt.brain.start_session(p, prompt=f"deploy service {n}", project_name="ops").session.id
    rt.brain.log_event(p, session, "user_correction", {"text": f"use tool{n}x, not legacy{n}y"})
    assert rt.brain.report_outcome(p, session, success=True).queued
    return session


def test_a_job_whose_session_is_gone_completes_as_skipped(rt: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    job_id = rt.store.jobs.enqueue(NewJob("kea.extract", {"sessionId": "ses_deleted0000000000", "learnings": []}),
                                   iso(datetime.now(UTC)))
    with caplog.at_level(logging.INFO, logger="notewell.kea"):
        rt.job_runner().run(drain=True)
    job = rt.store.jobs.get(job_id)
    assert job is not None and (job.state, job.result, job.attempts) == ("done", "skipped_session_gone", 1)
    assert f"op=kea.extract outcome=skipped_session_gone items=0 job={job_id}" in caplog.messages


def test_a_failing_job_waits_a_doubling_delay_then_fails_for_good_and_is_retried(rt: Runtime, vault: Path,
                                                                                 store_url: str) -> None:
    clock = Clock(datetime(2026, 3, 1, tzinfo=UTC))
    job_id = rt.store.jobs.enqueue(NewJob("kea.unknown", {}), iso(clock.now))
    runner = rt.job_runner(clock=clock)
    delays = []
    for _ in range(MAX_ATTEMPTS):
        assert runner._lead() and runner.run_due() == 1
        job = rt.store.jobs.get(job_id)
        assert job is not None and "no runner knows jobs of kind 'kea.unknown'" in (job.last_error or "")
        if job.state == "pending":
            delays.append((parse_iso(job.next_at) - clock.now).total_seconds())
            assert runner.run_due() == 0  # not due before its delay
            clock.now = parse_iso(job.next_at)
    runner.leadership.release()
    assert delays == [RETRY_BASE_SECONDS * 2 ** n for n in range(MAX_ATTEMPTS - 1)]
    args = ("--vault", str(vault), "--db", store_url)
    listed = run_cli("jobs", "--state", "failed", "--json", *args)
    assert listed.exit_code == 0, listed.stderr
    answer = json.loads(listed.stdout)
    assert [(j["id"], j["kind"], j["attempts"]) for j in answer["jobs"]] == [(job_id, "kea.unknown", MAX_ATTEMPTS)]
    assert answer["counts"] == {"pending": 0, "running": 0, "done": 0, "failed": 1}
    retried = run_cli("jobs", "retry", str(job_id), *args)
    assert retried.exit_code == 0 and f"job {job_id} (kea.unknown) is due again" in retried.stdout
    again = run_cli("jobs", "retry", str(job_id), *args)
    assert again.exit_code == 1 and f"job {job_id} is pending, not failed" in again.stderr
    missing = run_cli("jobs", "retry", "999999", *args)
    assert missing.exit_code == 1 and "no job 999999" in missing.stderr
    wrong = run_cli("jobs", "--state", "stuck", *args)
    assert wrong.exit_code == 1 and "--state" in wrong.stderr and "pending, running, done, failed" in wrong.stderr


def test_one_runner_leads_per_store(rt: Runtime) -> None:
    first, second = rt.job_runner(), rt.job_runner()
    try:
        assert first._lead() and not second._lead()
        first.leadership.release()
        assert second._lead()
    finally:
        first.leadership.release()
        second.leadership.release()


def test_a_drain_while_another_process_runs_the_jobs_says_so_at_once(rt: Runtime, vault: Path, store_url: str,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    """`worker --drain` beside a server holding the job lease waited for ever, saying nothing (a cron drain
    before an export never returned); a runner that is not elected never logged that it follows."""
    holder = rt.job_runner()
    assert holder._lead()
    try:
        with caplog.at_level(logging.INFO, logger="notewell.jobs"):
            assert rt.job_runner().run(drain=True) is False
        assert any("op=jobs.leader state=following" in m for m in caplog.messages), caplog.messages
        drained = run_cli("worker", "--drain", "--vault", str(vault), "--db", store_url)
        assert drained.exit_code == 1 and "another process holds the store's job lease" in drained.stderr
    finally:
        holder.leadership.release()
    assert run_cli("worker", "--drain", "--vault", str(vault), "--db", store_url).exit_code == 0


def test_a_kill_9_of_the_worker_with_500_queued_jobs_loses_and_repeats_none(rt: Runtime, vault: Path,
                                                                           store_url: str) -> None:
    p = person(rt)
    sessions = [close_corrected(rt, p, n) for n in range(500)]
    assert rt.store.jobs.counts().pending == 500
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    worker = subprocess.Popen([sys.executable, "-m", "notewell", "worker", "--vault", str(vault), "--db", store_url],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        for _ in range(2400):  # until some are done, at most 120 s
            if rt.store.jobs.counts().done >= 50:
                break
            time.sleep(0.05)
        worker.send_signal(signal.SIGKILL)
    finally:
        worker.wait(timeout=30)
    counts = rt.store.jobs.counts()
    assert 50 <= counts.done < 500 and counts.done + counts.pending + counts.running == 500  # no cross job yet:
    # the worker queues the day's cross extraction only once nothing is due
    again = run_module("worker", "--drain", "--vault", str(vault), "--db", store_url)
    assert again.returncode == 0, again.stderr
    assert "worker stopped: 0 pending, 0 failed" in again.stderr
    counts = rt.store.jobs.counts()
    assert (counts.pending, counts.running, counts.failed) == (0, 0, 0)
    assert len(rt.store.jobs.listing("done", 1000, kind="kea.extract")) == 500
    project = rt.brain.projects(p)[0].id
    mined = rt.store.brain.list_knowledge(KnowledgeFilter([project], limit=1000))
    by_session = sorted(t for k in mined for t in k.tags if t.startswith("session:"))
    assert by_session == sorted(f"session:{s}" for s in sessions)  # each session's rule once: none lost, none twice
    teach = [e for e in rt.administration.audit_log(LOCAL_OWNER) if e.action == "brain.teach"]
    assert len(teach) == 500


def test_the_worker_stops_cleanly_on_sigterm(vault: Path, store_url: str) -> None:
    worker = subprocess.Popen([sys.executable, "-m", "notewell", "worker", "--vault", str(vault), "--db", store_url],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert worker.stderr is not None
    lines = []
    for got in worker.stderr:  # wait until it leads: it then runs the queue
        lines.append(got)
        if "op=jobs.leader state=leading" in got:
            break
    worker.send_signal(signal.SIGTERM)
    _, rest = worker.communicate(timeout=30)
    assert worker.returncode == 0, "".join(lines) + rest
    assert re.search(r"worker stopped: [012] pending, 0 failed", rest), rest  # the day's cross, evolution jobs


def test_time_is_the_runners_clock(rt: Runtime) -> None:
    """A job queued due later is not run before the runner's clock reaches it."""
    clock = Clock(datetime(2026, 3, 1, tzinfo=UTC))
    rt.store.jobs.schedule("kea.unknown", "once", {}, iso(clock.now), due=iso(clock.now + timedelta(hours=1)))
    runner = rt.job_runner(clock=clock)
    try:
        assert runner._lead() and runner.run_due() == 0
        clock.now += timedelta(hours=1)
        assert runner.run_due() == 1
    finally:
        runner.leadership.release()


def test_each_job_is_leased_from_when_it_starts_not_from_a_batch_claim(rt: Runtime) -> None:
    """Slow jobs one after another (a model call may take minutes): a job claimed in a batch with the first had
    its lease run out before it started, and doctor took the working runner for one that stopped mid-job."""
    clock = Clock(datetime(2026, 3, 1, tzinfo=UTC))
    ids = [rt.store.jobs.enqueue(NewJob("test.slow", {"n": n}), iso(clock.now)) for n in range(3)]
    seen: list[tuple[datetime, datetime]] = []  # (when the job started, its lease's end then)

    def slow(job: JobRecord) -> Step:
        held = rt.store.jobs.get(job.id)
        assert held is not None and held.lease_until is not None
        seen.append((clock.now, parse_iso(held.lease_until)))
        clock.now += timedelta(seconds=LEASE_SECONDS * 2 / 3)  # a long call
        return Step(write=lambda: "done")

    runner = JobRunner(rt.store, {"test.slow": JobKind(slow)}, open_leadership(rt.settings.db, "jobs"),
                       rt.jobs.wake, clock)
    assert runner.run(drain=True)
    assert [rt.store.jobs.get(i).state for i in ids] == ["done"] * 3  # type: ignore[union-attr]
    assert all(lease_end >= started + timedelta(seconds=LEASE_SECONDS) for started, lease_end in seen), seen
