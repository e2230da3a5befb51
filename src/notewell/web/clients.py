"""The install wizard: for each client, the exact command or config file that connects it to this server.

Each client is a tab; each step is one copy-ready block, for one operating system when the step differs by
OS. The token appears in the commands because the person minting it is the one who runs them; the
installer script never carries it (it is passed as NOTEWELL_TOKEN).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

SERVER_NAME = "notewell"
# The MCP Inspector release the printed commands pin (npx would otherwise pick whatever it has cached, and
# older releases lack --header); the test suite runs this same release (tests/js/package.json).
INSPECTOR_VERSION = "2.12.0"


@dataclass(frozen=True)
class Step:
    title: str
    text: str  # the command or the file's content
    os: str = ""  # "" for every OS; otherwise "macOS / Linux" or "Windows"


@dataclass(frozen=True)
class ClientSetup:
    id: str  # also the installer's ?client= value
    name: str
    steps: tuple[Step, ...]
    note: str = ""


def notewell_executable(argv0: str | None = None) -> tuple[str, ...]:
    """How this machine starts Notewell, as an absolute command (for a client that starts it, such as Claude
    Desktop, whose PATH has no virtualenv in it): the running ``notewell`` script (``sys.argv[0]``), else
    ``notewell`` on PATH or beside this Python, else this Python with ``-m notewell``."""
    first = Path(argv0 if argv0 is not None else sys.argv[0])
    if first.name == "notewell" and first.is_file() and os.access(first, os.X_OK):
        return (str(first.absolute()),)
    beside = Path(sys.executable).parent / "notewell"
    for found in (shutil.which("notewell"), str(beside) if beside.is_file() else None):
        if found and os.access(found, os.X_OK):
            return (str(Path(found).absolute()),)
    return (str(Path(sys.executable).absolute()), "-m", "notewell")


def _json(data: object) -> str:
    return json.dumps(data, indent=2)


def installer_command(base_url: str, client: str, secret: str) -> str:
    url = f"{base_url}/install.sh?client={client}"
    return f"curl -fsSL {shlex.quote(url)} | NOTEWELL_TOKEN={shlex.quote(secret)} bash"


def claude_code_command(mcp_url: str, secret: str) -> str:
    return (f"claude mcp add --transport http --scope user {SERVER_NAME} {mcp_url} "
            f"--header {shlex.quote('Authorization: Bearer ' + secret)}")


def inspector_command(mcp_url: str, secret: str) -> str:
    """The MCP Inspector's CLI, pinned, listing the tools (a refused token shows as an OAuth prompt there: see
    docs/web.md for the 401 the server sends)."""
    return (f"npx -y @modelcontextprotocol/inspector@{INSPECTOR_VERSION} --cli {mcp_url} --transport http "
            f"--header {shlex.quote('Authorization: Bearer ' + secret)} --method tools/list")


def client_setups(base_url: str, secret: str, store_url: str, notewell: tuple[str, ...]) -> list[ClientSetup]:
    """Every client's set-up for a server reached at ``base_url`` (no trailing slash) and this token;
    ``notewell`` is how this machine starts Notewell (notewell_executable())."""
    mcp_url = f"{base_url}/mcp"
    bearer = {"Authorization": f"Bearer {secret}"}
    http_entry = {"type": "http", "url": mcp_url, "headers": bearer}
    stdio_entry = {"command": notewell[0], "args": [*notewell[1:], "serve", "--stdio", "--db", store_url],
                   "env": {"NOTEWELL_TOKEN": secret}}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "curl", "version": "1"}}}
    return [
        ClientSetup("claude-code", "Claude Code", (
            Step("Install and smoke-test in one line", installer_command(base_url, "claude-code", secret),
                 "macOS / Linux"),
            Step("Or add it yourself", claude_code_command(mcp_url, secret)),
            Step("Or in a project's .mcp.json", _json({"mcpServers": {SERVER_NAME: http_entry}})),
        )),
        ClientSetup("cursor", "Cursor", (
            Step("~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
                 _json({"mcpServers": {SERVER_NAME: {"url": mcp_url, "headers": bearer}}}), "macOS / Linux"),
            Step("%USERPROFILE%\\.cursor\\mcp.json",
                 _json({"mcpServers": {SERVER_NAME: {"url": mcp_url, "headers": bearer}}}), "Windows"),
            Step("Then check the connection", installer_command(base_url, "cursor", secret), "macOS / Linux"),
        )),
        ClientSetup("vscode", "VS Code", (
            Step("Add it from the command line",
                 "code --add-mcp " + shlex.quote(json.dumps({"name": SERVER_NAME, **http_entry})), "macOS / Linux"),
            Step("Or in .vscode/mcp.json", _json({"servers": {SERVER_NAME: http_entry}})),
            Step("Install and smoke-test in one line", installer_command(base_url, "vscode", secret),
                 "macOS / Linux"),
        )),
        ClientSetup("claude-desktop", "Claude Desktop", (
            Step("~/Library/Application Support/Claude/claude_desktop_config.json",
                 _json({"mcpServers": {SERVER_NAME: stdio_entry}}), "macOS"),
            Step("%APPDATA%\\Claude\\claude_desktop_config.json",
                 _json({"mcpServers": {SERVER_NAME: stdio_entry}}), "Windows"),
            Step("Then check the connection", installer_command(base_url, "claude-desktop", secret),
                 "macOS / Linux"),
        ), note=f"Claude Desktop starts Notewell itself over stdio, acting for NOTEWELL_TOKEN: {notewell[0]} is "
                "where this server's Notewell is installed; on another machine, install Notewell there, put its "
                "absolute path in \"command\", and let it reach the store named after --db."),
        ClientSetup("codex", "Codex CLI", (
            Step("Add it from the command line",
                 f"export NOTEWELL_TOKEN={shlex.quote(secret)}\n"
                 f"codex mcp add {SERVER_NAME} --url {mcp_url} --bearer-token-env-var NOTEWELL_TOKEN",
                 "macOS / Linux"),
            Step("Or in ~/.codex/config.toml (NOTEWELL_TOKEN set in the environment)",
                 f'[mcp_servers.{SERVER_NAME}]\nurl = "{mcp_url}"\nbearer_token_env_var = "NOTEWELL_TOKEN"'),
            Step("Install and smoke-test in one line", installer_command(base_url, "codex", secret),
                 "macOS / Linux"),
        )),
        ClientSetup("generic", "Any HTTP client", (
            Step("Streamable HTTP endpoint and header", f"{mcp_url}\nAuthorization: Bearer {secret}"),
            Step("Try it with curl",
                 f"curl -sS -X POST {mcp_url} -H {shlex.quote('Authorization: Bearer ' + secret)} "
                 "-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "
                 f"--data {shlex.quote(json.dumps(initialize))}"),
            Step(f"Or list the tools with the MCP Inspector (version {INSPECTOR_VERSION}, pinned)",
                 inspector_command(mcp_url, secret)),
            Step("Smoke-test the connection", installer_command(base_url, "generic", secret), "macOS / Linux"),
        )),
    ]


