"""What a repository written once needs of a backend, and the DDL words that differ between them.

Statements are written with ``?`` placeholders; a backend that binds another way (PostgreSQL: ``%s``)
rewrites them. DDL templates name the types that differ: ``{key}`` (text compared and sorted by code point),
``{flag}`` with ``{true}``/``{false}`` defaults, ``{real}`` (a double), ``{blob}`` (bytes), ``{int64}`` (a
64-bit integer), ``{serial}`` (a generated integer primary key) and ``{rowid}`` (the same, which an insert may
also set, and which SQLite may hand out again after the last row is deleted); ``{without_rowid}`` ends a
CREATE TABLE whose rows live in its primary key's b-tree (SQLite's WITHOUT ROWID; nothing on PostgreSQL);
``{by_code}`` follows a plain TEXT column compared by code point, in an index and in the statements it serves
(PostgreSQL's COLLATE "C"; nothing on SQLite, whose BINARY order is the code points').
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar, Protocol

from notewell.store.shared.migrations import Migration, ahead, migrate


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


class Executor(Protocol):
    """A connection as a repository uses it: one statement at a time, ``?`` placeholders. A statement
    without parameters is sent as written (DDL may hold any text)."""

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Cursor: ...
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Any: ...


class Dialect(ABC):
    """A backend as the shared repositories see it; a backend's subclass supplies its connections."""

    integrity_error: ClassVar[type[Exception]]
    """What the driver raises on a duplicate key or a broken reference."""
    words: ClassVar[Mapping[str, str]]
    """The DDL words of ``render``: key, flag, true, false, real, blob, int64, serial, rowid, without_rowid,
    by_code."""
    position: ClassVar[str]
    """The function giving a substring's position in a text, 0 when it is absent (instr, strpos)."""
    lock: ClassVar[str]
    """What a SELECT in a write transaction ends with to lock the rows it reads ('' where the transaction
    locks the database)."""
    share_lock: ClassVar[str]
    """The same for a lock that other readers may share but a writer of those rows waits for."""

    def render(self, template: str) -> str:
        """A DDL template with its words ({key}, {flag}, ...) filled in."""
        return template.format_map(self.words)

    def rendered(self, migrations: Sequence[Migration]) -> list[Migration]:
        """Migrations written as templates, each statement rendered (a step written as one string is left
        for the runner to refuse)."""
        return [steps if isinstance(steps, str) else tuple(self.render(s) if isinstance(s, str) else s for s in steps)
                for steps in migrations]

    def migrate(self, component: str, migrations: Sequence[Migration]) -> None:
        """Apply the missing steps (already rendered) of ``component`` in order (shared/migrations.py)."""
        migrate(self.migrating(), component, migrations, type(self).__name__, reading=self.reading)

    def schema_ahead(self) -> list[str]:
        """The components a newer Notewell has upgraded past this code (shared/migrations.py's ``ahead``)."""
        with self.reading() as conn:
            return ahead(conn, type(self).__name__)

    @abstractmethod
    def migrating(self) -> AbstractContextManager[Executor]:
        """A write transaction holding the store's migration lock: one process migrates at a time."""

    @abstractmethod
    def reading(self) -> AbstractContextManager[Executor]:
        """A connection for reads (inside a transaction of this thread: that transaction's)."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Executor]:
        """A write transaction: committed on success, rolled back on error; nested calls join it."""

    @abstractmethod
    def instance(self) -> str | None:
        """What tells this store apart from every copy of it (a backup used as a store, a dump restored
        elsewhere), read from the database itself and never from its rows, which a copy carries: the same
        whatever path, symlink or host name reaches it. None when it cannot be told."""

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """A condition that ``column`` is one of ``values`` (at least one), with its parameters."""
        return f"{column} IN ({marks(len(values))})", list(values)

    def unindexed(self, column: str) -> str:
        """``column`` as a condition the planner should not pick an index for (SQLite: ``+column``), where a
        narrower condition on the primary key is meant to lead."""
        return column

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[Any]:
        """The rows of a read, fetched before the first is handed over (the connection goes back first)."""
        with self.reading() as conn:
            rows = conn.execute(sql, params).fetchall()
        yield from rows

    def text(self, value: str) -> str:
        """``value`` as a text column can hold it (PostgreSQL's overrides: its text cannot hold NUL)."""
        return value


def marks(n: int) -> str:
    """``n`` placeholders for a VALUES list."""
    return ", ".join("?" * n)
