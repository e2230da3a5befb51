"""GET /install.sh?client=...: the bash script (install.sh beside this module) that registers this server with a
client and smoke-tests the connection, with the server's address and the client filled in.

The token is never in the URL or the script: the user passes it as NOTEWELL_TOKEN. The smoke test sends
initialize and one read-only tool call and fails loudly with a diagnosis per HTTP status (401 bad token,
421 host not allowed, no connection).
"""

from __future__ import annotations

import shlex
from importlib.resources import files

CLIENTS = ("claude-code", "cursor", "vscode", "codex", "generic")
_TEMPLATE = files("notewell.web").joinpath("install.sh")


def installer_script(base_url: str, client: str) -> str:
    """The installer for ``client`` (one of CLIENTS) against the server at ``base_url`` (no trailing slash)."""
    if client not in CLIENTS:
        raise ValueError(client)
    text = _TEMPLATE.read_text(encoding="utf-8")
    return text.replace("@BASE@", shlex.quote(base_url), 1).replace("@CLIENT@", shlex.quote(client), 1)
