"""The notewell command line (Typer + Rich). Each command module registers itself on ``app``."""

from __future__ import annotations

import os

from rich.markup import escape

from notewell.cli import (  # noqa: F401  (registers the commands)
    audit_cmd,
    backup_cmds,
    brain_cmds,
    carry_cmds,
    docs_cmd,
    doctor_cmd,
    embed_cmd,
    grant_cmds,
    index_cmd,
    jobs_cmds,
    memory_cmds,
    note_cmds,
    project_cmds,
    quickstart_cmd,
    search_cmd,
    serve_cmd,
    skill_cmds,
    token_cmds,
    user_cmds,
    version_cmd,
)
from notewell.cli.app import app, cli_message, err_console
from notewell.services.driver_errors import translated


def main() -> None:
    """The command line. An error no command expected (a bug, or a store damaged where no check looked) is one
    line on stderr and exit 70, never a traceback; NOTEWELL_TRACEBACK=1 shows the traceback, for a bug report."""
    try:
        app(prog_name="notewell")
    except Exception as exc:
        found = translated(exc)  # a damaged row met as a cursor was iterated (services/driver_errors.py)
        if found is not None:
            err_console.print(f"[red]error:[/red] {escape(cli_message(found))}", highlight=False, soft_wrap=True)
            raise SystemExit(1) from None
        if os.environ.get("NOTEWELL_TRACEBACK"):
            raise
        err_console.print(f"[red]error:[/red] {escape(f'{type(exc).__name__}: {exc}'[:2000])}; Notewell did not "
                          "expect this: 'notewell doctor' checks the set-up and the store, and NOTEWELL_TRACEBACK=1 "
                          "shows where it happened (for a bug report)", highlight=False, soft_wrap=True)
        raise SystemExit(70) from None

