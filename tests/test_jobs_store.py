"""The job queue in the store, on both backends: claimed once under concurrency, done with its writes or not at
all, retried with its delay, failed after its last try, taken over when its runner's lease runs out."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from notewell.records.jobs import NewJob
from notewell.store import Store, open_store
from notewell.store.shared.jobs import LeaseLost

T0, T1, T2, LATER = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z", "2026-01-01T01:00:00Z"


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url)
    yield opened
    opened.close()


def test_a_job_is_claimed_run_and_done_with_its_writes(store: Store) -> None:
    job_id = store.jobs.enqueue(NewJob("kea.extract", {"sessionId": "ses_1"}), T0)
    [job] = store.jobs.claim("runner-a", T1, LATER, 10, 5)
    assert (job.id, job.state, job.attempts, job.payload) == (job_id, "running", 1, {"sessionId": "ses_1"})
    assert store.jobs.claim("runner-b", T1, LATER, 10, 5) == []  # leased: nobody else takes it
    with store.jobs.completing(job.id, "runner-a", T2) as done:
        store.jobs.enqueue(NewJob("follow.up", {}), T2)  # a write of the job's own, in its transaction
        done.result = "skipped_session_gone"
    finished = store.jobs.get(job.id)
    assert finished is not None and (finished.state, finished.result, finished.finished_at) == (
        "done", "skipped_session_gone", T2)
    assert [j.kind for j in store.jobs.listing("pending", 10)] == ["follow.up"]


def test_a_runner_that_lost_its_lease_writes_nothing(store: Store) -> None:
    store.jobs.enqueue(NewJob("kea.extract", {}), T0)
    [job] = store.jobs.claim("runner-a", T1, T2, 10, 5)
    [taken] = store.jobs.claim("runner-b", LATER, "2026-01-01T02:00:00Z", 10, 5)  # a's lease ran out
    assert (taken.id, taken.attempts) == (job.id, 2)
    with pytest.raises(LeaseLost), store.jobs.completing(job.id, "runner-a", LATER):
        store.jobs.enqueue(NewJob("written.by.a", {}), LATER)
    assert store.jobs.listing(None, 10, kind="written.by.a") == []  # rolled back with the lost completion
    with store.jobs.completing(taken.id, "runner-b", LATER):
        pass
    assert store.jobs.counts().done == 1


def test_a_failure_waits_then_fails_for_good_and_a_person_retries_it(store: Store) -> None:
    store.jobs.enqueue(NewJob("kea.extract", {}), T0)
    [job] = store.jobs.claim("r", T1, LATER, 10, 2)
    store.jobs.failed(job.id, "r", "ValueError: bad", T1, next_at=T2)
    assert store.jobs.claim("r", T1, LATER, 10, 2) == []  # not due before its delay
    [again] = store.jobs.claim("r", T2, LATER, 10, 2)
    assert again.attempts == 2 and again.last_error == "ValueError: bad"
    store.jobs.failed(again.id, "r", "ValueError: still bad", T2, next_at=None)
    gone = store.jobs.get(job.id)
    assert gone is not None and gone.state == "failed" and store.jobs.claim("r", LATER, LATER, 10, 2) == []
    assert store.jobs.counts().failed == 1 and store.jobs.retry(job.id, LATER) is not None
    assert store.jobs.retry(job.id, LATER) is None  # pending now, not failed
    [third] = store.jobs.claim("r", LATER, LATER, 10, 2)
    assert third.attempts == 1


def test_a_job_that_kills_its_runner_each_try_ends_failed(store: Store) -> None:
    store.jobs.enqueue(NewJob("kea.extract", {}), T0)
    store.jobs.claim("r1", T0, T1, 10, 2)
    store.jobs.claim("r2", T1, T2, 10, 2)  # r1's lease ran out: the second try
    assert store.jobs.claim("r3", T2, LATER, 10, 2) == []  # r2's ran out too, on the last try
    [job] = store.jobs.listing("failed", 10)
    assert job.attempts == 2 and "stopped during each of its tries" in (job.last_error or "")


def test_an_elected_runner_takes_back_what_a_killed_one_held(store: Store) -> None:
    for n in range(3):
        store.jobs.enqueue(NewJob("kea.extract", {"n": n}), T0)
    store.jobs.claim("runner-killed", T1, LATER, 2, 5)
    closing = store.jobs.enqueue(NewJob("kea.extract", {}, leased_to="close-1", lease_until=LATER), T0)
    assert store.jobs.release_orphans("runner-") == 2  # a close's own lease is not a runner's: it runs out
    taken = store.jobs.claim("runner-elected", T1, LATER, 10, 5)
    assert len(taken) == 3 and closing not in [j.id for j in taken]


def test_a_scheduled_job_is_queued_once_for_its_key(store: Store) -> None:
    assert store.jobs.schedule("kea.cross_extract", "kea.cross_extract:2026-01-01", {}, T0) is True
    assert store.jobs.schedule("kea.cross_extract", "kea.cross_extract:2026-01-01", {}, T1) is False
    assert [j.key for j in store.jobs.listing(None, 10)] == ["kea.cross_extract:2026-01-01"]


def test_runners_claiming_at_once_take_each_job_once(store: Store, store_url: str) -> None:
    ids = {store.jobs.enqueue(NewJob("kea.extract", {"n": n}), T0) for n in range(120)}
    taken: list[int] = []
    lock = threading.Lock()

    def run(owner: str) -> None:
        mine = open_store(store_url)
        try:
            while jobs := mine.jobs.claim(owner, T1, LATER, 3, 5):
                with lock:
                    taken.extend(j.id for j in jobs)
        finally:
            mine.close()

    threads = [threading.Thread(target=run, args=(f"runner-{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == sorted(ids)


def test_a_job_taken_back_after_its_last_try_ends_failed(store: Store) -> None:
    store.jobs.enqueue(NewJob("kea.extract", {}), T0)
    for owner in ("runner-1", "runner-2"):
        store.jobs.claim(owner, T1, LATER, 10, 2)
        store.jobs.release_orphans("runner-")  # each runner killed mid-try, the next one elected
    assert store.jobs.claim("r3", T1, LATER, 10, 2) == []
    [job] = store.jobs.listing("failed", 10)
    assert job.attempts == 2
