"""What a repository written once needs of a backend, and the DDL words that differ between them.

Statements are written with ``?`` placeholders; a backend that binds another way (PostgreSQL: ``%s``)
rewrites them. DDL templates name the types that differ: ``{key}`` (text compared and sorted by code point),
``{flag}`` with ``{true}``/``{false}`` defaults, and ``{serial}`` (a generated integer primary key).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


class Executor(Protocol):
    """A connection as a repository uses it: one statement at a time, ``?`` placeholders."""

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Cursor: ...


class Dialect(Protocol):
    @property
    def integrity_error(self) -> type[Exception]:
        """What the driver raises on a duplicate key or a broken reference."""
        ...

    def render(self, template: str) -> str:
        """A DDL template with its {key}, {flag}, {true}, {false} and {serial} words filled in."""
        ...

    def migrate(self, component: str, migrations: Sequence[str]) -> None:
        """Apply the missing steps (already rendered) of ``component`` in order."""
        ...

    def reading(self) -> AbstractContextManager[Executor]:
        """A connection for reads (inside a transaction of this thread: that transaction's)."""
        ...

    def transaction(self) -> AbstractContextManager[Executor]:
        """A write transaction: committed on success, rolled back on error; nested calls join it."""
        ...

    def text(self, value: str) -> str:
        """``value`` as a text column can hold it (PostgreSQL text cannot hold NUL)."""
        ...


def marks(n: int) -> str:
    """``n`` placeholders for a VALUES list."""
    return ", ".join("?" * n)
