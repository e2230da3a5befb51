"""notewell audit: who did what to which target, when.

The log is read and printed a page at a time (``AuditTrail.since``), so what the command holds stays one page
whatever the log's size: a --json array is written an entry at a time, the same text as one dump of the whole
list; plain lines (piped, or a narrow terminal) one at a time; on a terminal wide enough, each page is a table.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Annotated

import typer

from notewell.access.audit import PAGE_ENTRIES
from notewell.access.principal import LOCAL_OWNER
from notewell.access.token_secrets import since_from
from notewell.cli.access_views import audit_json
from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, runtime
from notewell.cli.rows import Col, show_rows
from notewell.records.identity import AuditEntry
from notewell.runtime import Runtime

COLUMNS = [Col("at"), Col("user", whole=True), Col("token", whole=True), Col("action"), Col("target"), Col("detail")]


@app.command("audit")
def audit_command(
    since: Annotated[str | None, typer.Option(
        "--since", help="An ISO date or time (2026-01-31, 2026-01-31T12:00:00Z) or a duration ago (7d, 12h).")] = None,
    vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Show the audit log, oldest first: mints, revokes, user, grant and project changes, and writes."""
    with runtime(vault, db) as rt:
        pages = _pages(rt.administration.audit_log(LOCAL_OWNER, since_from(since) if since else None))
        if json_out:
            _write_json([audit_json(e, email) for e, email in _named(rt, page)] for page in pages)
            return
        shown = False
        for page in pages:
            show_rows(COLUMNS, [(e.at, email or e.user_id, e.token_id or "-", e.action, e.target,
                                 json.dumps(e.detail, ensure_ascii=False, sort_keys=True))
                                for e, email in _named(rt, page)], empty="")
            shown = True
        if not shown:
            show_rows(COLUMNS, [], empty=f"No audit entries{' since ' + since if since else ''}")


def _pages(entries: Iterator[AuditEntry]) -> Iterator[list[AuditEntry]]:
    while page := list(islice(entries, PAGE_ENTRIES)):
        yield page


def _named(rt: Runtime, page: Sequence[AuditEntry]) -> list[tuple[AuditEntry, str | None]]:
    """Each entry with its actor's email, the page's users read in one statement: people are named by email, as
    they sign in; the local owner (the CLI on the server) by its own address."""
    users = rt.administration.users_by_id(LOCAL_OWNER, [e.user_id for e in page])
    emails = {i: u.email for i, u in users.items()} | {LOCAL_OWNER.user_id: LOCAL_OWNER.email}
    return [(e, emails.get(e.user_id)) for e in page]


def _write_json(pages: Iterator[list[dict[str, object]]]) -> None:
    """A JSON array a page at a time, the very text ``print_json`` writes for the whole list: each page dumped as
    one array (an entry's dump alone took half as long again), its items written without its brackets."""
    opened = False
    for page in pages:
        items = json.dumps(page, ensure_ascii=False, indent=2)[2:-2]  # "[\n" and "\n]" around them
        sys.stdout.write(f"{',' if opened else '['}\n{items}")
        opened = True
    sys.stdout.write("\n]\n" if opened else "[]\n")
