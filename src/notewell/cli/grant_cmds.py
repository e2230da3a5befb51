"""notewell grant | ungrant."""

from __future__ import annotations

from typing import Annotated

import typer

from notewell.access.principal import LOCAL_OWNER
from notewell.cli.access_views import grant_json
from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, print_json, runtime

EmailArg = Annotated[str, typer.Argument(metavar="EMAIL", help="The user's email.")]
ProjectArg = Annotated[str, typer.Argument(metavar="PROJECT", help="An ordinary project's id.")]


@app.command("grant")
def grant_command(email: EmailArg, project: ProjectArg,
                  write: Annotated[bool, typer.Option("--write", help="Allow writing, not only reading.")] = False,
                  vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Let a user read (or, with --write, also write) a project."""
    with runtime(vault, db) as rt:
        grant = rt.access.grant(LOCAL_OWNER, email, project, "write" if write else "read")
        user = rt.access.user(LOCAL_OWNER, email)
        if json_out:
            print_json(grant_json(grant, user.email))
        else:
            console.print(f"{user.email} may {grant.level} {grant.project_id}", highlight=False, markup=False)


@app.command("ungrant")
def ungrant_command(email: EmailArg, project: ProjectArg, vault: VaultOpt = None, db: DbOpt = None,
                    json_out: JsonOpt = False) -> None:
    """Take away a user's grant on a project."""
    with runtime(vault, db) as rt:
        rt.access.ungrant(LOCAL_OWNER, email, project)
        user = rt.access.user(LOCAL_OWNER, email)
        if json_out:
            print_json({"user": user.email, "project": project, "level": None})
        else:
            console.print(f"{user.email} no longer holds a grant on {project}", highlight=False, markup=False)
