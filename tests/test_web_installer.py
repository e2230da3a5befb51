"""GET /install.sh: the installer, run by bash against the running server, as the wizard's one-liner runs it.

A good token passes the smoke test (initialize and one read-only tool call: brain_get_user_style when the
token has the brain tools); a bad one fails with the 401 diagnosis; a server that is not there fails with the
connection diagnosis. A brain token then pings: one real session per install, opened with the client's
clientType, logged and closed. The client CLIs are not on PATH here (PATH holds only what the script needs),
so the script prints the command to run by hand (with the token in it: it must work pasted into a shell that
has no NOTEWELL_TOKEN), says that it registered nothing, and goes on; a stand-in ``claude`` shows the other way.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from mcp_world import World, free_port
from notewell import __version__
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER
from notewell.access.token_secrets import mint_secret
from notewell.web.installer import CLIENT_TYPES

TOOLS = ("bash", "curl", "grep", "awk", "tr", "mktemp", "head", "rm", "cat", "cut", "uname")
BRAIN = ["knowledge:read", "memory:read", "sessions"]
FIRST_PROMPT = ("  Remember this for every session: in this team, a pull request needs a test that fails without "
                "its fix.")
# A stand-in for Claude Code's CLI: prints its version, and records each command line it is given.
FAKE_CLAUDE = """#!/bin/bash
if [ "$1" = --version ]; then echo '2.0.14 (Claude Code)'; exit 0; fi
printf '%s\\n' "$@" > "$HOME/claude-args-$1-$2"
"""


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


def fake_claude(folder: Path) -> Path:
    (folder / "claude").write_text(FAKE_CLAUDE, encoding="utf-8")
    (folder / "claude").chmod(0o755)
    return folder


def test_a_good_token_passes_the_smoke_test(web_world: World, web_url: str, tool_path: str, tmp_path: Path) -> None:
    token = web_world.runtime.administration.mint_token(LOCAL_OWNER, "bob@northwind.test", ["knowledge:read"]).secret
    done = run_one_liner(web_url, "claude-code", token, tool_path, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "claude (Claude Code) is not on PATH" in done.stdout
    assert f"Smoke test passed: initialize and listProjects answered at {web_url}/mcp." in done.stdout
    # it says what it did not do, last
    assert done.stdout.rstrip().endswith("Not done: claude (Claude Code) is not on PATH, so nothing was registered "
                                         "with it. The smoke test ran against the server directly.")
    # the printed command carries the token itself: pasted into a shell without NOTEWELL_TOKEN, it still sends it
    printed = next(line.strip() for line in done.stdout.splitlines() if line.strip().startswith("claude mcp add"))
    assert printed == (f"claude mcp add --transport http --scope user notewell {web_url}/mcp "
                       f"--header 'Authorization: Bearer {token}'")
    home = tmp_path / "paste"
    home.mkdir()
    shell = {"PATH": f"{fake_claude(home)}:{tool_path}", "HOME": str(home)}  # no NOTEWELL_TOKEN in it
    pasted = subprocess.run(["bash", "-c", printed], env=shell, capture_output=True, text=True, timeout=30, check=False)
    assert pasted.returncode == 0, pasted.stderr
    sent = (home / "claude-args-mcp-add").read_text().splitlines()
    assert sent[-2:] == ["--header", f"Authorization: Bearer {token}"]
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


@pytest.mark.parametrize("client", [c for c in CLIENT_TYPES if c != "generic"])
def test_a_brain_token_smoke_tests_with_the_user_style_then_pings(web_world: World, web_url: str, tool_path: str,
                                                                   tmp_path: Path, client: str) -> None:
    """The External Brain's installer sequence: initialize + brain_get_user_style, then brain_start_session
    (this client's clientType, "brain installer ping v2") -> brain_log_event -> brain_report_session_outcome,
    then a first prompt to paste; the token's last tool call is the close."""
    rt = web_world.runtime
    minted = rt.administration.mint_token(LOCAL_OWNER, "bob@northwind.test", BRAIN, name=f"install {client}")
    done = run_one_liner(web_url, client, minted.secret, tool_path, tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Smoke test passed: initialize and brain_get_user_style answered at {web_url}/mcp." in done.stdout
    found = re.search(r"Install ping: session (\S+) opened, logged and closed \(it marks this install\)\.", done.stdout)
    assert found, done.stdout
    assert FIRST_PROMPT in done.stdout.splitlines()
    bob = user_principal(rt.administration.user(LOCAL_OWNER, "bob@northwind.test"))
    session = rt.brain.session(bob, found.group(1))
    assert (session.client_type, session.prompt, session.success) == (CLIENT_TYPES[client], "brain installer ping v2",
                                                                      True)
    assert session.ended_at is not None
    [event] = rt.brain.events(bob, session.id)[0]
    assert event.event_type == "installer_ping"
    assert event.payload["installer_version"] == __version__ and event.payload["claude_version"] == ""
    assert event.payload["os"] == " ".join(subprocess.run(["uname", "-sm"], capture_output=True, text=True,
                                                         check=True).stdout.split())
    assert rt.authentication.tool_calls.flush()
    token = rt.store.identity.token(minted.token.id)
    assert token is not None and token.last_tool == "brain_report_session_outcome"


def test_with_claude_on_path_it_registers_and_reports_its_version(web_world: World, web_url: str, tool_path: str,
                                                                  tmp_path: Path) -> None:
    rt = web_world.runtime
    minted = rt.administration.mint_token(LOCAL_OWNER, "bob@northwind.test", BRAIN, name="with claude")
    done = run_one_liner(web_url, "claude-code", minted.secret, f"{fake_claude(tmp_path)}:{tool_path}", tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Registered {web_url}/mcp with Claude Code as 'notewell'." in done.stdout
    assert "Done: registered with the client, and the smoke test passed." in done.stdout
    assert "Not done" not in done.stdout
    args = (tmp_path / "claude-args-mcp-add").read_text().splitlines()
    assert args == ["mcp", "add", "--transport", "http", "--scope", "user", "notewell", f"{web_url}/mcp", "--header",
                    f"Authorization: Bearer {minted.secret}"]
    session_id = re.search(r"Install ping: session (\S+) opened", done.stdout).group(1)  # type: ignore[union-attr]
    bob = user_principal(rt.administration.user(LOCAL_OWNER, "bob@northwind.test"))
    [event] = rt.brain.events(bob, session_id)[0]
    assert event.payload["claude_version"] == "2.0.14 (Claude Code)"
