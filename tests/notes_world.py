"""The note-writing test world: the MCP world (tests/mcp_world.py) plus tokens that hold knowledge:write.

People (as in the MCP world) and their writing tokens:
- admin (admin): a write grant on handbook, so writes there only (the role adds no write right to documents);
  staff (staff): reads every ordinary project, writes none.
- alice (member): a read grant on northwind-advisory, a write grant on projects, and her home ~alice.
- bob (member): only his home.
Tokens: ``<handle>_write`` (knowledge:read + knowledge:write, user-scoped) for each; ``alice_bound`` bound to
projects; ``alice_read`` (knowledge:read only); ``alice_write_only`` (knowledge:write only). Each module gets
its own world: the tests write into it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_world import ServerThread, World, build_world, connect, serve_world
from mcp_world import call as call  # the note tests import it from here
from notewell.access.principal import LOCAL_OWNER, Principal
from pg import BACKENDS

WRITE_SCOPES = "knowledge:read,knowledge:write"


def build_notes_world(tmp: Path, db: str | None = None) -> World:
    world = build_world(tmp, db)
    administration = world.runtime.administration
    administration.grant(LOCAL_OWNER, "alice@northwind.test", "projects", "write")
    administration.grant(LOCAL_OWNER, "admin@northwind.test", "handbook", "write")

    def mint(handle: str, scopes: str, project: str | None = None) -> str:
        return administration.mint_token(LOCAL_OWNER, f"{handle}@northwind.test", scopes.split(","),
                                         project_id=project).secret

    for handle in ("admin", "staff", "alice", "bob"):
        world.tokens[f"{handle}_write"] = mint(handle, WRITE_SCOPES)
    world.tokens["alice_bound"] = mint("alice", WRITE_SCOPES, "projects")
    world.tokens["alice_read"] = mint("alice", "knowledge:read")
    world.tokens["alice_write_only"] = mint("alice", "knowledge:write")
    return world


def notes_world_on(request: pytest.FixtureRequest, tmp: Path) -> Iterator[World]:
    """A module fixture's world on the backend ``request.param`` names ("sqlite" or "postgres": a fresh database
    of the session's throwaway cluster), closed (and dropped) after the module."""
    if request.param == "postgres":
        cluster = request.getfixturevalue("pg_cluster")
        name = cluster.create_database()
        built = build_notes_world(tmp, cluster.url(name))
        yield built
        built.runtime.close()
        cluster.drop_database(name)
        return
    built = build_notes_world(tmp)
    yield built
    built.runtime.close()


def served_notes(folder: str) -> tuple[Any, Any, Any]:
    """The ``world``, ``server`` and ``admin`` fixtures of a module of note tests over MCP, to assign to those names:
    a world on each backend in a temporary folder named ``folder`` (module scope), its server, and a client with the
    admin's writing token."""
    @pytest.fixture(scope="module", params=BACKENDS)
    def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
        yield from notes_world_on(request, tmp_path_factory.mktemp(folder))

    @pytest.fixture(scope="module")
    def server(world: World) -> Iterator[ServerThread]:
        with serve_world(world) as running:
            yield running

    @pytest.fixture
    async def admin(server: ServerThread, world: World) -> AsyncIterator[Client]:
        async with connect(server.url, world.tokens["admin_write"]) as client:
            yield client

    return world, server, admin


def person(world: World, token: str) -> Principal:
    """The Principal a token of the world authenticates as."""
    return world.runtime.authentication.authenticate(world.tokens[token])


async def refusal(client: Client, name: str, args: dict[str, Any]) -> str:
    """A tool's refusal: an error with its text only."""
    result = await client.call_tool(name, args)
    assert result.is_error and result.structured_content is None
    return result.content[0].text  # type: ignore[union-attr]
