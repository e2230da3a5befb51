"""The brain test world: a small vault with two shared projects, three people and real tokens, on either store.

- alice (member): a write grant on "shared", a read grant on "readonly", her home ~alice.
- bob (member): a write grant on "shared", his home ~bob.
- carol (member): nothing but her (empty) home: no project at all yet.
Tokens (secrets minted by the access service): alice, bob, carol (sessions + memory:read + knowledge:read);
alice_shared and alice_readonly (sessions, bound to those projects); alice_memory (memory:read only).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from conftest import make_vault
from mcp_world import ServerThread
from mcp_world import call as call  # the brain tests import it from here
from notewell.access.principal import LOCAL_OWNER
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import Runtime, open_runtime
from pg import module_store

SCOPES = "sessions,memory:read,knowledge:read"
FILES = {
    "shared/README.md": "---\nname: Shared Robotics\n---\nThe team's robotics project.\n",
    "shared/runbook.md": "# Deploy runbook\n\nTo deploy the gripper firmware, flash it with the staging key first.\n",
    "readonly/README.md": "---\nname: Read Only\n---\nReference material.\n",
}


@dataclass
class BrainWorld:
    runtime: Runtime
    tokens: dict[str, str]

def build_brain_world(tmp: Path, db: str) -> BrainWorld:
    vault = make_vault(tmp, FILES)
    rt = open_runtime(str(vault), db)
    rt.indexing.sync()
    access = rt.administration
    for handle in ("alice", "bob", "carol"):
        access.add_user(LOCAL_OWNER, f"{handle}@example.test", "member", handle=handle)
    access.grant(LOCAL_OWNER, "alice@example.test", "shared", "write")
    access.grant(LOCAL_OWNER, "alice@example.test", "readonly", "read")
    access.grant(LOCAL_OWNER, "bob@example.test", "shared", "write")

    def mint(handle: str, scopes: str = SCOPES, project: str | None = None) -> str:
        return access.mint_token(LOCAL_OWNER, f"{handle}@example.test", scopes.split(","), project_id=project).secret

    tokens = {handle: mint(handle) for handle in ("alice", "bob", "carol")}
    tokens["alice_shared"] = mint("alice", "sessions", "shared")
    tokens["alice_readonly"] = mint("alice", "sessions", "readonly")
    tokens["alice_memory"] = mint("alice", "memory:read")
    return BrainWorld(rt, tokens)


def brain_world_on(request: pytest.FixtureRequest, tmp: Path) -> Iterator[BrainWorld]:
    """A module fixture's brain world on the backend ``request.param`` names ("sqlite" or "postgres": a fresh
    database of the session's throwaway cluster), closed (and dropped) after the module."""
    with module_store(request, tmp) as db:
        built = build_brain_world(tmp, db)
        yield built
        built.runtime.close()


KEA_ENV = ("KEA_MODEL", "KEA_BASE_URL", "DASHSCOPE_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "KEA_API_KEY")


def brain_world_with_env(request: pytest.FixtureRequest, tmp: Path, env: Mapping[str, str]) -> Iterator[BrainWorld]:
    """brain_world_on's world built with KEA's settings ``env`` alone (the others of KEA_ENV unset): the runtime
    reads them from the environment as it is built."""
    built = brain_world_on(request, tmp)
    with pytest.MonkeyPatch.context() as patch:
        for name in KEA_ENV:
            patch.delenv(name, raising=False)
        for name, value in env.items():
            patch.setenv(name, value)
        world = next(built)
    yield world
    next(built, None)


def brain_world_with_model(request: pytest.FixtureRequest, tmp: Path, model: str,
                           base_url: str) -> Iterator[BrainWorld]:
    """brain_world_on's world built with KEA_MODEL and KEA_BASE_URL set (a local server speaking a provider's
    wire format) and no provider key."""
    return brain_world_with_env(request, tmp, {"KEA_MODEL": model, "KEA_BASE_URL": base_url})


def serve_brain(world: BrainWorld, **options: Any) -> ServerThread:
    return ServerThread(build_app(world.runtime, ServeOptions(choose(None), **options)))


async def refusal(client: Client, name: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(name, args)
    assert result.is_error, result.structured_content
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith(f"Error in {name}: "), text
    return text


async def invalid(client: Client, name: str, args: dict[str, Any]) -> str:
    with pytest.raises(MCPError) as err:
        await client.call_tool(name, args)
    assert err.value.error.code == -32602, err.value.error
    return err.value.error.data["argument"]  # type: ignore[index,no-any-return]
