"""notewell index: sync the store with the vault."""

from __future__ import annotations

from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, print_json, runtime
from notewell.indexer import sync

PASSED_OVER_SHOWN = 50


@app.command("index")
def index_command(vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Sync the store with the vault: add new files, update changed ones, drop deleted ones."""
    with runtime(vault, db) as rt:
        if console.is_terminal and not json_out:
            with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                          TimeRemainingColumn(), console=console, transient=True) as bar:
                task = bar.add_task("Indexing", total=None)
                report = sync(rt.settings, rt.store,
                              progress=lambda done, total: bar.update(task, completed=done, total=total))
        else:
            report = sync(rt.settings, rt.store)
        rt.access.sync_vault_projects(rt.store.documents.vault_projects(), rt.settings.vault)
        if json_out:
            print_json({"added": report.added, "changed": report.changed, "removed": report.removed,
                        "renamed": report.renamed, "skipped": report.skipped, "unchanged": report.unchanged,
                        "bytes": report.bytes_read, "seconds": round(report.seconds, 3),
                        "didWork": report.did_work})
        else:
            console.print(report.summary(), highlight=False)
            _print_passed_over(report.passed_over)


def _print_passed_over(lines: list[str]) -> None:
    """Each skipped file with its reason (a symlink not followed, a name that is not UTF-8, a size)."""
    for line in lines[:PASSED_OVER_SHOWN]:
        console.print(f"  skipped {line}", highlight=False, markup=False, soft_wrap=True)
    if len(lines) > PASSED_OVER_SHOWN:
        console.print(f"  ... and {len(lines) - PASSED_OVER_SHOWN} more skipped files", highlight=False)
