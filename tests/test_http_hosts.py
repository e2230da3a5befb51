"""Every door checks the Host header (issue 22, item 7: DNS rebinding against a loopback server): REST, the web
pages, /install.sh and /mcp answer a foreign Host with the same 421, and localhost or an --allowed-host as
usual; /healthz answers any Host. The whole application over real HTTP (uvicorn), as `notewell serve` runs it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from mcp_world import ServerThread, World
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.http.hosts import MISDIRECTED, AllowedHosts
from notewell.mcp.registry import choose

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
FOREIGN = "rebind.attacker.example:8765"
ALLOWED = "notes.example.com"


@pytest.fixture(scope="module")
def base(mcp_world: World) -> Iterator[str]:
    options = ServeOptions(choose(None), allowed_hosts=[ALLOWED])
    with ServerThread(build_app(mcp_world.runtime, options)) as server:
        yield f"http://127.0.0.1:{server.port}"


def _doors(token: str) -> list[tuple[str, str, dict[str, object]]]:
    bearer = {"Authorization": f"Bearer {token}"}
    return [
        ("GET", "/api/v1/me", {"headers": bearer}),
        ("POST", "/api/v1/memories", {"headers": bearer, "json": {"content": "rebound"}}),
        ("GET", "/signin", {}),
        ("POST", "/signin", {"data": {"email": "alice@northwind.test", "password": "x"}}),
        ("GET", "/", {}),
        ("GET", "/install.sh", {}),
        ("POST", "/mcp", {"headers": {**ACCEPT, **bearer}, "json": INIT}),
    ]


def test_every_door_but_healthz_answers_a_foreign_host_421(base: str, mcp_world: World) -> None:
    for method, path, options in _doors(mcp_world.tokens["staff"]):
        headers = {**options.pop("headers", {}), "Host": FOREIGN}  # type: ignore[dict-item]
        answer = httpx.request(method, base + path, headers=headers, timeout=10, **options)  # type: ignore[arg-type]
        assert answer.status_code == 421, (method, path, answer.status_code, answer.text[:200])
        assert answer.content == MISDIRECTED and FOREIGN not in answer.text, (method, path)
    health = httpx.get(base + "/healthz", headers={"Host": FOREIGN}, timeout=10)
    assert health.status_code == 200 and health.json()["status"] == "ok"


def test_localhost_and_an_allowed_host_are_answered(base: str, mcp_world: World) -> None:
    port = base.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", ALLOWED, f"{ALLOWED}:443"):
        for method, path, options in _doors(mcp_world.tokens["staff"]):
            headers = {**options.pop("headers", {}), "Host": host}  # type: ignore[dict-item]
            answer = httpx.request(method, base + path, headers=headers, timeout=10, **options)  # type: ignore[arg-type]
            assert answer.status_code != 421, (host, method, path, answer.text[:200])
    script = httpx.get(base + "/install.sh", headers={"Host": ALLOWED}, timeout=10)
    assert script.status_code == 200 and f"http://{ALLOWED}" in script.text


def test_the_allowed_names() -> None:
    hosts = AllowedHosts(["notes.example.com", "10.0.0.5:8443"])
    assert all(hosts.allows(h) for h in ("localhost", "localhost:8765", "127.0.0.1:1", "[::1]", "[::1]:8765",
                                         "notes.example.com", "notes.example.com:8443", "10.0.0.5:8443"))
    assert not any(hosts.allows(h) for h in (None, "", "10.0.0.5", "10.0.0.5:80", "evil.com", "localhost.evil.com",
                                             "notes.example.com.evil.com", "127.0.0.1.nip.io:8765", "[::2]:8765"))
    assert AllowedHosts(["*"]).allows("anything.example")
