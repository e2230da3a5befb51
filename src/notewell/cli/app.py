"""The Typer app, the shared --vault/--db options and the one-line error reporting."""

from __future__ import annotations

import json
import logging
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from notewell.errors import NotewellError, Remedy
from notewell.runtime import Runtime, open_runtime, store_place
from notewell.services.driver_errors import interrupted

app = typer.Typer(
    name="notewell",
    help="Notewell: a knowledge and memory server for AI agents. Index a vault, search it, serve it over MCP.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)

VaultOpt = Annotated[
    str | None, typer.Option("--vault", help="The vault folder (default: $NOTEWELL_VAULT, else the current folder).")
]
DbOpt = Annotated[
    str | None,
    typer.Option("--db", help="The store: a SQLite file or a postgresql:// URL (default: $NOTEWELL_DB, "
                              "else <vault>/.notewell/index.db)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON (every field by name) instead of rows.")]
PortOpt = Annotated[int, typer.Option("--port", min=1, max=65535, help="The port to listen on (1 to 65535).")]

F = TypeVar("F", bound=Callable[..., Any])


# The services name fields and remedies in their own terms; the command line words them as its flags and commands.
CLI_FIELDS = {"email": "EMAIL", "id": "ID", "handle": "--handle", "role": "--role", "name": "--name",
              "user": "--user", "project": "--project", "scopes": "--scopes", "expires": "--expires",
              "as": "--as", "path": "--path", "expected_version": "--expected-version", "fields": "--field",
              "old": "--old", "heading": "--heading", "content": "--content", "new_path": "NEW_PATH",
              "person": "--person", "memory_type": "--type", "expires_at": "--expires-at", "type": "--type",
              "before": "--before", "description": "--description", "framework": "--framework",
              "language": "--language", "since": "--since", "limit": "--limit"}
CLI_REMEDIES: dict[Remedy, str] = {
    "list-users": "see 'notewell user list'",
    "list-tokens": "see 'notewell token list'",
    "set-project": "change it with 'notewell project set'",
    "grant": "grant access first with 'notewell grant'",
    "mint-token": "mint a new one with 'notewell token mint'",
    "choose-handle": "choose another with --handle",
    "start-session": "an agent opens sessions (brain_start_session); list yours with 'notewell brain sessions'",
    "list-brain-projects": "see 'notewell brain projects'",
    "user-scoped": "act as a user with --as EMAIL",
    "list-projects": "see 'notewell project list'",
    "create-unversioned": "leave out --expected-version to create it",
    "overwrite-whole": "to replace it whole, pass --overwrite (with --expected-version)",
    "repair-store": "'notewell doctor' names the damaged part, and 'notewell repair' rebuilds the store's indexes",
    "list-proposals": "see 'notewell brain proposals'",
    "list-retired": "'notewell brain retired' lists what evolution retired",
}


def cli_message(exc: NotewellError, arguments: Mapping[str, str] | None = None) -> str:
    """The error as the command line words it: its flags for the fields (or the command's own ``arguments``
    where a field is given as a positional one: PROJECT, ID), its commands for the remedy."""
    words = {**CLI_FIELDS, **(arguments or {})}
    field = words.get(exc.field, exc.field) if exc.field else None
    detail = exc.detail.removeprefix(f"VALIDATION: {exc.field}: ")  # the brain's errors carry their field inside
    text = f"{field}: {detail}" if field else detail
    return f"{text}; {CLI_REMEDIES[exc.remedy]}" if exc.remedy else text


def fail(message: str, code: int = 1) -> typer.Exit:
    err_console.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


@contextmanager
def runtime(vault: str | None, db: str | None, *, create: bool = True,
            arguments: Mapping[str, str] | None = None, db_flag: str = "--db") -> Iterator[Runtime]:
    """Open the runtime for one command; a NotewellError becomes one line on stderr and exit 1. A store a newer
    Notewell has upgraded is refused: this code would misread or miswrite the columns it does not know (a
    running server says so on /readyz; doctor reports it without this check). ``db_flag``: the option that
    named the store, when it is not --db (migrate's --from and --to)."""
    rt: Runtime | None = None
    try:
        rt = open_runtime(vault, db, create=create)
        ahead = rt.health.schema_ahead()
        if ahead:
            raise fail(f"{rt.store_url}: a newer Notewell upgraded this store's schema ({', '.join(ahead)}); "
                       "upgrade this notewell to the servers' version, then run the command again")
        yield rt
    except NotewellError as exc:
        message = cli_message(exc, arguments)
        raise fail(f"{db_flag}:{message.removeprefix('--db:')}" if message.startswith("--db:") else message) from None
    finally:
        if rt is not None:
            rt.close()


@dataclass
class Filling:
    """A new store being filled (``store_removed_on_failure``)."""

    new: bool  # no store was there: a failure takes away what the command made
    kept: bool = False

    def keep(self) -> None:
        """The filling is done: what follows may fail, the store stays."""
        self.kept = True

    def undone(self) -> str:
        """What an interrupt or a failure before ``keep`` did to the store (the end of the command's one line)."""
        return "; the new store it had begun is removed" if self.new else "; the store holds what it held"


@contextmanager
def store_removed_on_failure(vault: str | None, db: str | None) -> Iterator[Filling]:
    """A command that fills a new store (import, restore, migrate's target) and fails leaves no new store behind
    (store/new_store.py): an empty store where none was would be taken for the result. A store that was there is
    left as it was, and so is a new one once the command calls ``keep`` (the filling done, what follows may
    fail)."""
    place = store_place(vault, db)
    filling = Filling(place is not None and place.new)
    try:
        yield filling
    except BaseException:
        if place is not None and not filling.kept:
            place.discard()
        raise


class Interrupt:
    """What Ctrl-C would leave of a command now, in its words; the command updates it as it goes."""

    def __init__(self, left: str) -> None:
        self.left = left


@contextmanager
def ends_on_interrupt(command: str, left: str) -> Iterator[Interrupt]:
    """Ctrl-C (SIGINT) in the block ends the command with one line on stderr, "notewell COMMAND: interrupted;
    LEFT" (what the interrupt left, as the block last said it), and exit status 130, as a shell reports a command
    that SIGINT ended; never exit 70 with SQLite's "user-defined function raised exception", which is how an
    interrupt landing in a function SQLite calls reached here (services/driver_errors.py). The outermost context
    of its command, so that what the block undoes on the way out (a transaction rolled back, a new store taken
    away) is done when the line is said."""
    state = Interrupt(left)
    with _driver_quiet_once_interrupted() as sigint:
        try:
            yield state
        except BaseException as exc:
            if not interrupted(exc, sigint_seen=sigint.seen):
                raise
            _say_interrupted(command, state)


@dataclass
class _Sigint:
    seen: bool = False


@contextmanager
def _driver_quiet_once_interrupted() -> Iterator[_Sigint]:
    """From a Ctrl-C on, psycopg's complaints on the way out ("error ignored in rollback ... another command is
    already in progress": the query the interrupt cut) are not said: the one line is what the command says. Yields
    whether a SIGINT arrived."""
    sigint = _Sigint()

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        sigint.seen = True
        signal.default_int_handler(signum, frame)

    drivers = [logging.getLogger(name) for name in ("psycopg", "psycopg.pool", "psycopg.transaction")
               ]  # a filter is not inherited

    def quiet(_record: logging.LogRecord) -> bool:
        return not sigint.seen

    before = signal.signal(signal.SIGINT, on_sigint)
    for driver in drivers:
        driver.addFilter(quiet)
    try:
        yield sigint
    finally:
        for driver in drivers:
            driver.removeFilter(quiet)
        signal.signal(signal.SIGINT, before)


def _say_interrupted(command: str, state: Interrupt) -> None:
    # written past Rich's console: Ctrl-C landing inside its print of a line (the command's first) leaves that
    # line in its buffer, and its next print wrote it again
    sys.stderr.write(f"notewell {command}: interrupted; {state.left}\n")
    sys.stderr.flush()
    raise typer.Exit(130) from None


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
