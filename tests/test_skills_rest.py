"""Autoskill's proposals and evolution's retired knowledge over REST, on SQLite and PostgreSQL: a person lists
their proposals, accepts one, is refused one gone stale, rejects it, lists and restores what evolution retired;
another person sees none of it and deciding theirs is 404 (as a missing one); a token without the sessions scope
is 403 naming it; bad input is 400/422 naming the field."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from brain_world import BrainWorld, brain_world_on, serve_brain
from notewell.records.brain import EVOLUTION_AUTHOR
from notewell.timestamps import iso
from test_brain_health import rest
from test_skills_web import T0, person, proposed_and_retired


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrainWorld]:
    yield from brain_world_on(request, tmp_path_factory.mktemp("skills_rest"))


@pytest.fixture(scope="module")
def base(world: BrainWorld) -> Iterator[str]:
    with serve_brain(world) as server:
        yield server.url.removesuffix("/mcp")


@pytest.fixture(scope="module")
def made(world: BrainWorld) -> dict[str, Any]:
    return proposed_and_retired(world)


def test_a_person_lists_decides_and_restores_over_rest(base: str, world: BrainWorld, made: dict[str, Any]) -> None:
    listed = rest(base, world, "alice", "GET", "/brain/proposals")
    assert listed.status_code == 200, listed.text
    items = listed.json()["items"]
    assert sorted(q["proposal"]["kind"] for q in items) == ["add_steps", "merge"]
    assert {q["state"] for q in items} == {"open"} and listed.json()["next"] is None
    steps = next(q for q in items if q["id"] == made["proposals"]["add_steps"])
    assert steps["proposal"]["newRule"] == "build the image. Then: make flash."
    first = rest(base, world, "alice", "GET", "/brain/proposals", params={"limit": 1})
    assert len(first.json()["items"]) == 1 and first.json()["next"].endswith("offset=1")

    accepted = rest(base, world, "alice", "POST", f"/brain/proposals/{made['proposals']['add_steps']}/accept")
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["state"] == "accepted" and accepted.json()["resultRef"]
    stale = rest(base, world, "alice", "POST", f"/brain/proposals/{made['proposals']['merge']}/accept")
    assert stale.status_code == 409 and "changed since" in stale.json()["detail"]
    rejected = rest(base, world, "alice", "POST", f"/brain/proposals/{made['proposals']['merge']}/reject")
    assert (rejected.status_code, rejected.json()["state"]) == (200, "rejected")
    again = rest(base, world, "alice", "POST", f"/brain/proposals/{made['proposals']['merge']}/reject")
    assert again.status_code == 400 and "already" in again.json()["detail"]
    assert again.json()["field"] == "proposalId"  # the request's name for it (it said "ID", the CLI's)
    assert rest(base, world, "alice", "GET", "/brain/proposals").json()["items"] == []
    decided = rest(base, world, "alice", "GET", "/brain/proposals", params={"state": "all"}).json()["items"]
    assert sorted(q["state"] for q in decided) == ["accepted", "rejected"]

    retired = rest(base, world, "alice", "GET", "/brain/retired")
    assert [k["ref"] for k in retired.json()["items"]] == [made["faded"]], retired.text
    restored = rest(base, world, "alice", "POST", f"/brain/knowledge/{made['faded']}/restore")
    assert restored.status_code == 200, restored.text
    assert restored.json()["ref"] == made["faded"] and restored.json()["confidence"] >= 0.5
    assert rest(base, world, "alice", "GET", "/brain/retired").json()["items"] == []
    twice = rest(base, world, "alice", "POST", f"/brain/knowledge/{made['faded']}/restore")
    assert twice.status_code == 400 and twice.json()["field"] == "knowledgeId"
    known = world.runtime.store.brain.knowledge([made["build"], made["smoke"], made["faded"]])
    assert not known[made["build"]].live and known[made["smoke"]].live and known[made["faded"]].live


def test_another_persons_proposals_and_knowledge_are_404_and_a_scope_is_named(
        base: str, world: BrainWorld, made: dict[str, Any]) -> None:
    assert rest(base, world, "bob", "GET", "/brain/proposals", params={"state": "all"}).json()["items"] == []
    for decision in ("accept", "reject"):
        theirs = rest(base, world, "bob", "POST", f"/brain/proposals/{made['proposals']['merge']}/{decision}")
        missing = rest(base, world, "bob", "POST", f"/brain/proposals/999999/{decision}")
        assert (theirs.status_code, missing.status_code) == (404, 404), theirs.text
        assert theirs.headers["content-type"].startswith("application/problem+json")
        assert theirs.json()["detail"] == (f"NOT_FOUND: no proposal {made['proposals']['merge']} of yours; see GET "
                                           "/api/v1/brain/proposals"), theirs.text  # a REST caller's way out
    hidden = rest(base, world, "carol", "POST", f"/brain/knowledge/{made['faded']}/restore")  # not in shared
    assert hidden.status_code == 404, hidden.text
    assert hidden.json()["detail"].endswith("; GET /api/v1/brain/retired lists what evolution retired"), hidden.text
    assert rest(base, world, "carol", "GET", "/brain/retired").json()["items"] == []
    for method, path in (("GET", "/brain/proposals"), ("POST", f"/brain/proposals/{made['proposals']['merge']}/"
                                                                 "reject"),
                         ("GET", "/brain/retired"), ("POST", f"/brain/knowledge/{made['faded']}/restore")):
        refused = rest(base, world, "alice_memory", method, path)
        assert (refused.status_code, refused.json()["scope"]) == (403, "sessions"), f"{path}: {refused.text}"


def test_bad_input_names_the_field(base: str, world: BrainWorld, made: dict[str, Any]) -> None:
    state = rest(base, world, "alice", "GET", "/brain/proposals", params={"state": "pending"})
    assert state.status_code == 422 and state.json()["field"] == "state"
    word = rest(base, world, "alice", "POST", "/brain/proposals/abc/accept")
    assert word.status_code == 422 and word.json()["field"] == "proposal_id"
    offset = rest(base, world, "alice", "GET", "/brain/retired", params={"offset": 2**53})  # past 2^53 - 1
    assert offset.status_code == 422 and offset.json()["field"] == "offset"


def test_both_lists_page_on_past_the_newest_500(base: str, world: BrainWorld, made: dict[str, Any],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """GET /brain/proposals and /brain/retired read the newest offset + limit + 1 items to cut a page from them, and
    refused an offset past the newest 500 (422): what came after was out of reach. A page is read alone now."""
    rt = world.runtime
    item = rt.brain.teach(person(world, "alice"), rule="Rotate the release signing keys every quarter",
                          project_id="shared").item
    rt.store.brain.retire([item.ref], EVOLUTION_AUTHOR, "idle", iso(T0))  # one retired, whatever ran before
    asked: list[tuple[str, Any]] = []
    for name in ("proposals", "evolution_retired"):
        real = getattr(world.runtime.store.brain, name)
        monkeypatch.setattr(world.runtime.store.brain, name,
                            lambda *args, _name=name, _real=real: asked.append((_name, args[-2:])) or _real(*args))
    for path in ("/brain/proposals", "/brain/retired"):
        every: dict[str, Any] = {"state": "all"} if "proposals" in path else {}
        answer = rest(base, world, "alice", "GET", path, params=every)
        listed = answer.json()["items"]
        assert listed, answer.text
        one = rest(base, world, "alice", "GET", path, params={**every, "limit": 1, "offset": len(listed) - 1})
        assert one.status_code == 200 and one.json()["items"] == listed[-1:] and one.json()["next"] is None
        far = rest(base, world, "alice", "GET", path, params={"offset": 600})
        assert far.status_code == 200 and far.json()["items"] == [] and far.json()["next"] is None, far.text
    assert ("proposals", (2, 1)) in asked and ("evolution_retired", (21, 600)) in asked, asked
