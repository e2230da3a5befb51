"""The loop's health over REST (GET /api/v1/brain/health) and on the web page (/brain/health), on SQLite and
PostgreSQL, in a brain world of its own (tests/brain_world.py) so that every count is exact."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from brain_world import BrainWorld, brain_world_on, serve_brain
from conftest import make_vault
from notewell.access.principal import LOCAL_OWNER
from notewell.errors import Forbidden, InvalidArgument


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrainWorld]:
    yield from brain_world_on(request, tmp_path_factory.mktemp("health"))


@pytest.fixture(scope="module")
def base(world: BrainWorld) -> Iterator[str]:
    with serve_brain(world) as server:
        yield server.url.removesuffix("/mcp")


def rest(base: str, world: BrainWorld, who: str, method: str, path: str, **kw: Any) -> httpx.Response:
    return httpx.request(method, f"{base}/api/v1{path}", headers={"Authorization": f"Bearer {world.tokens[who]}"},
                         timeout=30, **kw)


@pytest.fixture(scope="module")
def looped(base: str, world: BrainWorld) -> str:
    """The world after the loop below ran once, with an admin (token: sessions and admin); the server's base URL."""
    admin = world.runtime.administration
    admin.add_user(LOCAL_OWNER, "admin@example.test", "admin", handle="admin", home_folder=False)
    world.tokens["admin"] = admin.mint_token(LOCAL_OWNER, "admin@example.test", ["sessions", "admin"]).secret
    _loop(base, world)
    return base


def _loop(base: str, world: BrainWorld) -> None:
    """Alice: a rule taught, a session it is injected into and used by (closed with a learning), a session
    closed with nothing; a meeting note's item for her; bob: a session of his own."""
    taught = rest(base, world, "alice", "POST", "/knowledge", json={
        "rule": "zero the torque sensor first", "trigger": "calibrating the gripper", "kind": "reflex",
        "projectId": "shared"}).json()["knowledge"]["ref"]
    first = rest(base, world, "alice", "POST", "/sessions", json={"prompt": "calibrating the gripper arm",
                                                                  "projectId": "shared"}).json()
    assert first["relevant"]["ids"] == [taught]
    closed = rest(base, world, "alice", "POST", f"/sessions/{first['session']['id']}/outcome", json={
        "success": True, "knowledgeUsed": [taught],
        "learnings": [{"trigger": "flashing firmware", "rule": "use the staging key", "type": "reflex",
                       "source": "discovery"}]})
    assert closed.status_code == 200, closed.text
    second = rest(base, world, "alice", "POST", "/sessions", json={"projectId": "shared"}).json()
    rest(base, world, "alice", "POST", f"/sessions/{second['session']['id']}/outcome", json={"success": False})
    bobs = rest(base, world, "bob", "POST", "/sessions", json={"projectId": "shared"}).json()
    rest(base, world, "bob", "POST", f"/sessions/{bobs['session']['id']}/outcome", json={"success": True})
    make_vault(world.runtime.settings.vault.parent, {"shared/meetings/2026-03-04-sync.md":
                                                     "## Actions\n\n- [ ] alice: order the parts #blocker\n"})
    world.runtime.indexing.sync()


def test_the_loop_health_of_a_person_and_of_the_team(looped: str, world: BrainWorld) -> None:
    base = looped
    mine = rest(base, world, "alice", "GET", "/brain/health?days=7")
    assert mine.status_code == 200, mine.text
    health = mine.json()
    assert health["scope"] == "me" and health["days"] == 7 and len(health["sessionsClosed"]) == 7
    assert sum(d["count"] for d in health["sessionsClosed"]) == 2
    assert health["sessionsClosed"][0]["day"] == health["since"]
    assert (health["injected"], health["used"], health["useRate"]) == (1, 1, 1.0)
    assert health["capture"] == {"close_capture": 1, "mined": 0, "cross": 0, "taught": 1}
    assert health["stages"] == {"seed": 2, "knowledge": 0, "wisdom": 0}
    assert health["openActionItems"] == 1  # the meeting note's, which is no rule: in no other count
    bob = rest(base, world, "bob", "GET", "/brain/health").json()
    assert sum(d["count"] for d in bob["sessionsClosed"]) == 1 and bob["injected"] == 0 and bob["useRate"] is None
    assert bob["openActionItems"] == 0 and bob["capture"]["taught"] == 0
    refused = rest(base, world, "alice", "GET", "/brain/health?scope=team")
    assert refused.status_code == 403 and "admin" in refused.text
    too_many = rest(base, world, "alice", "GET", "/brain/health?days=91")
    assert too_many.status_code == 422 and "days" in too_many.text
    team = rest(base, world, "admin", "GET", "/brain/health?scope=team").json()
    assert team["scope"] == "team" and sum(d["count"] for d in team["sessionsClosed"]) == 3
    assert (team["injected"], team["used"], team["openActionItems"]) == (1, 1, 1)
    assert team["capture"] == {"close_capture": 1, "mined": 0, "cross": 0, "taught": 1}
    later = world.runtime.brain.health(LOCAL_OWNER, team=True, days=3, now=datetime.now(UTC) + timedelta(days=30))
    assert [d.count for d in later.sessions_closed] == [0, 0, 0] and later.injected == 0
    with pytest.raises(InvalidArgument, match="days"):
        world.runtime.brain.health(LOCAL_OWNER, days=0)


def _pages(base: str, world: BrainWorld, handle: str, *paths: str) -> list[httpx.Response]:
    """``paths`` as ``handle`` signed in to the web pages sees them."""
    world.runtime.sign_in.set_password(LOCAL_OWNER, f"{handle}@example.test", f"{handle} pass phrase")
    with httpx.Client(base_url=base, timeout=30, follow_redirects=True) as client:
        csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/signin").text)
        assert csrf is not None
        client.post("/signin", data={"email": f"{handle}@example.test", "password": f"{handle} pass phrase",
                                     "csrf": csrf.group(1), "next": "/projects"})
        return [client.get(path) for path in paths]


def test_the_health_page_draws_the_signals(looped: str, world: BrainWorld) -> None:
    base = looped
    page, team = _pages(base, world, "alice", "/brain/health", "/brain/health?scope=team")
    assert page.status_code == 200
    html = page.text
    svgs = re.findall(r"<svg.*?</svg>", html, re.S)
    assert len(svgs) == 5 and not any("http" in svg or "<script" in svg for svg in svgs)  # drawn here, no CDN
    assert re.findall(r"<script[^>]*>", html) == ['<script src="/static/notewell.js" defer>']  # the pages' own
    assert svgs[0].count('<rect class="bar"') == 14 and 'aria-label="Sessions closed per day: ' in svgs[0]
    assert 'aria-label="Injected and used: injected 1, used 1"' in svgs[1]
    assert "Sessions closed per day" in html and "Injected and used" in html and "Open action items" in html
    assert 'aria-label="' in html and "<table" in html  # the numbers as a table too
    assert team.status_code == 403
    with pytest.raises(Forbidden):
        world.runtime.brain.health(world.runtime.authentication.authenticate(world.tokens["alice"]), team=True)


def test_an_admin_sees_the_teams_page(looped: str, world: BrainWorld) -> None:
    (team,) = _pages(looped, world, "admin", "/brain/health?scope=team&days=3")
    assert team.status_code == 200 and "Loop health · the team" in team.text
    assert 'aria-label="Injected and used: injected 1, used 1"' in team.text and "1 open in every project" in team.text
    assert team.text.count('<rect class="bar"') == 3 + 2 + 4 + 12 + 3  # 3 days; injected, used; 4 sources;
    # KEA's 3 modes of 4 stages; 3 stages
