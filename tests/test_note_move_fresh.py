"""A move finds the notes linking to it as they are on disk, not only as the index last saw them, on both backends
(docs/links.md, "A move takes its links along"). The server runs without its watcher, so a note written on disk
stays unindexed until something indexes it: no sleep races a watcher.

A note a person had just saved, not indexed yet, was neither rewritten nor named in ``unlinked`` (its link stayed
broken for good); a rewritten note written again by another program while the move indexed it was left out of the
index (getLinks missed it, and the next move did not find it)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcp_world import ServerThread, World, connect
from notes_world import call, notes_world_on
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.vault.verified_read import VerifiedReader
from pg import BACKENDS

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from notes_world_on(request, tmp_path_factory.mktemp("fresh"))


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[ServerThread]:
    with ServerThread(build_app(world.runtime, ServeOptions(choose(None), watch=False))) as running:
        yield running


def rest(server: ServerThread, world: World, method: str, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.request(method, f"http://127.0.0.1:{server.port}/api/v1{path}", timeout=30,
                         headers={"Authorization": f"Bearer {world.tokens['admin_write']}"}, **kwargs)


def backlinks(server: ServerThread, world: World, path: str) -> list[str]:
    answer = rest(server, world, "GET", f"/projects/handbook/documents/{path}/links",
                  params={"direction": "backlinks"})
    assert answer.status_code == 200, answer.text
    return sorted({link["source"] for link in answer.json()["backlinks"]})


def test_a_note_saved_on_disk_and_not_indexed_yet_is_rewritten_by_a_move(server: ServerThread, world: World) -> None:
    """The probe's repro over REST: the answer said "moved, no line changed", relinked and unlinked empty, and
    fresh.md kept its broken links."""
    made = rest(server, world, "PUT", "/projects/handbook/documents/d1/target.md", json={"content": "# Target\n"})
    assert made.status_code == 201, made.text
    fresh = world.vault / "handbook/d1/fresh.md"
    fresh.write_text("see [[target]] and [t](target.md)\n")  # a person's save, which no watcher indexes here
    moved = rest(server, world, "POST", "/projects/handbook/moves",
                 json={"path": "d1/target.md", "newPath": "d1/renamed.md"})
    assert moved.status_code == 200, moved.text
    assert moved.json()["relinked"] == ["handbook/d1/fresh.md:1"], moved.json()
    assert moved.json()["unlinked"] == [], moved.json()
    assert fresh.read_text() == "see [[renamed]] and [t](renamed.md)\n"
    assert backlinks(server, world, "d1/renamed.md") == ["handbook/d1/fresh.md"]  # indexed before the answer
    fresh.write_text("see [[renamed]] and [t](renamed.md)\nand [again](renamed.md)\n")  # saved again, unindexed
    back = rest(server, world, "POST", "/projects/handbook/moves", json={"path": "d1/renamed.md",
                                                                         "newPath": "d1/target.md"})
    assert back.status_code == 200 and back.json()["relinked"] == ["handbook/d1/fresh.md:1",
                                                                   "handbook/d1/fresh.md:2"], back.text
    assert fresh.read_text() == "see [[target]] and [t](target.md)\nand [again](target.md)\n"


def test_a_move_indexes_first_no_more_changed_files_than_it_reads(server: ServerThread, world: World,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounded: with more changed files on disk than a move indexes first, none is read and the summary says
    that the changed notes were not looked in (the watcher indexes them)."""
    monkeypatch.setattr("notewell.services.note_writing.MOVE_NOTES_READ", 2)
    made = rest(server, world, "PUT", "/projects/handbook/documents/d2/target-d2.md", json={"content": "# Target\n"})
    assert made.status_code == 201, made.text
    for n in range(3):
        (world.vault / f"handbook/d2/fresh-{n}.md").write_text("see [[target-d2]]\n")
    moved = rest(server, world, "POST", "/projects/handbook/moves",
                 json={"path": "d2/target-d2.md", "newPath": "d2/renamed-d2.md"})
    assert moved.status_code == 200, moved.text
    assert re.search(r"; the notes changed on disk since the last sync were not looked in for links to it \(\d+ "
                     r"files of the project changed on disk since its last sync, more than the 2 a move indexes "
                     r"first\): a link of theirs to its old path is left as written", moved.json()["summary"]), \
        moved.json()
    assert (world.vault / "handbook/d2/fresh-0.md").read_text() == "see [[target-d2]]\n"
    world.runtime.indexing.sync()


async def test_a_rewritten_note_written_again_while_indexed_is_indexed_as_read(
        server: ServerThread, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program appends to each linking note between the move's index pass's look at the disk and its
    read: each was left out of that pass (getLinks counted 28 of 30), and the next move, finding the notes
    through the index, left the ones it missed naming a note that is gone, which no answer listed."""
    linking = [f"handbook/d3/from-{n:02d}.md" for n in range(6)]
    appended: set[str] = set()
    read_stamped = VerifiedReader.read_stamped

    def appending(reader: VerifiedReader, rel: str) -> tuple[bytes, int]:
        if rel in linking and rel not in appended and "[[one]]" in (world.vault / rel).read_text():
            appended.add(rel)  # rewritten by the move: appended to after the index pass's scan saw it
            with open(world.vault / rel, "a") as note:
                note.write("appended by another program\n")
        return read_stamped(reader, rel)

    async with connect(server.url, world.tokens["admin_write"]) as admin:
        await call(admin, "write_note", {"path": "handbook/d3/target-d3.md", "content": "# Target\n"})
        for path in linking:
            await call(admin, "write_note", {"path": path, "content": "See [[target-d3]].\n"})
        monkeypatch.setattr(VerifiedReader, "read_stamped", appending)
        moved = await call(admin, "move_note", {"path": "handbook/d3/target-d3.md", "new_path": "handbook/d3/one.md"})
        monkeypatch.undo()
        assert moved["relinked"] == [f"{path}:1" for path in linking], moved
        assert appended == set(linking)
        links = await call(admin, "getLinks", {"path": "handbook/d3/one.md", "direction": "backlinks"})
        assert links["backlinksTotal"] == len(linking), links
        again = await call(admin, "move_note", {"path": "handbook/d3/one.md", "new_path": "handbook/d3/two.md"})
        assert again["relinked"] == [f"{path}:1" for path in linking], again
        for path in linking:
            assert (world.vault / path).read_text() == "See [[two]].\nappended by another program\n", path

