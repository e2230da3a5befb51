"""notewell audit: who did what to which target, when."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from notewell.access.principal import LOCAL_OWNER
from notewell.access.token_secrets import since_from
from notewell.cli.access_views import audit_json
from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, print_json, runtime
from notewell.cli.rows import Col, show_rows


@app.command("audit")
def audit_command(
    since: Annotated[str | None, typer.Option(
        "--since", help="An ISO date or time (2026-01-31, 2026-01-31T12:00:00Z) or a duration ago (7d, 12h).")] = None,
    vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Show the audit log, oldest first: mints, revokes, user, grant and project changes, and writes."""
    with runtime(vault, db) as rt:
        entries = rt.administration.audit_log(LOCAL_OWNER, since_from(since) if since else None)
        # people are named by email, as they sign in; the local owner (the CLI on the server) by its own address
        emails = ({u.id: u.email for u in rt.administration.users(LOCAL_OWNER)}
                  | {LOCAL_OWNER.user_id: LOCAL_OWNER.email})
        if json_out:
            print_json([audit_json(e, emails.get(e.user_id)) for e in entries])
            return
        show_rows([Col("at"), Col("user", whole=True), Col("token", whole=True), Col("action"), Col("target"),
                   Col("detail")],
                  [(e.at, emails.get(e.user_id, e.user_id), e.token_id or "-", e.action, e.target,
                    json.dumps(e.detail, ensure_ascii=False, sort_keys=True)) for e in entries],
                  empty=f"No audit entries{' since ' + since if since else ''}")
