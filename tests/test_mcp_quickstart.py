"""notewell quickstart (make serve): one local admin, one kept token, the printed client set-up."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from typer.testing import CliRunner

from mcp_world import NORTHWIND
from notewell.access.principal import LOCAL_OWNER
from notewell.cli.quickstart_cmd import ADMIN_EMAIL, TOKEN_FILE, client_setup, ensure_token, web_sign_in
from notewell.runtime import open_runtime


def test_the_token_is_kept_0600_reused_and_replaced_once_revoked(tmp_path: Path) -> None:
    rt = open_runtime(str(tmp_path), str(tmp_path / "index.db"))
    try:
        token_file = tmp_path / ".notewell" / TOKEN_FILE
        first, minted = ensure_token(rt.access, token_file)
        assert minted and token_file.read_text().strip() == first
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        again, minted_again = ensure_token(rt.access, token_file)
        assert (again, minted_again) == (first, False)
        assert rt.access.authenticate(first).email == ADMIN_EMAIL
        rt.access.revoke_token(LOCAL_OWNER, first.split("_")[1])
        replaced, minted_new = ensure_token(rt.access, token_file)
        assert minted_new and replaced != first and token_file.read_text().strip() == replaced
        assert len(rt.access.users(LOCAL_OWNER)) == 1
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


def test_makefile_serve_runs_quickstart_on_the_example_vault() -> None:
    makefile = (NORTHWIND.parent.parent / "Makefile").read_text()
    serve = makefile[makefile.index("\nserve:"):].split("\n\n")[0]
    assert "notewell quickstart --vault $(VAULT)" in serve


def test_quickstart_help_names_what_it_does() -> None:
    from notewell.cli.app import app

    result = CliRunner().invoke(app, ["quickstart", "--help"])
    assert result.exit_code == 0 and "token" in result.stdout


def test_quickstart_prints_a_working_sign_in_link_for_the_local_admin(tmp_path: Path) -> None:
    rt = open_runtime(str(tmp_path), str(tmp_path / "index.db"))
    try:
        ensure_token(rt.access, tmp_path / ".notewell" / TOKEN_FILE)
        text = web_sign_in(rt.sign_in, "http://127.0.0.1:8765")
        link = next(word for word in text.split() if "/signin/link/" in word)
        assert link.startswith("http://127.0.0.1:8765/signin/link/nwl_")
        assert f"notewell user passwd {ADMIN_EMAIL}" in text
        assert rt.sign_in.sign_in_with_link(link.rsplit("/", 1)[1], "127.0.0.1").email == ADMIN_EMAIL
    finally:
        rt.close()
