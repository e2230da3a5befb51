"""notewell token mint | list | revoke. The secret is printed once, at mint, and never again."""

from __future__ import annotations

from typing import Annotated

import typer

from notewell import limits
from notewell.access.principal import LOCAL_OWNER
from notewell.cli.access_views import token_json, token_scopes_cell
from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, err_console, print_json, runtime
from notewell.cli.rows import Col, show_rows

LIST_MAX = 1000  # tokens on one page of token list
BY_USER = {"email": "--user"}  # the user is named by --user here, not as the EMAIL argument
token_app = typer.Typer(help="Mint, list and revoke tokens.", no_args_is_help=True)
app.add_typer(token_app, name="token")


@token_app.command("mint")
def token_mint(
    user: Annotated[str, typer.Option("--user", help="The email of the user the token acts for.")],
    scopes: Annotated[str, typer.Option("--scopes", help="Comma-separated: knowledge:read, knowledge:write, "
                                                         "memory:read, memory:write, sessions, admin.")],
    project: Annotated[str | None, typer.Option("--project", help="Bind the token to this one project.")] = None,
    name: Annotated[str, typer.Option("--name", help="A label, e.g. the client it is for.")] = "",
    expires: Annotated[str | None, typer.Option("--expires", help="Lifetime such as 90d, 12h, 30m, 2w "
                                                                  "(default: never).")] = None,
    vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Mint a token. The secret goes to stdout once (alone on its line); keep it, it cannot be shown again."""
    with runtime(vault, db, arguments=BY_USER) as rt:
        minted = rt.administration.mint_token(LOCAL_OWNER, user, scopes.split(","), project_id=project, name=name,
                                      expires=expires)
        owner = rt.administration.user(LOCAL_OWNER, user)
        if json_out:
            print_json({"token": minted.secret, **token_json(rt.administration.standing(LOCAL_OWNER, minted.token))})
            return
        t = minted.token
        err_console.print(f"Token {t.id} for {owner.email}: {', '.join(t.scopes)}"
                          f"{', project ' + t.project_id if t.project_id else ''}, expires {t.expires_at or 'never'}."
                          " Copy the secret now: it is not shown again.", highlight=False, markup=False,
                          soft_wrap=True)
        typer.echo(minted.secret)


@token_app.command("list")
def token_list(user: Annotated[str | None, typer.Option("--user", help="Only this user's tokens.")] = None,
               limit: Annotated[int, typer.Option("--limit", help=f"At most this many, oldest first (1-{LIST_MAX}).",
                                                  min=1, max=LIST_MAX)] = 100,
               offset: Annotated[int, typer.Option("--offset", help="How many to skip: the note under a list that "
                                                   "has more names the next offset.", min=0,
                                                   max=limits.NOTES_OFFSET_MAX)] = 0,
               vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """List tokens (never their secrets), oldest first, a page at a time."""
    with runtime(vault, db, arguments={**BY_USER, "limit": "--limit", "offset": "--offset"}) as rt:
        found = rt.administration.token_standings(LOCAL_OWNER, user, limit + 1, offset)  # one more: do more follow?
        standings = found[:limit]
        more = f"More tokens follow: --offset {offset + limit}" if len(found) > limit else ""
        if json_out:
            print_json([token_json(s) for s in standings])
            if more:
                err_console.print(more, highlight=False, markup=False, soft_wrap=True)
            return
        of_user = f" of {user}" if user else ""
        show_rows([Col("id", whole=True), Col("user", whole=True), Col("name"), Col("scopes"),
                   Col("project", whole=True), Col("expires"), Col("last used"), Col("state")],
                  [(s.token.id, s.email, s.token.name, token_scopes_cell(s), s.token.project_id,
                    s.token.expires_at or "never", s.token.last_used_at, s.state) for s in standings],
                  empty=f"No tokens{of_user} after --offset {offset}" if offset else
                  f"No tokens{of_user}; mint one with 'notewell token mint'", note=more)


# a leaked secret's random part, given alone, may begin with "-": read it as the ID, never as an unknown option
# (whose usage error would repeat it)
@token_app.command("revoke", context_settings={"ignore_unknown_options": True})
def token_revoke(token_id: Annotated[str, typer.Argument(
                     metavar="ID", help="The token id from 'token list', or a leaked token's whole secret (never "
                                        "printed).")],
                 vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Revoke a token: its next call fails."""
    with runtime(vault, db) as rt:
        token = rt.administration.revoke_token(LOCAL_OWNER, token_id)
        if json_out:
            print_json(token_json(rt.administration.standing(LOCAL_OWNER, token)))
        else:
            console.print(f"Token {token.id} is revoked", highlight=False, markup=False)
