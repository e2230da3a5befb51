"""One migration runner for both backends: each component's steps, applied once, in order.

A migration is a sequence of SQL statements, each run as it is written (never cut at ``;``, so a
string literal, a trigger body or a DO block may hold any text). Which steps a database has is kept in
``schema_migrations`` (component, version), version being the step's place in its list from 1: a step
once released is never changed or removed, and a new one is appended.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the dialect runs this module; it needs nothing else of the dialect
    from notewell.store.shared.dialect import Executor

Migration = Sequence[str]

_BOOKKEEPING = ("CREATE TABLE IF NOT EXISTS schema_migrations ("
                " component TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (component, version))")


def migrate(migrating: AbstractContextManager[Executor], component: str, migrations: Sequence[Migration]) -> None:
    """Apply the steps of ``component`` the database lacks, in one transaction holding the migration lock
    (``migrating``), so that processes starting at once apply each step once."""
    for version, steps in enumerate(migrations, start=1):
        if isinstance(steps, str):
            raise TypeError(f"migration {version} of {component}: a migration is a sequence of statements, "
                            "one string each, not one script; write it as a tuple of its statements")
    with migrating as conn:
        conn.execute(_BOOKKEEPING)
        done = {v for (v,) in conn.execute(
            "SELECT version FROM schema_migrations WHERE component = ?", (component,)).fetchall()}
        for version, steps in enumerate(migrations, start=1):
            if version in done:
                continue
            for statement in steps:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (component, version) VALUES (?, ?)", (component, version))
