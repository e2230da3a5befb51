"""notewell quickstart: index a vault, make sure a local admin and a token exist, print the client set-up, serve.

This is what `make serve` runs. The token's secret is kept outside the vault, where no vault scan or
symlink in it can reach it: $XDG_STATE_HOME/notewell/quickstart/<vault id>/token (~/.local/state when
XDG_STATE_HOME is unset; the folder 0700, the file 0600), so a second run reuses it; the store itself
keeps only the token's hash. A kept secret that no longer authenticates (revoked, or the store was
rebuilt) is replaced by a new one. A secret left inside the vault by an older version is deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Annotated

import typer

from notewell.access.principal import LOCAL_OWNER
from notewell.access.sign_in import LINK_LIFETIME, SignInService
from notewell.cli.app import DbOpt, PortOpt, VaultOpt, app, console, runtime
from notewell.cli.serve_cmd import DEFAULT_HOST, DEFAULT_PORT, bind_or_fail, serve_command
from notewell.config import INDEX_DIR_NAME
from notewell.errors import NotFound, Unauthenticated
from notewell.runtime import Runtime
from notewell.web.clients import INSPECTOR_VERSION

ADMIN_EMAIL = "admin@localhost"
TOKEN_FILE = "token"
OLD_TOKEN_FILE = "quickstart-token"  # where older versions kept it: <vault>/.notewell/quickstart-token
TOKEN_SCOPES = ("knowledge:read", "knowledge:write", "memory:read", "memory:write", "sessions")


def quickstart_token_file(vault: Path) -> Path:
    """Where quickstart keeps the token for ``vault``: one folder per vault, under the state home."""
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    vault_id = hashlib.sha256(str(vault.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return state / "notewell" / "quickstart" / vault_id / TOKEN_FILE


def _read_secret(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _write_secret(path: Path, secret: str) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secret + "\n")
    os.chmod(path, 0o600)


def _move_old_secret(old: Path, token_file: Path) -> None:
    """Take a secret an older version kept inside the vault out of it."""
    kept = _read_secret(old)
    if kept is not None and _read_secret(token_file) is None:
        _write_secret(token_file, kept)
    old.unlink(missing_ok=True)


def ensure_token(rt: Runtime, token_file: Path) -> tuple[str, bool]:
    """(secret, minted now): the kept token if it still works, else a new one for the local admin."""
    kept = _read_secret(token_file)
    if kept is not None:
        try:
            rt.authentication.authenticate(kept)
            return kept, False
        except Unauthenticated:
            pass
    try:
        rt.administration.user(LOCAL_OWNER, ADMIN_EMAIL)
    except NotFound:
        # No ~admin folder appears in the vault (the example vault stays as committed).
        rt.administration.add_user(LOCAL_OWNER, ADMIN_EMAIL, "admin", name="Local admin", handle="admin",
                                   home_folder=False)
    minted = rt.administration.mint_token(LOCAL_OWNER, ADMIN_EMAIL, TOKEN_SCOPES, name="quickstart")
    _write_secret(token_file, minted.secret)
    return minted.secret, True


def client_setup(url: str, secret: str) -> str:
    entry = {"mcpServers": {"notewell": {"type": "http", "url": url,
                                         "headers": {"Authorization": f"Bearer {secret}"}}}}
    return "\n".join([
        "Claude Code:",
        f'  claude mcp add --transport http notewell {url} --header "Authorization: Bearer {secret}"',
        "",
        ".mcp.json (Claude Code, Cursor, VS Code and other clients that read it):",
        *("  " + line for line in json.dumps(entry, indent=2).splitlines()),
        "",
        "MCP Inspector:",
        f'  npx -y @modelcontextprotocol/inspector@{INSPECTOR_VERSION} --cli {url} --transport http '
        f'--header "Authorization: Bearer {secret}" --method tools/list',
        "",
        f"REST API (scripts, CI; reference page {url.removesuffix('/mcp')}/api/v1/docs, docs/api.md):",
        f'  curl -H "Authorization: Bearer {secret}" {url.removesuffix("/mcp")}/api/v1/me',
    ])


def web_sign_in(sign_in: SignInService, base_url: str) -> str:
    """The lines that let the local admin into the web pages: a fresh one-time sign-in link (15 minutes)."""
    link = sign_in.make_link(LOCAL_OWNER, ADMIN_EMAIL, base_url)
    return "\n".join([
        f"Web pages: {base_url}/ (mint more tokens at {base_url}/settings/tokens). Sign in as {ADMIN_EMAIL} with",
        f"  {link.url}",
        f"(works once, for {int(LINK_LIFETIME.total_seconds() // 60)} minutes; for a password: "
        f"notewell user passwd {ADMIN_EMAIL})",
    ])


@app.command("quickstart")
def quickstart_command(
    host: Annotated[str, typer.Option("--host", help="The address to listen on.")] = DEFAULT_HOST,
    port: PortOpt = DEFAULT_PORT,
    vault: VaultOpt = None,
    db: DbOpt = None,
) -> None:
    """Index the vault, make sure a local admin and a token exist, print the client set-up, and serve over HTTP."""
    bind_or_fail(host, port).close()  # a port in use is said before anything else
    with runtime(vault, db) as rt:
        report = rt.indexing.sync()
        token_file = quickstart_token_file(rt.settings.vault)
        _move_old_secret(rt.settings.vault / INDEX_DIR_NAME / OLD_TOKEN_FILE, token_file)
        secret, minted = ensure_token(rt, token_file)
        vault_path = rt.settings.vault
        base_url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
        web = web_sign_in(rt.sign_in, base_url)
    url = f"{base_url}/mcp"
    console.print(report.summary(), highlight=False, markup=False)
    state = "new token" if minted else "token kept from the last run"
    console.print(f"\nNotewell serves {vault_path} at {url}\nAdmin {ADMIN_EMAIL}, {state} "
                  f"({', '.join(TOKEN_SCOPES)}), saved in {token_file} (mode 0600):\n\n  {secret}\n",
                  highlight=False, markup=False, soft_wrap=True)
    console.print(client_setup(url, secret) + "\n", highlight=False, markup=False, soft_wrap=True)
    console.print(web + "\n", highlight=False, markup=False, soft_wrap=True)
    serve_command(host=host, port=port, allowed_host=None, toolsets=None, stdio=False, watch=True, log_level=None,
                  secure_cookies=False, vault=str(vault_path), db=db)
