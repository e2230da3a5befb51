"""notewell quickstart (make serve): one local admin, one kept token, the printed client set-up."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

from conftest import run_cli
from mcp_world import NORTHWIND, connect, free_port
from notewell.access.principal import LOCAL_OWNER
from notewell.cli.quickstart_cmd import (
    ADMIN_EMAIL,
    INSPECTOR_VERSION,
    TOKEN_FILE,
    client_setup,
    ensure_token,
    web_sign_in,
)
from notewell.runtime import open_runtime


def test_the_token_is_kept_0600_reused_and_replaced_once_revoked(tmp_path: Path) -> None:
    rt = open_runtime(str(tmp_path), str(tmp_path / "index.db"))
    try:
        token_file = tmp_path / ".notewell" / TOKEN_FILE
        first, minted = ensure_token(rt, token_file)
        assert minted and token_file.read_text().strip() == first
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        again, minted_again = ensure_token(rt, token_file)
        assert (again, minted_again) == (first, False)
        assert rt.authentication.authenticate(first).email == ADMIN_EMAIL
        rt.administration.revoke_token(LOCAL_OWNER, first.split("_")[1])
        replaced, minted_new = ensure_token(rt, token_file)
        assert minted_new and replaced != first and token_file.read_text().strip() == replaced
        assert len(rt.administration.users(LOCAL_OWNER)) == 1
        assert not (tmp_path / "~admin").exists()  # no home folder is made in the vault
    finally:
        rt.close()


def test_client_setup_is_ready_to_paste() -> None:
    text = client_setup("http://127.0.0.1:8765/mcp", "nw_secret")
    assert ('claude mcp add --transport http notewell http://127.0.0.1:8765/mcp '
            '--header "Authorization: Bearer nw_secret"') in text
    block = text[text.index("{"): text.rindex("}") + 1]
    assert json.loads(block) == {"mcpServers": {"notewell": {
        "type": "http", "url": "http://127.0.0.1:8765/mcp", "headers": {"Authorization": "Bearer nw_secret"}}}}


def test_make_serve_serves_the_vault_it_is_given(tmp_path: Path) -> None:
    """The command `make serve` runs (its last recipe line, with VAULT and PORT set), run for real: it
    indexes the vault, prints a token, and answers an MCP search with it on that port."""
    repo = NORTHWIND.parent.parent
    port = free_port()
    vault = tmp_path / "vault"
    shutil.copytree(NORTHWIND, vault, ignore=shutil.ignore_patterns(".notewell"))
    dry = subprocess.run(["make", "-n", "-s", "serve", f"VAULT={vault}", f"PORT={port}"], cwd=repo,
                         capture_output=True, text=True, timeout=60, check=True)
    command = shlex.split(dry.stdout.strip().splitlines()[-1])
    assert Path(command[0]).name == "notewell"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")},
           "XDG_STATE_HOME": str(tmp_path / "state")}
    served = subprocess.Popen([sys.executable, "-m", "notewell", *command[1:]], cwd=repo, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        printed = ""
        assert served.stdout is not None
        deadline = time.monotonic() + 120
        while "op=serve.listening" not in printed or not _healthy(port):
            assert served.poll() is None and time.monotonic() < deadline, printed
            line = served.stdout.readline()
            printed += line
        token = re.search(r"Bearer (nw_[A-Za-z0-9_-]+)", printed)
        assert token is not None
        found = anyio.run(_search, f"http://127.0.0.1:{port}/mcp", token.group(1))
        assert [r["path"] for r in found["results"]] == [
            "northwind-advisory/2026-q2-pricing-review.md", "northwind-advisory/meetings/meeting-2026-08-14-pricing.md",
            "northwind-advisory/pricing-policy.md"]
        # the printed REST command, run as printed, answers who the token is
        curl = next(line for line in printed.splitlines() if line.strip().startswith("curl "))
        me = subprocess.run([*shlex.split(curl), "-sS", "--fail"], capture_output=True, text=True, timeout=30)
        assert me.returncode == 0 and json.loads(me.stdout)["email"] == "admin@localhost", me.stderr
        rest = re.search(r" rest=(http://\S+/api/v1) ", printed)  # the serving line names the REST API
        assert rest is not None and httpx.get(rest.group(1) + "/openapi.json", timeout=10).status_code == 200
    finally:
        served.terminate()
        served.wait(timeout=30)


def test_make_serve_installs_the_product_only() -> None:
    makefile = (NORTHWIND.parent.parent / "Makefile").read_text()
    serve = makefile[makefile.index("\nserve:"):].split("\n\n")[0]
    product = makefile[makefile.index("\n$(STAMP):"):].split("\n\n")[0]
    assert serve.split("\n")[1].startswith("serve: $(STAMP)") and ".[dev]" not in product  # no test tools


def test_the_printed_inspector_command_pins_the_release_the_tests_run() -> None:
    package = json.loads((NORTHWIND.parent.parent / "tests" / "js" / "package.json").read_text())
    pinned = package["dependencies"]["@modelcontextprotocol/inspector"]
    assert pinned == INSPECTOR_VERSION
    assert f"npx -y @modelcontextprotocol/inspector@{pinned} --cli " in client_setup("http://h/mcp", "nw_x")


async def _search(url: str, token: str) -> dict[str, Any]:
    async with connect(url, token) as client:
        result = await client.call_tool("searchKnowledge", {"query": "maximum discount"})
        assert not result.is_error
        return dict(result.structured_content or {})


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def test_quickstart_refuses_a_bad_port_in_one_line(tmp_path: Path) -> None:
    result = run_cli("quickstart", "--vault", str(tmp_path), "--port", "70000")
    assert result.exit_code != 0 and "--port" in result.output and "Traceback" not in result.output


def test_quickstart_prints_a_working_sign_in_link_for_the_local_admin(tmp_path: Path) -> None:
    rt = open_runtime(str(tmp_path), str(tmp_path / "index.db"))
    try:
        ensure_token(rt, tmp_path / ".notewell" / TOKEN_FILE)
        text = web_sign_in(rt.sign_in, "http://127.0.0.1:8765")
        link = next(word for word in text.split() if "/signin/link/" in word)
        assert link.startswith("http://127.0.0.1:8765/signin/link/nwl_")
        assert f"notewell user passwd {ADMIN_EMAIL}" in text
        assert rt.sign_in.sign_in_with_link(link.rsplit("/", 1)[1], "127.0.0.1").email == ADMIN_EMAIL
    finally:
        rt.close()
