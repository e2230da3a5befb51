"""The REST test world: the example vault with people, grants, memories and real tokens, served over real
HTTP by the one application (notewell.http.app), on SQLite or on PostgreSQL.

People: admin (admin), staff (staff), alice (member, a read grant on northwind-advisory, her home ~alice),
bob (member, no grant), carol (member, write grant on northwind-advisory, deactivated after minting),
dave (member, write grant on northwind-advisory).
Tokens (each a real secret minted by the access service), by name:
- admin_all: every scope; staff_rw, alice_rw, bob_rw: knowledge:read, memory:read, memory:write;
- alice_kr: knowledge:read only; alice_mem: memory:read only;
- alice_bound: knowledge:read, memory:read, memory:write, bound to northwind-advisory;
- alice_sessions (sessions, memory:read) and bob_sessions (sessions): the External Brain;
- revoked (alice, revoked), carol (her user deactivated).
Memories: one in ~alice written by alice, one in northwind-advisory written by admin, one superseded
and one forgotten in northwind-advisory.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_world import NORTHWIND, ServerThread
from notewell.access.principal import LOCAL_OWNER
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import Runtime, open_runtime
from pg import module_store

BOUND = "northwind-advisory"
TOKEN_SCOPES = {
    "admin_all": ("admin", "knowledge:read,knowledge:write,memory:read,memory:write,sessions,admin", None),
    "staff_rw": ("staff", "knowledge:read,memory:read,memory:write", None),
    "alice_rw": ("alice", "knowledge:read,memory:read,memory:write", None),
    "alice_kr": ("alice", "knowledge:read", None),
    "alice_mem": ("alice", "memory:read", None),
    "alice_bound": ("alice", "knowledge:read,memory:read,memory:write", BOUND),
    "bob_rw": ("bob", "knowledge:read,memory:read,memory:write", None),
    "alice_sessions": ("alice", "sessions,memory:read", None),
    "bob_sessions": ("bob", "sessions", None),
    "revoked": ("alice", "knowledge:read", None),
    "carol": ("carol", "knowledge:read,memory:read", None),
}


@dataclass
class RestWorld:
    runtime: Runtime
    tokens: dict[str, str]
    refs: dict[str, str]
    base: str = ""  # http://127.0.0.1:PORT/api/v1 once served
    backend: str = "sqlite"
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30))  # one pool: fast requests

    def get(self, path: str, token: str | None = None, **kwargs: Any) -> httpx.Response:
        return self.call("GET", path, token, **kwargs)

    def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if token is not None:
            headers["Authorization"] = f"Bearer {self.tokens.get(token, token)}"
        return self.client.request(method, self.base + path, headers=headers, **kwargs)


def build_rest_world(tmp: Path, db: str) -> RestWorld:
    vault = tmp / "vault"
    shutil.copytree(NORTHWIND, vault, ignore=shutil.ignore_patterns(".notewell"))
    rt = open_runtime(str(vault), db)
    access = rt.administration
    people = (("admin", "admin"), ("staff", "staff"), ("alice", "member"), ("bob", "member"), ("carol", "member"),
              ("dave", "member"))
    for handle, role in people:
        access.add_user(LOCAL_OWNER, f"{handle}@northwind.test", role, handle=handle)
    rt.indexing.sync()
    access.grant(LOCAL_OWNER, "alice@northwind.test", BOUND, "read")
    access.grant(LOCAL_OWNER, "carol@northwind.test", BOUND, "write")
    access.grant(LOCAL_OWNER, "dave@northwind.test", BOUND, "write")
    tokens = {name: access.mint_token(LOCAL_OWNER, f"{who}@northwind.test", scopes.split(","), project_id=bound).secret
              for name, (who, scopes, bound) in TOKEN_SCOPES.items()}
    access.revoke_token(LOCAL_OWNER, tokens["revoked"].split("_")[1])
    access.set_user_active(LOCAL_OWNER, "carol@northwind.test", False)
    memory = rt.memory
    alice = rt.authentication.authenticate(tokens["alice_rw"])
    admin = rt.authentication.authenticate(tokens["admin_all"])
    refs = {
        "alice_home": memory.remember(alice, "Alice prefers the quarterly pricing review on Mondays.", path="habits",
                                      tags=["pricing", "calendar"]).memory.ref,
        "advisory": memory.remember(admin, "The pricing floor for advisory retainers is 4,000 EUR a month.",
                                    project=BOUND, path="decisions/pricing", tags=["pricing"]).memory.ref,
    }
    old = memory.remember(admin, "Retainers start at 3,000 EUR.", project=BOUND, path="decisions/pricing").memory.ref
    refs["superseded"] = old
    refs["successor"] = memory.remember(admin, "Retainers start at 3,500 EUR.", project=BOUND, path="decisions/pricing",
                                        supersedes=old).memory.ref
    refs["forgotten"] = memory.remember(admin, "A draft pricing note, withdrawn.", project=BOUND,
                                        path="drafts").memory.ref
    memory.forget(admin, refs["forgotten"], "withdrawn draft")
    return RestWorld(rt, tokens, refs)


@pytest.fixture(scope="module", params=("sqlite", "postgres"))
def rest(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestWorld]:
    """The REST world served over real HTTP, once per backend for the module."""
    tmp = tmp_path_factory.mktemp(f"rest-{request.param}")
    with module_store(request, tmp) as db:
        world = build_rest_world(tmp, db)
        world.backend = request.param
        try:
            with ServerThread(build_app(world.runtime, ServeOptions(choose(None)))) as server:
                world.base = f"http://127.0.0.1:{server.port}/api/v1"
                yield world
        finally:
            world.client.close()
            world.runtime.close()
