"""GET /install.sh: the installer, run by bash against the running server, as the wizard's one-liner runs it.

A good token passes the smoke test (initialize and one read-only tool call); a bad one fails with the 401
diagnosis; a server that is not there fails with the connection diagnosis. The client CLIs are not on PATH
here (PATH holds only what the script needs), so the script says how to register by hand and goes on.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from mcp_world import World, free_port
from notewell.access.principal import LOCAL_OWNER
from notewell.access.token_secrets import mint_secret

TOOLS = ("bash", "curl", "grep", "awk", "tr", "mktemp", "head", "rm", "cat")


@pytest.fixture(scope="module")
def tool_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PATH with only the tools the script uses (so no claude, code or codex)."""
    folder = tmp_path_factory.mktemp("bin")
    for tool in TOOLS:
        found = shutil.which(tool)
        if found is None:
            pytest.fail(f"{tool} is missing (.ci/run installs curl)")
        (folder / tool).symlink_to(found)
    return str(folder)


def run_one_liner(web_url: str, client: str, token: str, path: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The wizard's command: curl -fsSL '<base>/install.sh?client=...' | NOTEWELL_TOKEN=... bash"""
    script = httpx.get(f"{web_url}/install.sh", params={"client": client}, timeout=10)
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/x-shellscript")
    assert not token or token not in script.text
    env = {"PATH": path, "HOME": str(tmp_path), "NOTEWELL_TOKEN": token}
    return subprocess.run(["bash"], input=script.text, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_a_good_token_passes_the_smoke_test(web_world: World, web_url: str, tool_path: str, tmp_path: Path) -> None:
    token = web_world.runtime.administration.mint_token(LOCAL_OWNER, "bob@northwind.test", ["knowledge:read"]).secret
    done = run_one_liner(web_url, "claude-code", token, tool_path, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "claude (Claude Code) is not on PATH" in done.stdout
    assert f"claude mcp add --transport http notewell {web_url}/mcp" in done.stdout
    assert f"Smoke test passed: initialize and listProjects answered at {web_url}/mcp." in done.stdout
    memory_only = web_world.runtime.administration.mint_token(LOCAL_OWNER, "bob@northwind.test", ["memory:read"]).secret
    done = run_one_liner(web_url, "generic", memory_only, tool_path, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Smoke test passed: initialize and search_memory answered" in done.stdout


def test_a_bad_token_fails_with_the_401_diagnosis(web_url: str, tool_path: str, tmp_path: Path) -> None:
    unknown = mint_secret().secret  # well formed, never stored
    done = run_one_liner(web_url, "claude-code", unknown, tool_path, tmp_path)
    assert done.returncode == 1
    assert "Smoke test passed" not in done.stdout
    assert done.stderr.strip() == (f"notewell install: initialize: 401 Unauthorized: the token is not valid (unknown, "
                                   f"expired or revoked, or its user is deactivated). Mint a new one at "
                                   f"{web_url}/settings/tokens.")
    malformed = run_one_liner(web_url, "codex", "not-a-token", tool_path, tmp_path)
    assert malformed.returncode == 1 and "does not look like a Notewell token" in malformed.stderr
    missing = run_one_liner(web_url, "vscode", "", tool_path, tmp_path)
    assert missing.returncode == 1 and "NOTEWELL_TOKEN is not set" in missing.stderr


def test_no_server_fails_with_the_connection_diagnosis(web_url: str, tool_path: str, tmp_path: Path) -> None:
    script = httpx.get(f"{web_url}/install.sh", params={"client": "generic"}, timeout=10).text
    nowhere = f"http://127.0.0.1:{free_port()}"
    script = script.replace(f"BASE={web_url}", f"BASE={nowhere}", 1)
    env = {"PATH": tool_path, "HOME": str(tmp_path), "NOTEWELL_TOKEN": mint_secret().secret}
    done = subprocess.run(["bash"], input=script, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert f"initialize: cannot connect to {nowhere}/mcp" in done.stderr
    assert "Is the server running, and is this its address?" in done.stderr


def test_an_unknown_client_is_refused(web_url: str) -> None:
    answer = httpx.get(f"{web_url}/install.sh", params={"client": "emacs"}, timeout=10)
    assert answer.status_code == 400
    assert answer.text.startswith("client: 'emacs' is not a client; choose one of claude-code, cursor")
