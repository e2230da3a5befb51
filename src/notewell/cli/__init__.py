"""The notewell command line (Typer + Rich). Each command module registers itself on ``app``."""

from __future__ import annotations

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
from notewell.cli.app import app


def main() -> None:
    app(prog_name="notewell")

