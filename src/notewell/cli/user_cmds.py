"""notewell user add | list | role | deactivate | activate | passwd | login-link."""

from __future__ import annotations

import getpass
import os
import sys
from typing import Annotated

import typer

from notewell.access.principal import LOCAL_OWNER
from notewell.cli.access_views import user_json
from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, err_console, fail, print_json, runtime
from notewell.cli.piped import decoded
from notewell.cli.rows import Col, show_rows
from notewell.runtime import Runtime

user_app = typer.Typer(help="Add, list and deactivate users (each user gets a private home project ~handle).",
                       no_args_is_help=True)
app.add_typer(user_app, name="user")

EmailArg = Annotated[str, typer.Argument(metavar="EMAIL", help="The user's email (compared without case).")]


@user_app.command("add")
def user_add(email: EmailArg,
             role: Annotated[str, typer.Option("--role", help="member, staff or admin.")],
             name: Annotated[str | None, typer.Option("--name", help="Display name.")] = None,
             handle: Annotated[str | None, typer.Option("--handle", help="Short name; the home is ~HANDLE.")] = None,
             vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Add a user and their home project ~HANDLE (with its vault folder)."""
    with runtime(vault, db) as rt:
        user = rt.administration.add_user(LOCAL_OWNER, email, role, name=name, handle=handle)
        if json_out:
            print_json(user_json(user))
        else:
            console.print(f"Added {user.role} {user.email} (handle {user.handle}, home {user.home_project})",
                          highlight=False, markup=False)


@user_app.command("list")
def user_list(vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """List every user."""
    with runtime(vault, db) as rt:
        users = rt.administration.users(LOCAL_OWNER)
        if json_out:
            print_json([user_json(u) for u in users])
            return
        show_rows([Col("email", whole=True), Col("name"), Col("handle", whole=True), Col("role"), Col("active"),
                   Col("home", whole=True)],
                  [(u.email, u.name, u.handle, u.role, "yes" if u.active else "no", u.home_project) for u in users],
                  empty="No users; add one with 'notewell user add EMAIL --role member'")


def _set_active(email: str, active: bool, vault: str | None, db: str | None, json_out: bool) -> None:
    with runtime(vault, db) as rt:
        user = rt.administration.set_user_active(LOCAL_OWNER, email, active)
        if json_out:
            print_json(user_json(user))
        else:
            state = "active" if active else "deactivated: every token of this user now fails"
            console.print(f"{user.email} is {state}", highlight=False, markup=False)


@user_app.command("role")
def user_role(email: EmailArg, role: Annotated[str, typer.Argument(metavar="ROLE", help="member, staff or admin.")],
              vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Change a user's role (their tokens keep only the scopes the new role allows)."""
    with runtime(vault, db) as rt:
        user = rt.administration.set_role(LOCAL_OWNER, email, role)
        if json_out:
            print_json(user_json(user))
        else:
            console.print(f"{user.email} is now {user.role}", highlight=False, markup=False)


@user_app.command("deactivate")
def user_deactivate(email: EmailArg, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Deactivate a user: every token of theirs fails on its next call."""
    _set_active(email, False, vault, db, json_out)


@user_app.command("activate")
def user_activate(email: EmailArg, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Reactivate a deactivated user (their unrevoked, unexpired tokens work again)."""
    _set_active(email, True, vault, db, json_out)


DEFAULT_BASE_URL = "http://127.0.0.1:8765"


def _read_password() -> str:
    """One line from stdin (a pipe or a file), or typed twice at a terminal without echo."""
    if sys.stdin.isatty():
        first = getpass.getpass("New password: ")
        if getpass.getpass("Again: ") != first:
            raise fail("the two passwords differ; nothing changed")
        return first
    line = decoded(typer.get_binary_stream("stdin").readline(4096), "password")
    return line[:-1] if line.endswith("\n") else line


@user_app.command("passwd")
def user_passwd(email: EmailArg, vault: VaultOpt = None, db: DbOpt = None) -> None:
    """Set the user's web sign-in password from stdin (one line), or typed twice at a terminal."""
    with runtime(vault, db) as rt:
        user = rt.sign_in.set_password(LOCAL_OWNER, email, _read_password())
        console.print(f"Password set for {user.email}", highlight=False, markup=False)


@user_app.command("login-link")
def user_login_link(
    email: EmailArg,
    base_url: Annotated[str | None, typer.Option(
        "--url", "--base-url", help="The server's address as browsers reach it (default: $NOTEWELL_PUBLIC_URL, "
                                    "else the address of the notewell serve running on this store, else "
                                    f"{DEFAULT_BASE_URL}).")] = None,
    vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Print a one-time web sign-in link for the user: valid 15 minutes, used once."""
    with runtime(vault, db) as rt:
        base, source, note = _base_url(rt, base_url)
        link = rt.sign_in.make_link(LOCAL_OWNER, email, base)
        if json_out:
            print_json({"url": link.url, "expiresAt": link.expires_at, "baseUrl": base, "baseUrlFrom": source})
            return
        if note:
            err_console.print(note, highlight=False, markup=False, soft_wrap=True)
        console.print(link.url, highlight=False, markup=False, soft_wrap=True)


def _base_url(rt: Runtime, given: str | None) -> tuple[str, str, str]:
    """(the address, where it came from, a line saying so): --url, else $NOTEWELL_PUBLIC_URL, else the running
    server of this store, else the default."""
    if given:
        return given.rstrip("/"), "flag", ""
    public = os.environ.get("NOTEWELL_PUBLIC_URL")
    if public:
        return public.rstrip("/"), "environment", ""
    running = rt.servers.serving()
    server = next((s for s in running if not s.stdio), None)
    if server is not None:
        return server.url, "server", (f"The link goes to the notewell serve running on this store at {server.url} "
                                      f"(pid {server.pid} on {server.host}); --url sets another address.")
    none = (f"Only notewell serve --stdio runs on this store (pid {running[0].pid} on {running[0].host}), which "
            "serves no web pages" if running else "No notewell serve runs on this store now")
    return DEFAULT_BASE_URL, "default", (f"{none}: the link uses the default address {DEFAULT_BASE_URL}; pass --url "
                                         "if the server will listen elsewhere.")
