"""notewell index: sync the store with the vault, once or (--watch) for as long as it runs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

from notewell.cli.app import (
    DbOpt,
    JsonOpt,
    VaultOpt,
    app,
    console,
    ends_on_interrupt,
    err_console,
    print_json,
    runtime,
)
from notewell.indexer import IndexReport
from notewell.indexer import Progress as ProgressCallback

PROGRESS_LINE_EVERY_S = 5.0
PASSED_OVER_SHOWN = 50
# what Ctrl-C leaves (docs/operations.md, "An interrupt"): the documents' sync is one transaction, then each project
NOTHING_INDEXED = "nothing was indexed: the sync is one transaction, and it was rolled back; run notewell index again"
DOCUMENTS_INDEXED = ("the documents were indexed (the sync's transaction was committed), but the projects of the "
                     "vault's top-level folders may not all be made or updated yet; run notewell index again to "
                     "finish")
SYNC_DONE = "the sync was done: the store is in line with the vault"


@app.command("index")
def index_command(
    vault: VaultOpt = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List every file and folder left out, "
                                                                  "with the reason.")] = False,
    watch: Annotated[bool, typer.Option("--watch", help="After the sync, keep watching the vault and sync each "
                                                        "change (a standalone indexer; Ctrl-C stops it).")] = False,
) -> None:
    """Sync the store with the vault: add new files, update changed ones, drop deleted ones."""
    with ends_on_interrupt("index", NOTHING_INDEXED) as interrupt, runtime(vault, db) as rt:
        def committed() -> None:
            interrupt.left = DOCUMENTS_INDEXED

        with _progress(enabled=not json_out) as progress:
            report = rt.indexing.sync(progress=progress, committed=committed)
        interrupt.left = SYNC_DONE
        if json_out:
            print_json(_as_json(report, verbose))
        else:
            console.print(report.summary(listed=verbose), highlight=False, markup=False)
            if verbose:
                for item in report.left_out:
                    console.print(f"  {item.why:<10} {item.path}  ({item.detail})", highlight=False, markup=False)
            else:
                _print_passed_over(report.passed_over)
        if watch:
            from notewell.cli.watch_cli import watch_until_interrupted

            watch_until_interrupted(rt)


def _as_json(report: IndexReport, verbose: bool) -> dict[str, object]:
    data: dict[str, object] = {
        "added": report.added, "changed": report.changed, "removed": report.removed, "renamed": report.renamed,
        "skipped": report.skipped, "unchanged": report.unchanged, "bytes": report.bytes_read,
        "seconds": round(report.seconds, 3), "didWork": report.did_work, "leftOut": report.left_out_counts(),
    }
    if verbose:
        data["leftOutFiles"] = [{"path": x.path, "reason": x.why, "detail": x.detail} for x in report.left_out]
    return data


@contextmanager
def _progress(enabled: bool) -> Iterator[ProgressCallback | None]:
    """A bar on a terminal; elsewhere (a log, a pipe) a line on stderr every few seconds of a long sync."""
    if not enabled:
        yield None
    elif console.is_terminal:
        with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                      TimeRemainingColumn(), console=console, transient=True) as bar:
            task = bar.add_task("Indexing", total=None)
            yield lambda done, total: bar.update(task, completed=done, total=total)
    else:
        yield _ProgressLines().update


class _ProgressLines:
    """A line when reading starts (how much there is to read), then one every PROGRESS_LINE_EVERY_S while it
    goes on (how far it is); the summary line says when it is done."""

    def __init__(self) -> None:
        self._next = 0.0

    def update(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done == 0:
            self._next = now + PROGRESS_LINE_EVERY_S
            line = f"Indexing: {_size(total)} to read"
        elif now < self._next or done >= total:
            return
        else:
            self._next = now + PROGRESS_LINE_EVERY_S
            line = f"Indexing: {_size(done)} of {_size(total)} read ({100 * done // total}%)"
        err_console.print(line, highlight=False, markup=False)


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} KB" if n >= 1_000 else f"{n} bytes"


def _print_passed_over(lines: list[str]) -> None:
    """Each skipped file with its reason (a symlink not followed, a name that is not UTF-8, a size)."""
    for line in lines[:PASSED_OVER_SHOWN]:
        console.print(f"  skipped {line}", highlight=False, markup=False, soft_wrap=True)
    if len(lines) > PASSED_OVER_SHOWN:
        console.print(f"  ... and {len(lines) - PASSED_OVER_SHOWN} more skipped files", highlight=False)


