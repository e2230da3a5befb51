"""The web page /brain/skills on SQLite and PostgreSQL: a person sees autoskill's proposals for their recipes
and what nightly evolution retired, accepts or rejects a proposal and restores a rule with a click (a form
with the page's CSRF token); another person sees none of it and may decide none of it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from html import unescape
from typing import Any

import httpx
import pytest

from brain_world import BrainWorld, brain_world_on, serve_brain
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.services.brain_evolution import IDLE_DAYS
from notewell.timestamps import iso
from test_web_paging import RULES

T0 = datetime.now(UTC)


class Clock:
    def __call__(self) -> datetime:
        return T0 + timedelta(days=IDLE_DAYS + 1)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrainWorld]:
    yield from brain_world_on(request, tmp_path_factory.mktemp("skills"))


@pytest.fixture(scope="module")
def base(world: BrainWorld) -> Iterator[str]:
    with serve_brain(world) as server:
        yield server.url.removesuffix("/mcp")


def person(world: BrainWorld, handle: str) -> Principal:
    user = world.runtime.store.identity.user_by_email(f"{handle}@example.test")
    assert user is not None
    return user_principal(user)


@contextmanager
def signed_in(base: str, world: BrainWorld, handle: str) -> Iterator[httpx.Client]:
    world.runtime.sign_in.set_password(LOCAL_OWNER, f"{handle}@example.test", f"{handle} pass phrase")
    with httpx.Client(base_url=base, timeout=30) as client:
        client.post("/signin", data={"email": f"{handle}@example.test", "password": f"{handle} pass phrase",
                                     "csrf": csrf_of(client.get("/signin").text), "next": "/projects"})
        yield client


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


def proposed_and_retired(world: BrainWorld) -> dict[str, Any]:
    """Alice's two recipes of one task, used in a good session (autoskill proposes a merge and added steps), and a
    rule left unused below the floor (the night's evolution retires it): the refs and the proposals by kind."""
    rt, alice = world.runtime, person(world, "alice")
    build = rt.brain.teach(alice, rule="build the image", trigger="deploying the arm", kind="recipe",
                           project_id="shared").item.ref
    smoke = rt.brain.teach(alice, rule="run the smoke tests", trigger="deploying the arm", kind="recipe",
                           project_id="shared").item.ref
    faded = rt.brain.teach(alice, rule="grease the gears weekly", project_id="shared").item.ref
    rt.store.brain.record_use(faded, False, 0.1, iso(T0))
    sid = rt.brain.start_session(alice, prompt="ship the arm", project_id="shared").session.id
    rt.brain.log_event(alice, sid, "command_run", {"command": "make flash"})
    rt.brain.report_outcome(alice, sid, success=True, knowledge_used=[build])
    rt.job_runner(clock=Clock()).run(drain=True)  # autoskill's job, and the night's evolution
    return {"build": build, "smoke": smoke, "faded": faded,
            "proposals": {q.proposal.kind: q.id for q in rt.brain.proposals(alice)}}


def test_a_person_decides_proposals_and_restores_on_the_page(base: str, world: BrainWorld) -> None:
    rt = world.runtime
    made = proposed_and_retired(world)
    build, smoke, faded, proposals = made["build"], made["smoke"], made["faded"], made["proposals"]
    assert sorted(proposals) == ["add_steps", "merge"]

    with signed_in(base, world, "alice") as client:
        shown = client.get("/brain/skills")
        assert shown.status_code == 200
        html = shown.text
        assert "build the image. Then: make flash." in html and f"/brain/skills/restore/{faded}" in html
        csrf = csrf_of(html)
        done = client.post(f"/brain/skills/proposals/{proposals['add_steps']}/accept", data={"csrf": csrf})
        assert done.status_code == 303 and done.headers["location"] == "/brain/skills"
        assert f"Proposal {proposals['add_steps']} accepted." in client.get("/brain/skills").text
        assert "accepted." not in client.get("/brain/skills").text  # once
        assert "Done" not in client.get("/brain/skills?done=your+account+is+locked").text  # no words from a link
        stale = client.post(f"/brain/skills/proposals/{proposals['merge']}/accept", data={"csrf": csrf})
        assert stale.status_code == 400 and "changed since" in stale.text
        assert client.post(f"/brain/skills/proposals/{proposals['merge']}/reject",
                           data={"csrf": csrf}).status_code == 303
        odd = client.post("/brain/skills/proposals/abc/reject", data={"csrf": csrf})
        assert odd.status_code == 404 and "'abc' is no proposal id" in unescape(odd.text)
        refused = client.post(f"/brain/skills/restore/{faded}", data={})
        assert refused.status_code == 403 and not rt.store.brain.knowledge([faded])[faded].live  # no CSRF token
        assert client.post(f"/brain/skills/restore/{faded}", data={"csrf": csrf}).status_code == 303
        after = client.get("/brain/skills").text
        assert f"Restored {faded}." in after
        assert "No open proposals." in after and "Nothing retired." in after
    known = rt.store.brain.knowledge([build, smoke, faded])
    assert not known[build].live and known[smoke].live and known[faded].live

    with signed_in(base, world, "bob") as client:
        html = client.get("/brain/skills").text
        assert "No open proposals." in html and "grease the gears" not in html
        theirs = client.post(f"/brain/skills/proposals/{proposals['merge']}/reject", data={"csrf": csrf_of(html)})
        assert theirs.status_code == 404 and "of yours" in theirs.text


def refusal(answer: httpx.Response) -> str:
    found = re.search(r'<p class="error" role="alert" id="skills-error">([^<]*)</p>', answer.text)
    assert found is not None, answer.text
    return unescape(found.group(1))


def test_a_refusal_names_the_way_out_in_the_browser(base: str, world: BrainWorld) -> None:
    """A proposal or retired rule not found named no way out on the page, which sent its reader to the command
    line (a shell on the server a browser user has not): the refusal names the page that lists them."""
    with signed_in(base, world, "bob") as client:
        csrf = csrf_of(client.get("/brain/skills").text)
        proposal = client.post("/brain/skills/proposals/999999/accept", data={"csrf": csrf})
        restore = client.post("/brain/skills/restore/k_none", data={"csrf": csrf})
    assert (proposal.status_code, restore.status_code) == (404, 404)
    assert refusal(proposal) == "NOT_FOUND: no proposal 999999 of yours; the Skill proposals page lists yours"
    assert refusal(restore) == ("NOT_FOUND: no knowledge k_none you can see; the Skill proposals page lists what "
                                "evolution retired that you can see")
    assert "notewell brain" not in proposal.text + restore.text


def paged(client: httpx.Client, first: str, what: str, pattern: str) -> list[str]:
    """What ``pattern`` finds on each page of the list ``what``, from ``first`` on by its rel=next link."""
    seen: list[str] = []
    link: str | None = first
    while link is not None:
        answer = client.get(link)
        assert answer.status_code == 200, (link, answer.status_code)
        part = answer.text.split("<h2>Retired by nightly evolution</h2>")[what == "retired rules"]
        seen += re.findall(pattern, part)
        nav = re.search(rf'<nav aria-label="Pages of {what}".*?</nav>', answer.text, re.S)
        following = re.search(r'<a href="([^"]+)" rel="next">', nav.group(0)) if nav else None
        link = unescape(following.group(1)) if following else None
    return seen


def test_both_lists_of_the_skills_page_are_paged(base: str, world: BrainWorld,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """/brain/skills showed the newest 50 proposals and the latest 50 retired rules, and no way to the others."""
    from notewell.records.brain import EVOLUTION_AUTHOR, ProposalInput
    from notewell.web.pages import skills

    monkeypatch.setattr(skills, "SHOWN", 3)
    rt, carol = world.runtime, person(world, "carol")
    items = [rt.brain.teach(carol, rule=rule, kind="recipe").item for rule in RULES]
    for n, item in enumerate(items):
        rt.store.brain.add_proposal(ProposalInput(f"paged-{n}", "demote", item.ref, None, carol.user_id,
                                                  item.brain_project, "ses_none", "heuristic", item.rule,
                                                  f"paging {n}", iso(T0)))
        rt.store.brain.retire([item.ref], EVOLUTION_AUTHOR, "idle", iso(T0 + timedelta(minutes=n)))
    proposals = [str(q.id) for q in rt.brain.proposals(carol, "open", 100)]
    retired = [k.ref for k in rt.brain.evolution_retired(carol, 100)]
    assert len(proposals) == len(retired) == 7
    with signed_in(base, world, "carol") as client:
        assert paged(client, "/brain/skills", "proposals", r'<td>(\d+) · demote</td>') == proposals
        assert paged(client, "/brain/skills", "retired rules", r'/brain/skills/restore/([^"]+)"') == retired
        both = client.get("/brain/skills?page=2&retired=3")  # each list keeps the other's page
        links = dict((text, unescape(href)) for href, text in re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>',
                                                                         both.text))
        assert links["Older proposals"] == "/brain/skills?page=3&retired=3"
        assert links["Later retired rules"] == "/brain/skills?page=2&retired=2"
        on_it = re.findall(r'<td>(\d+) · demote</td>', both.text)[0]
        done = client.post(f"/brain/skills/proposals/{on_it}/reject",
                           data={"csrf": csrf_of(both.text), "page": "2", "retired": "3"})
        assert done.status_code == 303 and done.headers["location"] == "/brain/skills?page=2&retired=3"
        past = unescape(client.get("/brain/skills?page=100&retired=100").text)
        assert "No open proposals past the newest 297." in past and "Nothing retired past the latest 297." in past
        assert 'rel="next"' not in past and 'rel="prev"' not in past
        assert "Newest proposals" in past and "Latest retired rules" in past
