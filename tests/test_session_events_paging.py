"""A session's events page through all of them (issue 22, item 5): with 149 and more events, REST's next
links and offsets reach every one, and the CLI's export holds every one; the store pages on both backends.
(The web session page's paging is in tests/test_web.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from brain_world import BrainWorld, brain_world_on, serve_brain
from conftest import run_cli
from mcp_world import ServerThread
from notewell.access.authentication import user_principal

EVENTS = 149


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrainWorld]:
    yield from brain_world_on(request, tmp_path_factory.mktemp("events"))


@pytest.fixture(scope="module")
def session(world: BrainWorld) -> str:
    """alice's session holding EVENTS events: step 0 to step 148, in order."""
    rt = world.runtime
    alice = rt.authentication.authenticate(world.tokens["alice"])
    started = rt.brain.start_session(alice, prompt="a long session")
    for step in range(EVENTS):
        rt.brain.log_event(alice, started.session.id, "step", {"n": step})
    return started.session.id


@pytest.fixture(scope="module")
def server(world: BrainWorld) -> Iterator[ServerThread]:
    with serve_brain(world) as served:
        yield served


def _get(server: ServerThread, world: BrainWorld, path: str) -> httpx.Response:
    return httpx.get(f"http://127.0.0.1:{server.port}{path}", timeout=30,
                     headers={"Authorization": f"Bearer {world.tokens['alice']}"})


def test_rest_pages_reach_every_event(world: BrainWorld, server: ServerThread, session: str) -> None:
    first = _get(server, world, f"/api/v1/sessions/{session}/events?limit=100")
    assert first.status_code == 200, first.text
    page = first.json()
    assert [e["payload"]["n"] for e in page["items"]] == list(range(100))
    assert page["next"] == f"/api/v1/sessions/{session}/events?limit=100&offset=100"
    assert first.headers["link"] == f'<{page["next"]}>; rel="next"'
    rest = _get(server, world, page["next"]).json()
    assert [e["payload"]["n"] for e in rest["items"]] == list(range(100, EVENTS)) and rest["next"] is None
    seen: list[int] = []
    link: str | None = f"/api/v1/sessions/{session}/events?limit=30"
    while link is not None:
        answer = _get(server, world, link).json()
        seen += [e["payload"]["n"] for e in answer["items"]]
        link = answer["next"]
    assert seen == list(range(EVENTS))
    assert _get(server, world, f"/api/v1/sessions/{session}/events?offset={EVENTS}").json()["items"] == []


def test_the_export_holds_every_event(world: BrainWorld, session: str, tmp_path: Path) -> None:
    settings = world.runtime.settings
    out = tmp_path / "export.json"
    done = run_cli("brain", "export", str(out), "--vault", str(settings.vault), "--db", settings.db,
                   "--as", "alice@example.test")
    assert done.exit_code == 0, done.stderr
    exported = {s["sessionId"]: s for s in json.loads(out.read_text("utf-8"))["sessions"]}
    assert [e["payload"]["n"] for e in exported[session]["events"]] == list(range(EVENTS))


def test_the_service_refuses_a_page_it_does_not_serve(world: BrainWorld, session: str) -> None:
    from notewell.errors import InvalidArgument
    from notewell.services.brain_limits import EVENTS_PAGE_MAX

    rt = world.runtime
    user = rt.store.identity.user_by_email("alice@example.test")
    assert user is not None
    alice = user_principal(user)
    for limit, offset, field in ((0, 0, "limit"), (EVENTS_PAGE_MAX + 1, 0, "limit"), (10, -1, "offset")):
        with pytest.raises(InvalidArgument) as refused:
            rt.brain.events(alice, session, limit=limit, offset=offset)
        assert refused.value.field == field


def test_rest_pages_reach_every_session_reading_one_page_of_rows(
        world: BrainWorld, server: ServerThread, session: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sessions list pages newest first through all of alice's sessions, and a page deep in it asks the store
    for that page's rows alone (it read every session before the page too: offset + limit + 1 rows)."""
    rt = world.runtime
    alice = rt.authentication.authenticate(world.tokens["alice"])
    opened = [rt.brain.start_session(alice, prompt=f"session {n}").session.id for n in range(12)]
    asked: list[int] = []
    recent = rt.store.brain.recent_sessions

    def recording(*args: object, **kwargs: object) -> object:
        asked.append(args[2] if len(args) > 2 else kwargs["limit"])  # type: ignore[arg-type]
        return recent(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(rt.store.brain, "recent_sessions", recording)
    seen: list[str] = []
    link: str | None = "/api/v1/sessions?limit=5"
    while link is not None:
        answer = _get(server, world, link)
        assert answer.status_code == 200, answer.text
        seen += [s["id"] for s in answer.json()["items"]]
        link = answer.json()["next"]
    assert seen[:12] == opened[::-1] and session in seen and len(seen) == len(set(seen))
    assert asked and max(asked) == 6, asked
