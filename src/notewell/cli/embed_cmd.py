"""notewell embed: embed what the queue holds now (a store made by an older version: the backfill), or
--status: how far it has come. `notewell serve` does the same in the background as it runs."""

from __future__ import annotations

from typing import Annotated

import typer

from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, err_console, fail, print_json, runtime
from notewell.records.meaning import QueueState
from notewell.services.meaning import embed_all
from notewell.services.servers import RESTART_WITH_MEANING

PROGRESS_EVERY = 500


def _state_json(state: QueueState, unavailable: str | None) -> dict[str, object]:
    return {"vectors": state.vectors, "items": state.items, "queued": state.queued, "failing": state.failing,
            "lastError": state.last_error, "unavailable": unavailable}


def _state_line(state: QueueState, unavailable: str | None, stalled: str | None) -> str:
    line = f"{state.vectors} of {state.items} memories and sessions embedded; {state.queued} queued"
    if state.failing:
        line += f", {state.failing} failing (last error: {state.last_error})"
    if unavailable is not None:  # nothing is embedded, nor fails: the queue only waits
        line += f"; meaning is unavailable here ({unavailable}): the queue waits until it is (notewell doctor)"
    elif stalled is not None:  # meaning works here, but the servers that run have it off
        line += f"; the queue only waits: {stalled}; {RESTART_WITH_MEANING}"
    return line


@app.command("embed")
def embed_command(
    status: Annotated[bool, typer.Option("--status", help="Only say how many items are embedded and queued.")] = False,
    json_out: JsonOpt = False,
    vault: VaultOpt = None,
    db: DbOpt = None,
) -> None:
    """Embed the memories, taught knowledge and sessions that wait in the queue, then say how far it has come."""
    with runtime(vault, db) as rt:
        if not status:
            if rt.meaning.unavailable is not None:
                raise fail(f"meaning is unavailable: {rt.meaning.unavailable}")

            def progress(done: int) -> None:
                if done % PROGRESS_EVERY < 32 and not json_out:
                    err_console.print(f"{done} embedded…", highlight=False, markup=False)

            taken, seconds = embed_all(rt.meaning, progress)
            if not json_out:
                console.print(f"embedded {taken} in {seconds:.1f} s", highlight=False, markup=False)
        state, unavailable = rt.meaning.state(), rt.meaning.unavailable
        stalled = rt.servers.embedding_stalled() if unavailable is None and state.queued else None
        if json_out:
            print_json(_state_json(state, unavailable if stalled is None else f"{stalled}; {RESTART_WITH_MEANING}"))
        else:
            console.print(_state_line(state, unavailable, stalled), highlight=False, markup=False)
