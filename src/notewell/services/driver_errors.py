"""A database driver's error that reached a door untranslated, read for what it stands for.

The store translates its driver's errors where it reads (store/sqlite/database.py), but a row SQLite decodes as a
cursor is iterated fails inside the caller's loop, past any wrapper: iterating stays as fast as Python's sqlite3
makes it, and the doors' last guard asks here instead, so that a damaged row is still one line, never "internal
error".
"""

from __future__ import annotations

import sqlite3

from notewell.errors import NotewellError
from notewell.store.sqlite.database import damaged, failed_in_a_function
from notewell.store.sqlite.database import interrupted as sqlite_interrupted  # (a door may not import the store)

DRIVER_ERRORS: tuple[type[Exception], ...] = (sqlite3.DatabaseError,)  # what ``translated`` may read


def translated(exc: BaseException) -> NotewellError | None:
    """The NotewellError ``exc`` stands for (a damaged SQLite store), None for any other error."""
    return damaged(exc, None) if isinstance(exc, sqlite3.DatabaseError) else None


def interrupted(exc: BaseException, *, sigint_seen: bool = False) -> bool:
    """Whether ``exc`` stands for Ctrl-C: a KeyboardInterrupt, or SQLite's failure of a statement in which one landed
    inside a function SQLite called (store/sqlite/database.py: ``sql_function``), met where no wrapper read it.
    ``sigint_seen``: the caller knows a SIGINT arrived, so any such failure is the interrupt, even one that landed
    in the function's first or last instruction, outside the wrapper's ``try``."""
    return sqlite_interrupted(exc) or (sigint_seen and failed_in_a_function(exc))
