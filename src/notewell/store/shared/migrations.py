"""One migration runner for both backends: each component's steps, applied once, in order.

A migration is a sequence of SQL statements, each run as it is written (never cut at ``;``, so a
string literal, a trigger body or a DO block may hold any text), or of functions given the connection,
for a step SQL cannot write alone (PostgreSQL's word vectors computed again: store/postgres/word_breaks.py).
Which steps a database has is kept in ``schema_migrations`` (component, version), version being the step's
place in its list from 1: a step once released is never changed or removed, and a new one is appended.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the dialect runs this module; it needs nothing else of the dialect
    from notewell.store.shared.dialect import Executor

Step = str | Callable[["Executor"], None]
Migration = Sequence[Step]
KNOWN: dict[tuple[str, str], int] = {}
"""(backend, component) -> how many steps this code has: a database holding more was upgraded by a newer
Notewell (``ahead`` says so; /readyz answers 503 until this server is upgraded too)."""

_BOOKKEEPING = ("CREATE TABLE IF NOT EXISTS schema_migrations ("
                " component TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (component, version))")


def _applied(reading: Callable[[], AbstractContextManager[Executor]], component: str, count: int) -> bool:
    """Whether every one of the ``count`` steps of ``component`` is applied, as far as a plain read tells (False
    when it cannot tell: a new store has no bookkeeping table yet, and the locked path below decides)."""
    try:
        with reading() as conn:
            done = {v for (v,) in conn.execute(
                "SELECT version FROM schema_migrations WHERE component = ?", (component,)).fetchall()}
    except Exception:  # no such table (each backend names it its own way): a new store
        return False
    return done >= set(range(1, count + 1))


def migrate(migrating: AbstractContextManager[Executor], component: str, migrations: Sequence[Migration],
            backend: str = "", *, reading: Callable[[], AbstractContextManager[Executor]] | None = None) -> None:
    """Apply the steps of ``component`` the database lacks, in one transaction holding the migration lock
    (``migrating``), so that processes starting at once apply each step once."""
    KNOWN[(backend, component)] = len(migrations)
    for version, steps in enumerate(migrations, start=1):
        if isinstance(steps, str):
            raise TypeError(f"migration {version} of {component}: a migration is a sequence of statements, "
                            "one string each, not one script; write it as a tuple of its statements")
    if reading is not None and _applied(reading, component, len(migrations)):
        return  # read, not written: a store that cannot write (a full disk, a read-only file) still opens
    with migrating as conn:
        conn.execute(_BOOKKEEPING)
        done = {v for (v,) in conn.execute(
            "SELECT version FROM schema_migrations WHERE component = ?", (component,)).fetchall()}
        for version, steps in enumerate(migrations, start=1):
            if version in done:
                continue
            for statement in steps:
                if isinstance(statement, str):
                    conn.execute(statement)
                else:
                    statement(conn)
            conn.execute("INSERT INTO schema_migrations (component, version) VALUES (?, ?)", (component, version))


def ahead(conn: Executor, backend: str) -> list[str]:
    """The components whose database holds steps this code lacks, as "component N > M" ([]: the schema is
    this code's, or older and upgraded at open)."""
    found = conn.execute("SELECT component, max(version) FROM schema_migrations GROUP BY component").fetchall()
    return [f"{component} {version} > {KNOWN.get((backend, component), 0)}" for component, version in sorted(found)
            if int(version) > KNOWN.get((backend, component), 0)]
