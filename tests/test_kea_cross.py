"""The daily cross-session extraction on both backends: two servers waking at once run the day's job once; a
rule repeated across a person's new sessions becomes knowledge tagged cross; a person with fewer than two new
sessions is skipped (and counted next day); the log lines carry the seed's fields."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from loop_world import Clock, member, runtime_on, words_only_vault
from notewell.access.principal import Principal
from notewell.records.brain import KnowledgeFilter
from notewell.runtime import Runtime
from notewell.services.brain_learnings import Learning
from notewell.services.kea_cross import CROSS_CONFIDENCE, CROSS_TRIGGER, repeated


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return words_only_vault(tmp_path)


@pytest.fixture
def servers(vault: Path, store_url: str) -> Iterator[tuple[Runtime, Runtime]]:
    with runtime_on(vault, store_url) as first, runtime_on(vault, store_url) as second:
        yield first, second


def close(rt: Runtime, p: Principal, prompt: str, correction: str) -> None:
    session = rt.brain.start_session(p, prompt=prompt, project_name="tooling").session.id
    rt.brain.log_event(p, session, "user_correction", {"text": correction})
    rt.brain.report_outcome(p, session, success=True)


def test_two_servers_run_the_daily_job_once_and_repeated_rules_become_knowledge(
        servers: tuple[Runtime, Runtime], caplog: pytest.LogCaptureFixture) -> None:
    one, two = servers
    dana, erin = member(one, "dana"), member(one, "erin")
    close(one, dana, "lint the api package", "use ruff, not flake8")
    close(one, dana, "lint the worker package", "Use ruff instead of flake8.")
    close(one, dana, "tidy the cli", "always sort the imports")
    close(one, erin, "lint the docs", "use ruff, not flake8")
    clock = Clock(datetime.now(UTC))  # sessions close at the real time; the runners' day is this one
    runners = [one.job_runner(clock=clock), two.job_runner(clock=clock)]
    assert [r.on_idle() for r in runners if r.on_idle is not None] == [True, False]  # one job for the day
    with caplog.at_level(logging.INFO, logger="notewell.kea"):
        for runner in runners:
            runner.run(drain=True)  # one after the other: each is elected in turn; the second finds it done
    crosses = one.store.jobs.listing(None, 10, kind="kea.cross_extract")
    assert [(j.state, j.result, j.attempts) for j in crosses] == [("done", "ok", 1)]
    project = one.brain.projects(dana)[0].id
    cross = [k for k in one.store.brain.list_knowledge(KnowledgeFilter([project], limit=100)) if "cross" in k.tags]
    assert [(k.trigger, k.rule, k.confidence, k.rationale) for k in cross] == [
        (CROSS_TRIGGER, "use ruff, not flake8", CROSS_CONFIDENCE, "seen in 2 of your sessions")]
    lines = [m for m in caplog.messages if m.startswith("op=kea.cross")]
    assert lines[0].startswith("op=kea.cross.skip reason=fewer_than_2_new_sessions newSessionCount=1 "
                               f"user={erin.user_id}")
    assert lines[1].startswith("op=kea.cross_extract outcome=ok users=2 totalPersisted=1 durMs=")
    assert lines[2].startswith("op=kea.cross.daily_done users=2 processed=1 skipped=1 totalPersisted=1 "
                               "model=deterministic")
    assert len(lines) == 3

    # the next day: dana's sessions were read; erin's one waits for a second
    clock.now += timedelta(days=1)
    close(one, erin, "lint the site", "use ruff, not flake8")
    caplog.clear()
    runner = one.job_runner(clock=clock)
    with caplog.at_level(logging.INFO, logger="notewell.kea"):
        runner.run(drain=True)
    daily = [m for m in caplog.messages if m.startswith("op=kea.cross.daily_done")]
    assert daily == [f"op=kea.cross.daily_done users=1 processed=1 skipped=0 totalPersisted=1 model=deterministic "
                     f"job={one.store.jobs.listing(None, 1, kind='kea.cross_extract')[0].id}"]


def test_only_rules_repeated_in_one_project_count() -> None:
    rule = Learning("working on a", "use ruff, not flake8", "", "reflex", "decision", 0.6)
    found = [("s1", "~d/a", rule), ("s1", "~d/a", rule), ("s2", "~d/b", rule), ("s3", "~d/a", rule)]
    assert [(project, r.rule) for project, r in repeated(found)] == [("~d/a", "use ruff, not flake8")]
    assert repeated(found[:3]) == []  # twice in one session, once in another project
