"""The MCP test world: a copy of the example vault with users, grants and real tokens, served over real HTTP.

People and tokens (each token a real secret minted by the administration service):
- admin (admin), staff (staff): every ordinary project, no homes.
- alice (member): a read grant on northwind-advisory, and her home ~alice.
- bob (member): no grant at all: only his (empty) home.
Tokens: one user-scoped knowledge:read token for each person; alice_project bound to northwind-advisory;
no_knowledge (alice, memory:read only); revoked (alice, revoked).
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from starlette.types import ASGIApp

from notewell.access.principal import LOCAL_OWNER
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.http.server import server_config
from notewell.mcp.registry import choose
from notewell.runtime import Runtime, open_runtime

REPO_ROOT = Path(__file__).resolve().parent.parent
NORTHWIND = REPO_ROOT / "examples" / "northwind"
MODERN = "2026-07-28"
LEGACY = "legacy"  # the initialize handshake, negotiating 2025-11-25


@dataclass
class World:
    runtime: Runtime
    tokens: dict[str, str]

    @property
    def vault(self) -> Path:
        return self.runtime.settings.vault


def build_world(tmp: Path, db: str | None = None) -> World:
    """The world in ``tmp``; its store is ``db`` (a PostgreSQL URL, say), else tmp/index.db."""
    vault = tmp / "vault"
    shutil.copytree(NORTHWIND, vault, ignore=shutil.ignore_patterns(".notewell"))
    rt = open_runtime(str(vault), db or str(tmp / "index.db"))
    rt.indexing.sync()
    administration = rt.administration
    for email, role, handle in (("admin@northwind.test", "admin", "admin"), ("staff@northwind.test", "staff", "staff"),
                                ("alice@northwind.test", "member", "alice"), ("bob@northwind.test", "member", "bob")):
        administration.add_user(LOCAL_OWNER, email, role, handle=handle)
    administration.grant(LOCAL_OWNER, "alice@northwind.test", "northwind-advisory", "read")
    rt.indexing.sync()  # the homes' new (empty) folders

    def mint(email: str, scopes: str, project: str | None = None) -> str:
        return administration.mint_token(LOCAL_OWNER, email, scopes.split(","), project_id=project).secret

    people = ("admin", "staff", "alice", "bob")
    tokens = {handle: mint(f"{handle}@northwind.test", "knowledge:read") for handle in people}
    tokens["alice_project"] = mint("alice@northwind.test", "knowledge:read", "northwind-advisory")
    tokens["no_knowledge"] = mint("alice@northwind.test", "memory:read")
    tokens["revoked"] = mint("alice@northwind.test", "knowledge:read")
    revoked_id = tokens["revoked"].split("_")[1]
    administration.revoke_token(LOCAL_OWNER, revoked_id)
    return World(rt, tokens)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerThread:
    """uvicorn serving an ASGI app on a free localhost port, in a background thread, configured as `notewell
    serve` configures it (its protocol, timeouts and limits): the tests talk to the server users get."""

    def __init__(self, app: ASGIApp) -> None:
        self.port = free_port()
        self.server = uvicorn.Server(server_config(app, "127.0.0.1", self.port))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test MCP server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=2)
        if self.thread.is_alive():  # a stream still open (a client that never hangs up): as a second Ctrl-C does
            self.server.force_exit = True
            self.thread.join(timeout=10)


@contextmanager
def served_vault(vault: Path, db: str, *, watch: bool = True) -> Iterator[str]:
    """The app `notewell serve` runs over ``vault`` (watching it unless told not to), on a thread of this
    process; its MCP URL."""
    rt = open_runtime(str(vault), db)
    try:
        with ServerThread(build_app(rt, ServeOptions(choose(None), watch=watch))) as server:
            yield server.url
    finally:
        rt.close()


def embedded(rt: Runtime, seconds: float = 60.0) -> None:
    """Wait until the served app's embedding runner has emptied the queue (a condition, not a clock): a
    test that compares two answers of a tolerant tool asks both after the vectors landed."""
    deadline = time.monotonic() + seconds
    while rt.meaning.state().queued:
        if time.monotonic() > deadline:
            raise AssertionError(f"the embedding queue did not empty: {rt.meaning.state()}")
        time.sleep(0.05)


def serve_world(world: World, toolsets: list[str] | None = None) -> ServerThread:
    return ServerThread(build_app(world.runtime, ServeOptions(choose(toolsets))))


@asynccontextmanager
async def connect(url: str, token: str | None, mode: str = LEGACY) -> AsyncIterator[Client]:
    """The SDK's own client over Streamable HTTP, sending the token as a bearer header."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with create_mcp_http_client(headers=headers) as http, \
            Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


async def call(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A tool's answer, which must not be an error, its text and structured forms the same."""
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content  # type: ignore[no-any-return]
