"""notewell doctor: check the settings, vault, store, search index, tokens, watcher and port; say each fix."""

from __future__ import annotations

from typing import Annotated

import typer

from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, print_json
from notewell.cli.serve_cmd import DEFAULT_PORT
from notewell.doctor import INTEGRITY_BUDGET_S, run_checks

MARKS = {"ok": "[green]ok  [/green]", "warn": "[yellow]warn[/yellow]", "fail": "[red]FAIL[/red]"}


@app.command("doctor")
def doctor_command(
    port: Annotated[int | None, typer.Option(
        "--port", min=1, max=65535, help="The port to check (default: the port of the notewell serve running on "
                                         f"this store, else {DEFAULT_PORT}).")] = None,
    deep: Annotated[bool, typer.Option(
        "--deep", help=f"Check every part of the store's file for damage (on PostgreSQL: compare every row of "
                       f"live_memory_stems with the memories), however long it takes (without it, "
                       f"{INTEGRITY_BUDGET_S:.0f} s at most).")] = False,
    vault: VaultOpt = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Check that Notewell can run here, and say how to fix what is wrong (exit 1 when a check fails)."""
    checks = run_checks(vault, db, port, DEFAULT_PORT, integrity_budget_s=None if deep else INTEGRITY_BUDGET_S)
    if json_out:
        print_json([{"check": c.name, "status": c.status, "found": c.found, "fix": c.fix} for c in checks])
    else:
        for check in checks:
            console.print(f"{MARKS[check.status]} {check.name}: ", end="")
            console.print(check.found, highlight=False, markup=False, soft_wrap=True)
            if check.fix:
                console.print(f"       fix: {check.fix}", highlight=False, markup=False, soft_wrap=True)
    if any(c.status == "fail" for c in checks):
        raise typer.Exit(1)
