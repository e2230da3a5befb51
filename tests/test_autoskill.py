"""Autoskill on both backends: a close that used a recipe queues one autoskill.run job; it proposes steps from
a successful session, the merge of a recipe with the same trigger and the demotion of one that keeps failing;
nothing changes until the owner accepts through `notewell brain accept` (a new version supersedes the recipe,
audited) or rejects; a proposal is made once; a gone session completes as skipped_session_gone."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import run_cli
from loop_world import member
from notewell.access.principal import Principal
from notewell.records.brain import ProposalInput
from notewell.records.jobs import NewJob
from notewell.runtime import Runtime, open_runtime
from notewell.services.autoskill import STEP_CHARS_MAX, STEPS_MAX, new_steps
from notewell.store import open_store
from notewell.timestamps import iso

TRIGGER = "when deploying the api"


def recipe(rt: Runtime, p: Principal, rule: str, trigger: str = TRIGGER) -> str:
    return rt.brain.teach(p, rule=rule, trigger=trigger, kind="recipe").item.ref


def session(rt: Runtime, p: Principal, used: str, success: bool, commands: tuple[str, ...] = ()) -> str:
    sid = rt.brain.start_session(p, prompt="ship the release").session.id
    for command in commands:
        rt.brain.log_event(p, sid, "command_run", {"command": command})
    rt.brain.report_outcome(p, sid, success=success, knowledge_used=[used])
    return sid


def autoskill_lines(rt: Runtime, caplog: pytest.LogCaptureFixture) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="notewell.autoskill"):
        rt.job_runner().run(drain=True)
    return [m for m in caplog.messages if m.startswith("op=autoskill.run")]


def cli(*args: str) -> tuple[int, str]:
    result = run_cli(*args)
    return result.exit_code, result.stdout + result.stderr


def cli_json(*args: str) -> Any:
    code, out = cli(*args, "--json")
    assert code == 0, out
    return json.loads(out)


def test_steps_and_a_merge_are_proposed_and_applied_only_when_accepted(
        rt: Runtime, vault: Path, store_url: str, caplog: pytest.LogCaptureFixture) -> None:
    dana = member(rt, "dana")
    member(rt, "erin")
    build = recipe(rt, dana, "build the image, then push it")
    smoke = recipe(rt, dana, "run the smoke tests")
    recipe(rt, dana, "tag the release", trigger="when releasing")  # another trigger: never merged
    sid = session(rt, dana, build, True, ("make migrate", "build the image", "make migrate"))
    lines = autoskill_lines(rt, caplog)
    assert len(lines) == 1 and lines[0].startswith("op=autoskill.run outcome=ok proposals=2 ")
    [job] = rt.store.jobs.listing(None, 10, kind="autoskill.run")  # one, queued with the close
    assert job.payload == {"sessionId": sid, "used": [{"ref": build, "successes": 1, "failures": 0}]}
    session(rt, dana, smoke, True)  # the other of the pair used: their merge is proposed once
    assert autoskill_lines(rt, caplog)[0].startswith("op=autoskill.run outcome=ok proposals=0 ")
    assert rt.store.brain.knowledge([build])[build].rule == "build the image, then push it"  # nothing changed yet
    rt.close()
    where = ["--vault", str(vault), "--db", store_url]

    listed = cli_json("brain", "proposals", "--as", "dana@example.test", *where)["proposals"]
    by_kind = {p["kind"]: p for p in listed}
    assert sorted(by_kind) == ["add_steps", "merge"]
    assert by_kind["add_steps"]["newRule"] == "build the image, then push it. Then: make migrate."
    assert by_kind["merge"]["mergedId"] == smoke and by_kind["merge"]["knowledgeId"] == build
    assert cli_json("brain", "proposals", "--as", "erin@example.test", *where)["proposals"] == []
    code, out = cli("brain", "accept", str(by_kind["add_steps"]["id"]), "--as", "erin@example.test", *where)
    assert code != 0 and "of yours" in out
    code, out = cli("brain", "proposals", "--state", "maybe", "--as", "dana@example.test", *where)
    assert code != 0 and "--state: unknown state" in out and "or all for every state" in out

    accepted = cli_json("brain", "accept", str(by_kind["add_steps"]["id"]), "--as", "dana@example.test", *where)
    assert accepted["state"] == "accepted" and accepted["resultId"]
    code, out = cli("brain", "accept", str(by_kind["add_steps"]["id"]), "--as", "dana@example.test", *where)
    assert code != 0 and "accepted already" in out and "ID: proposal" in out
    code, out = cli("brain", "accept", str(by_kind["merge"]["id"]), "--as", "dana@example.test", *where)
    assert code != 0 and "changed since" in out  # it was made for the version just superseded
    rejected = cli_json("brain", "reject", str(by_kind["merge"]["id"]), "--as", "dana@example.test", *where)
    assert rejected["state"] == "rejected" and rejected["resultId"] is None

    again = open_runtime(str(vault), store_url)
    try:
        known = again.store.brain.knowledge([build, smoke, accepted["resultId"]])
        new = known[accepted["resultId"]]
        assert not known[build].live and known[smoke].live
        assert (new.kind, new.trigger, new.rule, new.live) == (
            "recipe", TRIGGER, "build the image, then push it. Then: make migrate.", True)
        assert "autoskill" in new.tags
        audits = [(e.action, e.target, e.detail.get("kind")) for e in again.store.audit.list_since()
                  if e.action.startswith("brain.autoskill.")]
        assert audits == [("brain.autoskill.accept", build, "add_steps"), ("brain.autoskill.reject", build, "merge")]
    finally:
        again.close()


def test_a_recipe_that_keeps_failing_is_proposed_for_demotion(rt: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    dana = member(rt, "dana")
    flaky = recipe(rt, dana, "restart the queue workers by hand", trigger="when the queue stalls")
    counts = []
    for _ in range(3):
        session(rt, dana, flaky, False)
        counts += autoskill_lines(rt, caplog)
    assert [m.split()[2] for m in counts] == ["proposals=0", "proposals=0", "proposals=1"]
    [proposal] = rt.brain.proposals(dana)
    assert (proposal.proposal.kind, proposal.proposal.new_kind) == ("demote", "heuristic")
    assert rt.store.brain.knowledge([flaky])[flaky].kind == "recipe"  # not yet
    decided = rt.brain.decide_proposal(dana, proposal.id, True)
    assert decided.result_ref is not None
    new = rt.store.brain.knowledge([decided.result_ref])[decided.result_ref]
    assert (new.kind, new.rule, new.confidence) == ("heuristic", "restart the queue workers by hand",
                                                    rt.store.brain.knowledge([flaky])[flaky].confidence)
    assert not rt.store.brain.knowledge([flaky])[flaky].live
    assert rt.brain.proposals(dana) == [] and len(rt.brain.proposals(dana, None)) == 1


def test_a_session_gone_completes_as_skipped(rt: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    job_id = rt.store.jobs.enqueue(NewJob("autoskill.run", {"sessionId": "ses_deleted0000000000", "used": []}),
                                   iso(datetime.now(UTC)))
    assert autoskill_lines(rt, caplog) == [f"op=autoskill.run outcome=skipped_session_gone proposals=0 job={job_id}"]
    job = rt.store.jobs.get(job_id)
    assert job is not None and (job.state, job.result) == ("done", "skipped_session_gone")


def test_new_steps_are_the_commands_the_recipe_lacks_in_order_each_once() -> None:
    assert new_steps("Build the image", ["make  migrate", "build the image", "make migrate", " "]) == ["make migrate"]
    assert new_steps("", [f"step {i}" for i in range(9)]) == [f"step {i}" for i in range(5)]


def test_a_brain_from_before_the_proposals_upgrades(store_url: str) -> None:
    """A store whose brain steps stop where the released ones did (1 on SQLite, 1 and 2 on PostgreSQL) gets
    step 3, the proposals table (and the steps after it), and both backends then hold steps 1 to 5."""
    released = 2 if store_url.startswith("postgresql") else 1
    store = open_store(store_url)
    with store.brain.dialect.transaction() as conn:  # type: ignore[attr-defined]
        conn.execute("DROP TABLE brain_skill_proposals")
        conn.execute("DROP TABLE brain_kea_funnel")  # step 4's
        conn.execute("DELETE FROM schema_migrations WHERE component = 'brain' AND version > ?", (released,))
    store.close()
    store = open_store(store_url)
    try:
        proposal = ProposalInput("k", "demote", "mem_x", None, "u_x", "~x/p", "ses_x", "heuristic", "r", "why",
                                 "2026-03-01T00:00:00.000000Z")
        assert store.brain.add_proposal(proposal) and not store.brain.add_proposal(proposal)
        with store.brain.dialect.reading() as conn:  # type: ignore[attr-defined]
            versions = [v for (v,) in conn.execute(
                "SELECT version FROM schema_migrations WHERE component = 'brain' ORDER BY version").fetchall()]
        assert versions == [1, 2, 3, 4, 5]
    finally:
        store.close()


@given(st.text(max_size=80), st.lists(st.text(max_size=60), max_size=12))
def test_new_steps_add_only_what_the_recipe_lacks(recipe: str, commands: list[str]) -> None:
    steps = new_steps(recipe, commands)
    assert len(steps) <= STEPS_MAX and len(set(steps)) == len(steps)
    normalised = [" ".join(c.split())[:STEP_CHARS_MAX] for c in commands]
    for step in steps:
        assert step and step in normalised and step.casefold() not in recipe.casefold()
    assert steps == [s for s in dict.fromkeys(normalised) if s in steps]  # in the order they were first run
    missing = [s for s in dict.fromkeys(normalised) if s and s.casefold() not in recipe.casefold()]
    assert len(steps) == min(len(missing), STEPS_MAX)  # none left out while there is room


def test_accepting_an_edit_of_a_private_recipe_keeps_it_private(rt: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    """A recipe the brain mined from dana's sessions is hers alone; accepting autoskill's edit wrote its new
    version, with her session's commands, for every reader of the project."""
    dana = member(rt, "dana")
    bp = rt.brain.resolve(dana, None)
    mined, _ = rt.brain._write(dana, bp, kind="recipe", trigger=TRIGGER, rule="build the image", rationale="",
                               source="discovery", confidence=0.7, tags=["mined"], private=True)
    session(rt, dana, mined.ref, True, ("make secret-deploy",))
    autoskill_lines(rt, caplog)
    [proposal] = rt.brain.proposals(dana)
    decided = rt.brain.decide_proposal(dana, proposal.id, True)
    new = rt.store.brain.knowledge([decided.result_ref or ""])[decided.result_ref or ""]
    assert new.rule == "build the image. Then: make secret-deploy." and new.private_to == dana.user_id


def test_a_private_recipe_and_a_teams_are_never_merged_and_the_brains_tags_are_its_own(rt: Runtime) -> None:
    """Autoskill proposed merging a recipe the brain mined (private) with one the person taught the team (same
    trigger); accepting it hid the team's. And a person could teach with the tags the brain's own learning bears
    (mined, cross, session:…), which mark what an upgrade makes private."""
    from notewell.services.brain_errors import BrainValidation

    dana = member(rt, "dana")
    bp = rt.brain.resolve(dana, None)
    public = recipe(rt, dana, "build the image, then push it")
    mined, _ = rt.brain._write(dana, bp, kind="recipe", trigger=TRIGGER, rule="run the smoke tests", rationale="",
                               source="discovery", confidence=0.7, tags=["mined"], private=True)
    session(rt, dana, public, True)
    rt.job_runner().run(drain=True)
    assert [q.proposal.kind for q in rt.brain.proposals(dana)] == []  # no merge across the two audiences
    for tag in ("mined", "Cross", "session:ses_1"):
        with pytest.raises(BrainValidation, match="a tag the brain writes itself"):
            rt.brain.teach(dana, rule="anything", trigger=TRIGGER, kind="recipe", tags=[tag])
    assert rt.store.brain.knowledge([mined.ref])[mined.ref].live
