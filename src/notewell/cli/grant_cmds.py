"""notewell grant | ungrant | grants."""

from __future__ import annotations

from typing import Annotated

import typer

from notewell.access.principal import LOCAL_OWNER
from notewell.cli.access_views import grant_json
from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, print_json, runtime
from notewell.cli.rows import Col, show_rows

EmailArg = Annotated[str, typer.Argument(metavar="EMAIL", help="The user's email.")]
ProjectArg = Annotated[str, typer.Argument(metavar="PROJECT", help="An ordinary project's id.")]
POSITIONAL = {"project": "PROJECT"}


@app.command("grant")
def grant_command(email: EmailArg, project: ProjectArg,
                  write: Annotated[bool, typer.Option("--write", help="Allow writing, not only reading.")] = False,
                  vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Let a user read (or, with --write, also write) a project."""
    with runtime(vault, db, arguments=POSITIONAL) as rt:
        before = {g.project_id: g.level for g in rt.administration.grants(LOCAL_OWNER, email)}
        grant = rt.administration.grant(LOCAL_OWNER, email, project, "write" if write else "read")
        user = rt.administration.user(LOCAL_OWNER, email)
        was = before.get(grant.project_id)
        if json_out:
            print_json({**grant_json(grant, user.email), "previous": was})
        else:  # a grant given again without --write takes write away: said, never silent
            changed = f" (was {was})" if was is not None and was != grant.level else ""
            console.print(f"{user.email} may {grant.level} {grant.project_id}{changed}", highlight=False, markup=False)


@app.command("ungrant")
def ungrant_command(email: EmailArg, project: ProjectArg, vault: VaultOpt = None, db: DbOpt = None,
                    json_out: JsonOpt = False) -> None:
    """Take away a user's grant on a project."""
    with runtime(vault, db, arguments=POSITIONAL) as rt:
        rt.administration.ungrant(LOCAL_OWNER, email, project)
        user = rt.administration.user(LOCAL_OWNER, email)
        if json_out:
            print_json({"user": user.email, "project": project, "level": None})
        else:
            console.print(f"{user.email} no longer holds a grant on {project}", highlight=False, markup=False)


@app.command("grants")
def grants_command(user: Annotated[str | None, typer.Option("--user", help="The grants this user holds.")] = None,
                   project: Annotated[str | None, typer.Option("--project", help="The grants on this project.")] = None,
                   vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """List grants: of one user, on one project, or (with neither) every grant of every user."""
    with runtime(vault, db, arguments={"email": "--user"}) as rt:
        emails = {u.id: u.email for u in rt.administration.users(LOCAL_OWNER)}
        if project is not None:
            grants = rt.administration.project_grants(LOCAL_OWNER, project)
        else:
            people = [user] if user is not None else sorted(emails.values(), key=str.lower)
            grants = [g for email in people for g in rt.administration.grants(LOCAL_OWNER, email)]
        if user is not None and project is not None:
            wanted = rt.administration.user(LOCAL_OWNER, user).id
            grants = [g for g in grants if g.user_id == wanted]
        rows = sorted((grant_json(g, emails.get(g.user_id, g.user_id)) for g in grants),
                      key=lambda r: (str(r["user"]).lower(), str(r["project"])))
        if json_out:
            print_json(rows)
            return
        show_rows([Col("user", whole=True), Col("project", whole=True), Col("level")],
                  [(row["user"], row["project"], row["level"]) for row in rows],
                  empty="No grants; give one with 'notewell grant EMAIL PROJECT'")
