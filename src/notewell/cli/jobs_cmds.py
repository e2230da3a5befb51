"""notewell worker: run the brain's learning loop (KEA's jobs) alone, until SIGTERM or Ctrl-C; notewell jobs:
list the queue's jobs, and `notewell jobs retry ID` a failed one (an operator's commands: the local owner)."""

from __future__ import annotations

import signal
from typing import Annotated, Any

import typer

from notewell.access.principal import LOCAL_OWNER
from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, err_console, fail, print_json, runtime
from notewell.cli.rows import Col, show_rows
from notewell.cli.serve_cmd import LogLevelOpt
from notewell.mcp import log
from notewell.records.jobs import JOB_STATES, JobRecord
from notewell.services.jobs import LIST_MAX

jobs_app = typer.Typer(help="The learning loop's job queue: list its jobs (newest first), retry a failed one.",
                       invoke_without_command=True)
app.add_typer(jobs_app, name="jobs")


def _job_json(j: JobRecord) -> dict[str, Any]:
    return {"id": j.id, "kind": j.kind, "state": j.state, "attempts": j.attempts, "nextAt": j.next_at or None,
            "leaseUntil": j.lease_until, "lastError": j.last_error, "result": j.result, "createdAt": j.created_at,
            "finishedAt": j.finished_at, "key": j.key, "payload": j.payload}


def _subject(j: JobRecord) -> str:
    return str(j.payload.get("sessionId") or j.key or "-")


@jobs_app.callback()
def jobs_command(
    ctx: typer.Context,
    state: Annotated[str | None, typer.Option("--state", help=f"Only jobs in this state: {', '.join(JOB_STATES)}.")]
    = None,
    limit: Annotated[int, typer.Option("--limit", help=f"At most this many (1-{LIST_MAX}).", min=1, max=LIST_MAX)]
    = 50,
    json_out: JsonOpt = False,
    vault: VaultOpt = None,
    db: DbOpt = None,
) -> None:
    """List the jobs of the learning loop, newest first, with how many are in each state."""
    if ctx.invoked_subcommand is not None:
        return
    with runtime(vault, db, arguments={"state": "--state", "limit": "--limit"}) as rt:
        jobs = rt.jobs.listing(LOCAL_OWNER, state, limit)
        counts = rt.jobs.counts(LOCAL_OWNER)
        if json_out:
            print_json({"jobs": [_job_json(j) for j in jobs],
                        "counts": {"pending": counts.pending, "running": counts.running, "done": counts.done,
                                   "failed": counts.failed}, "oldestDue": counts.oldest_due})
            return
        show_rows([Col("id", whole=True, justify="right"), Col("kind"), Col("state"), Col("attempts"),
                   Col("subject", whole=True), Col("result or error")],
                  [(j.id, j.kind, j.state, j.attempts, _subject(j), j.result or j.last_error) for j in jobs],
                  empty=f"No {state + ' ' if state else ''}jobs",
                  note=f"{counts.pending} pending, {counts.running} running, {counts.done} done, "
                       f"{counts.failed} failed")


@jobs_app.command("retry")
def jobs_retry(job_id: Annotated[int, typer.Argument(metavar="ID", help="The failed job's id.")],
               json_out: JsonOpt = False, vault: VaultOpt = None, db: DbOpt = None) -> None:
    """Make a failed job due again at once, its tries counted afresh."""
    with runtime(vault, db, arguments={"job_id": "ID"}) as rt:
        job = rt.jobs.retry(LOCAL_OWNER, job_id)
        if json_out:
            print_json(_job_json(job))
        else:
            console.print(f"job {job.id} ({job.kind}) is due again", highlight=False, markup=False)


@app.command("worker")
def worker_command(
    drain: Annotated[bool, typer.Option("--drain", help="Stop once no job is due, instead of waiting for more.")]
    = False,
    log_level: LogLevelOpt = None,
    vault: VaultOpt = None,
    db: DbOpt = None,
) -> None:
    """Run the learning loop's jobs (KEA) alone, while this process holds the store's job lease (a `notewell
    serve` holding it runs them instead); SIGTERM or Ctrl-C stops it after the job in hand."""
    with runtime(vault, db) as rt:
        log.setup(log.resolve_level(log_level, "info"), log.resolve_format(None))
        runner = rt.job_runner()
        previous = {sig: signal.signal(sig, lambda _s, _f: runner.request_stop())
                    for sig in (signal.SIGTERM, signal.SIGINT)}
        err_console.print("Notewell worker: running the job queue; SIGTERM or Ctrl-C stops it",
                          highlight=False, markup=False)
        try:
            ran = runner.run(drain=drain)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        counts = rt.jobs.counts(LOCAL_OWNER)
        if not ran:
            raise fail(f"another process holds the store's job lease and runs its jobs (a notewell serve, or a "
                       f"worker): nothing was drained here ({counts.pending} pending, {counts.failed} failed); "
                       "let it run them, or stop it and drain again")
        err_console.print(f"worker stopped: {counts.pending} pending, {counts.failed} failed", highlight=False,
                          markup=False)
