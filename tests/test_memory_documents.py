"""Memories tied to the documents they are about, through the MCP door on both backends (docs/links.md).

remember's about names a document (refused exactly as a missing one when the caller cannot read it); a
memory whose text names a document's path is tied to it as a mention; readDoc's first part lists the
memories about the document that the caller may see (another person's private memory never, a forgotten
one no more); a move of the document takes its memories along; a deleted document keeps them, and their
answers mark it gone.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp import Client

from brain_world import call, refusal
from mcp_world import ServerThread, World, connect, serve_world
from notes_world import notes_world_on
from notewell.access.principal import LOCAL_OWNER
from pg import BACKENDS

pytestmark = pytest.mark.anyio
SCOPES = ["knowledge:read", "knowledge:write", "memory:read", "memory:write"]


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    for built in notes_world_on(request, tmp_path_factory.mktemp("about")):
        for handle in ("alice", "bob"):
            built.tokens[f"{handle}_mem"] = built.runtime.administration.mint_token(
                LOCAL_OWNER, f"{handle}@northwind.test", SCOPES).secret
        yield built


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[ServerThread]:
    with serve_world(world) as running:
        yield running


async def about(client: Client, path: str) -> list[tuple[str, str]]:
    read = await call(client, "readDoc", {"path": path})
    return [(m["ref"], m["how"]) for m in read.get("memories", [])]


async def test_a_memory_about_a_document_is_listed_by_readdoc(server: ServerThread, world: World) -> None:
    async with connect(server.url, world.tokens["alice_mem"]) as alice:
        await call(alice, "write_note", {"path": "projects/apollo/runbook.md", "content": "# Runbook\n\nsteps\n"})
        said = await call(alice, "remember", {"content": "The runbook's step 3 is out of date.", "project": "projects",
                                              "about": "projects/apollo/runbook.md"})
        named = await call(alice, "remember", {"content": "See apollo/runbook.md before a release.",
                                               "project": "projects", "title": "Read the runbook"})
        unrelated = await call(alice, "remember", {"content": "Nothing about documents here.", "project": "projects"})
        listed = await about(alice, "projects/apollo/runbook.md")
        assert listed == [(named["ref"], "mention"), (said["ref"], "about")]  # newest first
        assert unrelated["ref"] not in dict(listed)
        later = await call(alice, "readDoc", {"path": "projects/apollo/runbook.md", "offset": 2})
        assert "memories" not in later  # the first part alone lists them


async def test_about_a_document_one_cannot_read_is_refused_as_a_missing_one(server: ServerThread,
                                                                             world: World) -> None:
    """(Each test writes the documents it needs: with the backends as module parameters, the order of tests
    across the two worlds is not fixed.)"""
    async with connect(server.url, world.tokens["alice_mem"]) as alice:
        await call(alice, "write_note", {"path": "projects/apollo/budget.md", "content": "# Budget\n\nnumbers\n"})
    async with connect(server.url, world.tokens["bob_mem"]) as bob:  # bob reads only his home
        hidden = await refusal(bob, "remember", {"content": "x", "about": "projects/apollo/budget.md"})
        missing = await refusal(bob, "remember", {"content": "x", "about": "projects/apollo/no-such.md"})
        assert hidden.replace("budget", "no-such") == missing and "Not found" in hidden
        named = await call(bob, "remember", {"content": "projects/apollo/budget.md is not mine to read"})
    assert world.runtime.store.memory_documents.ties([named["ref"]]) == {}  # he may not read it: no tie
    async with connect(server.url, world.tokens["alice_mem"]) as alice:
        assert await about(alice, "projects/apollo/budget.md") == []


async def test_private_and_forgotten_memories_are_shown_to_no_one_else(server: ServerThread, world: World) -> None:
    async with connect(server.url, world.tokens["alice_mem"]) as alice:
        await call(alice, "write_note", {"path": "projects/apollo/secret.md", "content": "# Secret\n"})
        mine = await call(alice, "remember", {"content": "Only I know this.", "project": "projects",
                                              "about": "projects/apollo/secret.md", "private": True})
        gone = await call(alice, "remember", {"content": "Soon forgotten.", "project": "projects",
                                              "about": "projects/apollo/secret.md"})
        await call(alice, "forget", {"ref": gone["ref"], "reason": "wrong"})
        assert await about(alice, "projects/apollo/secret.md") == [(mine["ref"], "about")]
    async with connect(server.url, world.tokens["admin_write"]) as admin:  # reads projects, no memory scope
        assert await about(admin, "projects/apollo/secret.md") == []


async def test_a_moved_document_takes_its_memories_and_a_deleted_one_keeps_them(server: ServerThread,
                                                                               world: World) -> None:
    async with connect(server.url, world.tokens["alice_mem"]) as alice:
        await call(alice, "write_note", {"path": "projects/apollo/slip.md", "content": "# Plan\n\nphase one\n"})
        kept = await call(alice, "remember", {"content": "Phase one slipped a week.", "project": "projects",
                                              "about": "projects/apollo/slip.md"})
        await call(alice, "move_note", {"path": "projects/apollo/slip.md", "new_path": "projects/apollo/slip-v2.md"})
        assert await about(alice, "projects/apollo/slip-v2.md") == [(kept["ref"], "about")]
        await call(alice, "delete_note", {"path": "projects/apollo/slip-v2.md"})
        found = await call(alice, "recall", {"query": "phase one slipped"})
        searched = await call(alice, "search_memory", {"query": "phase one slipped"})
    result = next(r for r in found["results"] if r["ref"] == kept["ref"])  # the memory outlives its document
    assert (result["documents"], result["documents_gone"]) == ([], ["projects/apollo/slip-v2.md"])  # marked gone
    assert next(r for r in searched["results"] if r["ref"] == kept["ref"])["documents_gone"] == [
        "projects/apollo/slip-v2.md"]
    assert world.runtime.store.memory_documents.ties([kept["ref"]])[kept["ref"]][0].path == "apollo/slip-v2.md"
