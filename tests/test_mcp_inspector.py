"""An independent client against `notewell serve`: the MCP Inspector's CLI (npm @modelcontextprotocol/inspector).

The Inspector is installed project-locally from tests/js/package-lock.json (.ci/run runs `npm ci` there).
The server is the real entry point, `python -m notewell serve`, in a subprocess on a free port.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcp_world import World, free_port
from notewell.access.principal import LOCAL_OWNER

INSPECTOR = Path(__file__).resolve().parent / "js" / "node_modules" / ".bin" / "mcp-inspector"


@pytest.fixture(scope="module")
def served(mcp_world: World) -> Iterator[str]:
    if shutil.which("node") is None or not INSPECTOR.exists():
        reason = "the MCP Inspector is not installed: run `npm install --prefix tests/js` (.ci/run does)"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"{reason}; under CI a missing client is a failure, not a skip", pytrace=False)
        pytest.skip(reason)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}
    process = subprocess.Popen([sys.executable, "-m", "notewell", "serve", "--port", str(port), "--vault",
                                str(mcp_world.vault), "--db", mcp_world.runtime.settings.db],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"notewell serve did not start: {process.stderr.read() if process.stderr else ''}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=20)


def run_inspector(url: str, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(INSPECTOR), "--cli", url, "--transport", "http", "--header",
                           f"Authorization: Bearer {token}", *args],
                          capture_output=True, text=True, timeout=120, check=False, cwd=INSPECTOR.parents[2])
    assert done.returncode == 0, done.stderr
    return done


def inspector(url: str, token: str, *args: str) -> dict[str, object]:
    return json.loads(run_inspector(url, token, *args).stdout)  # type: ignore[no-any-return]


def test_every_tool_schema_passes_the_inspector_without_a_warning(served: str, mcp_world: World) -> None:
    """The Inspector checks each tool's input and output schema for portability (--strict lists each issue)."""
    every_scope = mcp_world.runtime.administration.mint_token(
        LOCAL_OWNER, "staff@northwind.test", ["knowledge:read", "memory:read", "memory:write", "sessions"]).secret
    done = run_inspector(served, every_scope, "--method", "tools/list", "--strict")
    listed = json.loads(done.stdout)["tools"]
    assert len(listed) >= 26  # knowledge 8, notes 1, memory 5, brain 12
    assert "Warning" not in done.stderr and "Error" not in done.stderr, done.stderr


def test_inspector_cli_searches_the_running_server(served: str, mcp_world: World) -> None:
    answer = inspector(served, mcp_world.tokens["alice"], "--method", "tools/call", "--tool-name", "searchKnowledge",
                       "--tool-arg", "query=maximum discount", "--tool-arg", "project=northwind-advisory")
    assert answer["isError"] is False
    found = answer["structuredContent"]
    assert [(r["path"], r["line"]) for r in found["results"]] == [  # type: ignore[index]
        ("northwind-advisory/2026-q2-pricing-review.md", 20),
        ("northwind-advisory/meetings/meeting-2026-08-14-pricing.md", 9),
        ("northwind-advisory/pricing-policy.md", 24),
    ]
    assert json.loads(answer["content"][0]["text"]) == found  # type: ignore[index]


def test_inspector_cli_lists_this_tokens_tools(served: str, mcp_world: World) -> None:
    alice = inspector(served, mcp_world.tokens["alice"], "--method", "tools/list")
    names = [t["name"] for t in alice["tools"]]  # type: ignore[index]
    assert names[:11] == ["listProjects", "listDocs", "readDoc", "searchKnowledge", "listBrains", "getBrain",
                          "searchBrain", "getLinks", "buildContext", "getDocs", "search_notes"]
    notes = next(t for t in alice["tools"] if t["name"] == "search_notes")  # type: ignore[index]
    assert [r["const"] for r in notes["inputSchema"]["properties"]["repo"]["anyOf"]] == ["northwind-advisory",
                                                                                         "~alice"]
