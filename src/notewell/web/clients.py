"""The install wizard: for each client, the exact command or config file that connects it to this server.

Each client is a tab; each step is one copy-ready block, for one operating system when the step differs by
OS. The token appears in the commands because the person minting it is the one who runs them; the
installer script never carries it (it is passed as NOTEWELL_TOKEN).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

SERVER_NAME = "notewell"


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


def _json(data: object) -> str:
    return json.dumps(data, indent=2)


def installer_command(base_url: str, client: str, secret: str) -> str:
    url = f"{base_url}/install.sh?client={client}"
    return f"curl -fsSL {shlex.quote(url)} | NOTEWELL_TOKEN={shlex.quote(secret)} bash"


def claude_code_command(mcp_url: str, secret: str) -> str:
    return (f"claude mcp add --transport http {SERVER_NAME} {mcp_url} "
            f'--header "Authorization: Bearer {secret}"')


def client_setups(base_url: str, secret: str, store_url: str) -> list[ClientSetup]:
    """Every client's set-up for a server reached at ``base_url`` (no trailing slash) and this token."""
    mcp_url = f"{base_url}/mcp"
    bearer = {"Authorization": f"Bearer {secret}"}
    http_entry = {"type": "http", "url": mcp_url, "headers": bearer}
    stdio_entry = {"command": "notewell", "args": ["serve", "--stdio", "--db", store_url],
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
        ), note="Claude Desktop starts Notewell itself over stdio, acting for NOTEWELL_TOKEN: Notewell must be "
                "installed on that machine and reach the store named after --db."),
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
            Step("Smoke-test the connection", installer_command(base_url, "generic", secret), "macOS / Linux"),
        )),
    ]


