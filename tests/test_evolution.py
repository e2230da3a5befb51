"""Nightly evolution on both backends, with the runners' clock set by the test: idle rules decay by the
documented factor, the idle ones below the floor retire (audited, out of every search), used rules and action
items are untouched and uncounted, a day runs once however many servers wake, and a person undoes a retirement
through `notewell brain restore` (back in search), which refuses what evolution did not retire."""

from __future__ import annotations

import json
import logging
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import run_cli
from loop_world import Clock, member
from notewell.access.principal import Principal
from notewell.records.brain import EVOLUTION_AUTHOR
from notewell.runtime import Runtime, open_runtime
from notewell.services.brain_evolution import DECAY_FACTOR, FLOOR, IDLE_DAYS, RESTORE_CONFIDENCE
from notewell.timestamps import iso

T0 = datetime.now(UTC)  # what is taught is created at the real time; the runners' days are after it


def teach(rt: Runtime, p: Principal, rule: str, kind: str = "heuristic") -> str:
    return rt.brain.teach(p, rule=rule, kind=kind).item.ref


def night(rt: Runtime, clock: Clock) -> None:
    """The day's jobs queued (as the runner does when idle) and run."""
    runner = rt.job_runner(clock=clock)
    runner.run(drain=True)


def found(rt: Runtime, p: Principal, prompt: str) -> list[str]:
    return [s.item.ref for s in rt.brain.retrieve(p, prompt).items]


def test_idle_rules_decay_and_the_weak_retire_while_used_rules_and_action_items_stay(
        rt: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    dana = member(rt, "dana")
    clock = Clock(T0 + timedelta(days=IDLE_DAYS + 1))
    old = teach(rt, dana, "pin the compiler version in the lockfile")
    weak = teach(rt, dana, "rebuild the gripper firmware after every merge")
    fresh = teach(rt, dana, "run the fuzzers before tagging")
    item = teach(rt, dana, "Ann: order the torque sensors", kind="action_item")
    rt.store.brain.record_use(weak, False, 0.205, iso(T0))  # used (and failed) long ago: just above the floor
    rt.store.brain.record_use(fresh, True, 0.9, iso(clock.now - timedelta(days=1)))  # used yesterday
    assert found(rt, dana, "gripper firmware") == [weak]

    with caplog.at_level(logging.INFO, logger="notewell.evolution"):
        night(rt, clock)
    lines = [m for m in caplog.messages if m.startswith("op=evolution.run")]
    assert len(lines) == 1
    assert lines[0].startswith(f"op=evolution.run outcome=ok live=3 decayed=2 retired=1 factor={DECAY_FACTOR} "
                               f"floor={FLOOR} idleDays={IDLE_DAYS} durMs=")
    known = rt.store.brain.knowledge([old, weak, fresh, item])
    assert known[old].confidence == pytest.approx(DECAY_FACTOR) and known[old].live
    assert known[fresh].confidence == pytest.approx(0.9) and known[fresh].live
    assert known[item].confidence == 1.0 and known[item].live  # action items: never decayed nor retired
    assert not known[weak].live and known[weak].confidence == pytest.approx(0.205 * DECAY_FACTOR)
    memory = rt.store.memories.get(weak)
    assert memory is not None and memory.deleted_by == EVOLUTION_AUTHOR and "floor" in (memory.delete_reason or "")
    assert found(rt, dana, "gripper firmware") == []
    audits = [e for e in rt.store.audit.list_since() if e.action == "brain.evolution.retire"]
    assert [(e.target, e.user_id, e.at, e.detail["floor"]) for e in audits] == [
        (weak, EVOLUTION_AUTHOR, iso(clock.now), FLOOR)]
    assert audits[0].detail["confidence"] == pytest.approx(0.205 * DECAY_FACTOR)


def test_a_day_runs_once_however_many_servers_wake_and_the_next_day_decays_again(
        vault: Path, store_url: str) -> None:
    one, two = open_runtime(str(vault), store_url), open_runtime(str(vault), store_url)
    try:
        dana = member(one, "dana")
        rule = teach(one, dana, "pin the compiler version in the lockfile")
        clock = Clock(T0 + timedelta(days=IDLE_DAYS + 1))
        runners = [one.job_runner(clock=clock), two.job_runner(clock=clock)]
        assert [r.on_idle() for r in runners if r.on_idle is not None] == [True, False]
        for runner in runners:
            runner.run(drain=True)  # each elected in turn; the second finds the day done
        night(one, clock)  # a restarted server the same day: its schedule's keys are taken
        assert [(j.state, j.result) for j in one.store.jobs.listing(None, 10, kind="evolution.run")] == [
            ("done", "ok")]
        assert one.store.brain.knowledge([rule])[rule].confidence == pytest.approx(DECAY_FACTOR)
        clock.now += timedelta(days=1)
        night(two, clock)
        assert one.store.brain.knowledge([rule])[rule].confidence == pytest.approx(DECAY_FACTOR ** 2)
        assert len(one.store.jobs.listing(None, 10, kind="evolution.run")) == 2
    finally:
        one.close()
        two.close()


def cli(*args: str) -> tuple[int, str]:
    result = run_cli(*args)
    return result.exit_code, result.stdout + result.stderr


def test_a_person_restores_what_evolution_retired_and_nothing_else(vault: Path, store_url: str) -> None:
    rt = open_runtime(str(vault), store_url)
    dana = member(rt, "dana")
    member(rt, "erin")
    weak = teach(rt, dana, "rebuild the gripper firmware after every merge")
    mine = teach(rt, dana, "never deploy on fridays")
    rt.store.brain.record_use(weak, False, 0.1, iso(T0))
    rt.brain.retire(dana, mine, "wrong")
    night(rt, Clock(T0 + timedelta(days=IDLE_DAYS + 1)))
    rt.close()
    where = ["--vault", str(vault), "--db", store_url]

    code, out = cli("brain", "retired", "--as", "dana@example.test", "--json", *where)
    assert code == 0, out
    assert [(k["id"], k["retiredAt"] is not None) for k in json.loads(out)["knowledge"]] == [(weak, True)]
    code, out = cli("brain", "retired", "--as", "erin@example.test", "--json", *where)
    assert code == 0 and json.loads(out)["knowledge"] == []
    code, out = cli("brain", "restore", weak, "--as", "erin@example.test", *where)
    assert code != 0 and f"no knowledge {weak} you can see" in out
    code, out = cli("brain", "restore", mine, "--as", "dana@example.test", *where)
    assert code != 0 and "was not retired by evolution" in out  # a person's retirement is theirs to keep

    code, out = cli("brain", "restore", weak, "--as", "dana@example.test", "--json", *where)
    assert code == 0, out
    restored = json.loads(out)
    assert restored["retiredAt"] is None and restored["confidence"] == RESTORE_CONFIDENCE
    code, out = cli("brain", "restore", weak, "--as", "dana@example.test", *where)
    assert code != 0 and "was not retired by evolution" in out  # once

    rt = open_runtime(str(vault), store_url)
    try:
        assert [s.item.ref for s in rt.brain.retrieve(dana, "gripper firmware").items] == [weak]  # searched again
        memory = rt.store.memories.get(weak)
        assert memory is not None and memory.deleted_at is None
        audits = [(e.action, e.target, e.user_id) for e in rt.store.audit.list_since()
                  if e.action in ("brain.evolution.retire", "brain.restore")]
        assert audits == [("brain.evolution.retire", weak, EVOLUTION_AUTHOR), ("brain.restore", weak, dana.user_id)]
        code, out = cli("brain", "retired", "--as", "dana@example.test", "--json", *where)
        assert code == 0 and json.loads(out)["knowledge"] == []
    finally:
        rt.close()


@pytest.mark.parametrize(("confidence", "nights"), [(1.0, 32), (0.6, 22), (RESTORE_CONFIDENCE, 18)])
def test_the_documented_nights_to_the_floor(confidence: float, nights: int) -> None:
    """docs/brain.md and brain_evolution.py say how many idle nights each confidence lasts."""
    assert math.ceil(math.log(FLOOR / confidence) / math.log(DECAY_FACTOR)) == nights
    assert confidence * DECAY_FACTOR ** (nights - 1) >= FLOOR > confidence * DECAY_FACTOR ** nights
