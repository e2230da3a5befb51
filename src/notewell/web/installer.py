"""GET /install.sh?client=...: the bash script (install.sh beside this module) that registers this server with a
client and smoke-tests the connection, with the server's address, the client and this version filled in.

The token is never in the URL or the script: the user passes it as NOTEWELL_TOKEN. The smoke test sends
initialize and one read-only tool call (brain_get_user_style when the token has the External Brain tools) and
fails loudly with a diagnosis per HTTP status (401 bad token, 421 host not allowed, no connection). Then, for
an External Brain token, the install ping (not fatal): brain_start_session with the client's clientType and
the prompt "brain installer ping v2", brain_log_event, brain_report_session_outcome(success=true).
"""

from __future__ import annotations

import re
import shlex
from importlib.resources import files

from notewell import __version__

CLIENT_TYPES = {"claude-code": "claude_code", "cursor": "cursor", "vscode": "vscode",
                "claude-desktop": "claude_desktop", "codex": "codex", "generic": "generic"}
"""Each installer's client (its ?client= value) -> the clientType its install ping opens a session with."""
CLIENTS = tuple(CLIENT_TYPES)
_MARK = re.compile(r"@(BASE|CLIENT|CLIENT_TYPE|VERSION)@")
_TEMPLATE = files("notewell.web").joinpath("install.sh")


def installer_script(base_url: str, client: str) -> str:
    """The installer for ``client`` (one of CLIENTS) against the server at ``base_url`` (no trailing slash)."""
    if client not in CLIENTS:
        raise ValueError(client)
    text = _TEMPLATE.read_text(encoding="utf-8")
    filled = {"BASE": base_url, "CLIENT": client, "CLIENT_TYPE": CLIENT_TYPES[client], "VERSION": __version__}
    return _MARK.sub(lambda m: shlex.quote(filled[m.group(1)]), text)  # one pass: no value is read as a mark
