"""Every table of a store as plain rows: the walk behind export, import and migrate.

Which tables there are is read from the database itself (its catalog), never from a list kept by hand:
a table is carried unless ``EXCLUDED_TABLES`` (or ``TRIGRAM_SHARD``) says why not, or it is one of
the tables SQLite keeps for a full-text table (the backend names them), and a table that is
neither carried nor excluded stops the walk with an error naming it, so that a table a later migration
adds cannot be left out of an export silently. The same holds for columns: every column is carried but
the ones ``DERIVED_COLUMNS`` names (the search indexes a store computes from the others).

Rows are read in key order (text compared by code point on both backends) inside one snapshot, streamed;
they are written back in the order of the tables' references, and each backend then rebuilds what it
derives (``_derived`` and ``_after_load`` of its subclass).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from notewell.errors import NotewellError, StoreCannotWrite
from notewell.store.shared.audit import TYPED_TARGETS_NAME_NO_ONE
from notewell.store.shared.credentials import TYPED_KEYS_DROPPED
from notewell.store.shared.dialect import Dialect, Executor, marks
from notewell.store.shared.merge_match import MATCHED_BY, Lookup, Matching, Recognised, recognised, resolved
from notewell.store.shared.person import person_rows
from notewell.store.shared.project_rows import project_rows

VAULT = "the vault holds it: 'notewell index' rebuilds it on the target"
EXCLUDED_TABLES: Mapping[str, str] = {
    "schema_migrations": "the target's own migrations make its schema",
    "running_servers": "which servers run now: each server records itself when it starts",
    "web_sessions": "browser sessions: users sign in again on the target",
    "backups": "this store's own backup history, not the data's",
    "sign_in_secrets": "the key of the sign-in throttle's buckets for emails of no one: the target makes its own",
    "documents": VAULT, "document_regions": VAULT, "brains": VAULT, "skipped_files": VAULT,
    "vault_projects": VAULT, "project_documents": VAULT,
    "trigram_counts": "derived from the document index",
    "memory_words": "the memories' word index (SQLite): rebuilt from the memories on import",
    "memory_stems": "the memories' stem index (SQLite): rebuilt from the memories on import",
    "document_links": "the links the vault's documents hold: parsed again when the target indexes the vault",
    "document_links_pending": "the documents whose links (or meeting items) wait to be read: the target's own "
                              "indexing",
    "vectors": "made from the memories and sessions by the embedding model: every live one is queued again on "
               "import and re-embedded (notewell embed, or the server's runner)",
    "embedding_queue": "derived: the import queues every memory and session that has no vector",
    "meaning_generation": "the target's own count of vector writes",
    "jobs": "this store's work queue (the brain's learning loop): what its jobs wrote (knowledge) is carried; "
            "a job still pending is this store's to run",
    "kea_cross_marks": "how far this store's daily cross-session extraction has read each person's sessions: "
                       "the target's first run reads them again, and its dedup keeps what is known",
    "kea_budget": "what this store's KEA spent on its language model each day: the target keeps its own count",
    "word_totals": "how many rows each word index holds and their words (PostgreSQL), kept by a trigger as they "
                   "are loaded",
    "word_changes": "the recent changes of each word index's rows (PostgreSQL), logged by a trigger: a load "
                    "starts it anew",
    "word_changes_kept": "from which transaction on the log of word index changes is whole (PostgreSQL)",
    "live_memory_stems": "the live memories' stems and the columns a search reads (PostgreSQL), kept by a trigger: "
                         "a load fills it from the memories",
}
SCRUBBED_AFTER_LOAD = (*TYPED_KEYS_DROPPED, TYPED_TARGETS_NAME_NO_ONE)
"""What an earlier version kept of text typed at a failed sign-in, dropped from what a load brings (its
migrations did so in the store it ran on, not in the export it wrote)."""
TRIGRAM_SHARD = re.compile(r"document_trigrams_\d+")
"""The document trigram index's shards (SQLite): the vault holds what they index."""
DERIVED_COLUMNS: Mapping[tuple[str, str], str] = {
    ("memories", "words"): "the word index (PostgreSQL), computed from the memory on import",
    ("memories", "stems"): "the stem index (PostgreSQL), computed from the memory on import",
    ("memories", "word_count"): "the memory's length in words (PostgreSQL), computed from its stems",
    ("brain_session_words", "id"): "a piece's place in PostgreSQL's table, which nothing refers to",
    ("brain_session_words", "words"): "the piece's stems (PostgreSQL), computed from its body on import",
    ("brain_session_words", "word_count"): "the piece's length in words (PostgreSQL), computed from its stems",
}
NUMBERED_BY: Mapping[tuple[str, str], tuple[str, str]] = {
    ("brain_session_words", "session_seq"): ("brain_sessions", "seq"),
    ("memory_documents", "memory_id"): ("memories", "id"),
    ("note_journal", "undoes"): ("note_journal", "id"),
}
"""Columns holding a table's generated number: a merge renumbers them with it, and loads a row only when the
row it names was loaded (a session the target holds keeps its own pieces; a memory it holds, its own ties). A
table naming its own numbers (an undo naming the entry it undoes) is renumbered alone: every row of it loads."""
KINDS = ("text", "integer", "real", "flag", "blob")
BATCH_ROWS = 500


class LoadRefused(NotewellError):
    """A loaded row breaks a rule of the target (a reference to a row it lacks, a CHECK)."""


class UnclassifiedTable(NotewellError):
    """The store holds a table that is neither carried nor excluded with a reason."""


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # one of KINDS, or the backend's own type (a derived column)


@dataclass(frozen=True)
class Table:
    """A carried table: its carried columns (by name) and the columns its rows are ordered by."""

    name: str
    columns: tuple[Column, ...]
    order: tuple[str, ...]
    keyed: bool = False  # it has a primary key (a merge skips a row whose key the target holds)
    numbered: str | None = None  # the generated integer key (a merge renumbers it past the target's)

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


Derived = Mapping[str, tuple[str, Callable[[Sequence[Mapping[str, Any]]], list[Any]]]]
"""A table's derived columns: name -> (the placeholder's SQL, the values computed from a batch of rows, one per
row: a backend's tokenizer works faster on many rows at once)."""


Batch = list[Mapping[str, Any]]
"""Rows to load, values by column name."""
Computed = list[list[Any]]
"""A batch's derived values: per derived column, one value per row."""
Bulk = Callable[[Sequence[Sequence[Any]]], None]
"""Writes a batch of rows (values in the order of the columns it was made for) into one table."""


AfterLoad = Mapping[str, Callable[[Executor], None]]
"""Steps a load runs on a loaded table's rows in its transaction, by table: a store's migration that rewrites
rows (the memories' ``memory_paths``) ran before the load and would never see what the load brings."""


class SqlTables(ABC):
    """The walk over a backend's catalog: a backend supplies the catalog reads and what it derives."""

    def __init__(self, dialect: Dialect, after_load: AfterLoad | None = None) -> None:
        self.dialect = dialect
        self._after_load_steps = dict(after_load or {})

    # --- what a backend supplies ------------------------------------------------------------------------

    @abstractmethod
    def _table_names(self, conn: Executor) -> list[str]: ...

    @abstractmethod
    def _columns(self, conn: Executor, table: str) -> list[Column]: ...

    @abstractmethod
    def _key(self, conn: Executor, table: str) -> list[str]:
        """The primary key's columns, in order ([] when there is none)."""

    @abstractmethod
    def _references(self, conn: Executor) -> list[tuple[str, str]]:
        """(table, table it references) for every foreign key."""

    @abstractmethod
    def _snapshot(self) -> AbstractContextManager[Executor]:
        """A read-only transaction: every read in it sees the same moment, whatever is written meanwhile."""

    @abstractmethod
    def _walk(self, conn: Executor, sql: str, params: Sequence[Any] = ()) -> Iterator[Sequence[Any]]:
        """The rows of ``sql`` (``?`` placeholders) streamed (never all in memory)."""

    @abstractmethod
    def _ordered(self, column: Column) -> str:
        """``column`` as an ORDER BY term comparing text by code point."""

    def _shadows(self, conn: Executor) -> set[str]:
        """The tables the backend keeps for its own indexes (SQLite's FTS5 shadow tables)."""
        return set()

    def _derived(self, table: str) -> Derived:
        return {}

    def _insert_head(self, table: str, columns: Sequence[str]) -> str:
        return f"INSERT INTO {table} ({', '.join(columns)})"

    def _derive(self, table: str, batches: Iterator[Batch]) -> Iterator[tuple[Batch, Computed]]:
        """Each batch of rows to load with its derived columns' values (``_derived``'s order), in order. A
        backend may compute them ahead, in other processes (PostgreSQL's word vectors)."""
        derived = self._derived(table)
        for batch in batches:
            yield batch, [compute(batch) for _, compute in derived.values()]

    def _defer_indexes(self, conn: Executor, table: str) -> list[str]:
        """Drop the indexes of ``table`` that a load into an empty store builds faster once at its end than row by
        row; the statements that make them again (run before the commit)."""
        return []

    def _before_rows(self, conn: Executor, table: str) -> None:  # noqa: B027 (a hook: most backends need none)
        """What the backend does before a load writes the first rows into ``table`` (nothing by default)."""

    def _bulk(self, conn: Executor, table: str, columns: Sequence[str]) -> Bulk | None:
        """How the backend writes a batch of new rows faster than by INSERT (None: by INSERT). Used when the
        load is not a merge (a merge's INSERTs skip the rows the target holds)."""
        return None

    @abstractmethod
    def _after_load(self, conn: Executor, tables: Sequence[str]) -> None:
        """Rebuild what the backend derives from the loaded tables; bring generated keys past the loaded ones."""

    # --- the walk ---------------------------------------------------------------------------------------

    def tables(self) -> list[Table]:
        """Every carried table, referenced tables first (then by name); raises on an unclassified table."""
        with self.dialect.reading() as conn:
            return self._classified(conn)

    def _classified(self, conn: Executor) -> list[Table]:
        shadows = self._shadows(conn)
        names = sorted(n for n in self._table_names(conn)
                       if n not in EXCLUDED_TABLES and n not in shadows and not TRIGRAM_SHARD.fullmatch(n))
        tables: dict[str, Table] = {}
        for name in names:
            columns = [c for c in self._columns(conn, name) if (name, c.name) not in DERIVED_COLUMNS]
            odd = [c.name for c in columns if c.kind not in KINDS]
            if odd or not columns:
                raise UnclassifiedTable(
                    f"table {name}: column(s) {', '.join(odd) or '(none)'} of a type an export cannot carry; "
                    "name them in DERIVED_COLUMNS (store/shared/tables.py) with the reason, or carry them")
            by_name = {c.name: c for c in columns}
            key = [k for k in self._key(conn, name) if k in by_name]
            numbered = key[0] if len(key) == 1 and by_name[key[0]].kind == "integer" else None
            tables[name] = Table(name, tuple(sorted(columns, key=lambda c: c.name)), tuple(key or sorted(by_name)),
                                 bool(key), numbered)
        named = [(table, by[0]) for (table, _), by in NUMBERED_BY.items()]
        return _referenced_first(tables, [*self._references(conn), *named])

    def schema_ahead(self) -> list[str]:
        """The components a newer Notewell upgraded this store past ([]: its schema is this code's)."""
        return self.dialect.schema_ahead()

    @abstractmethod
    def cannot_write(self) -> StoreCannotWrite | None:
        """Why the store cannot write now (its disk full, it read-only), with the fix; None when nothing says so.
        Never waits for the write lock: readiness and doctor ask it while others write."""

    def counts(self) -> dict[str, int]:
        """The rows of each carried table, referenced tables first."""
        with self.dialect.reading() as conn:
            reader = TableReader(self, conn)
            return {t.name: reader.count(t.name) for t in self._classified(conn)}

    def held(self) -> list[str]:
        """The carried tables holding rows, each as "name (rows)" ([]: an empty store)."""
        return [f"{name} ({n})" for name, n in self.counts().items() if n]

    @contextmanager
    def reading(self) -> Iterator[TableReader]:
        """A reader over one snapshot of the store."""
        with self._snapshot() as conn:
            yield TableReader(self, conn)

    @contextmanager
    def loading(self, *, merge: bool = False) -> Iterator[TableLoader]:
        """A loader in one write transaction: rolled back whole if anything fails, derived indexes rebuilt
        before the commit, then each loaded table's ``after_load`` step run (on indexes that hold its rows)."""
        with self.dialect.transaction() as conn:
            loader = TableLoader(self, conn, merge)
            yield loader
            for definition in loader.deferred:
                conn.execute(definition)
            for statement in SCRUBBED_AFTER_LOAD:
                conn.execute(statement)
            self._after_load(conn, loader.loaded)
            for table, step in self._after_load_steps.items():
                if table in loader.loaded:
                    step(conn)

    def select(self, table: Table, where: str | None = None) -> str:
        by_name = {c.name: c for c in table.columns}
        order = ", ".join(f"{self._ordered(by_name[k])} NULLS FIRST" for k in table.order)  # as SQLite's default
        condition = f" WHERE {where}" if where else ""
        return f"SELECT {', '.join(table.names)} FROM {table.name}{condition} ORDER BY {order}"


class TableReader:
    def __init__(self, tables: SqlTables, conn: Executor) -> None:
        self._tables = tables
        self.conn = conn

    def rows(self, table: Table) -> Iterator[Sequence[Any]]:
        """The table's rows in its order, each a sequence of values in ``table.names`` order."""
        yield from self._tables._walk(self.conn, self._tables.select(table))

    def person_rows(self, table: Table, user_id: str) -> Iterator[Sequence[Any]]:
        """The rows of ``table`` that are the person ``user_id``'s (store/shared/person.py), in its order."""
        yield from self._chosen(table, person_rows(table.name), user_id)

    def project_rows(self, table: Table, project_id: str) -> Iterator[Sequence[Any]]:
        """The rows of ``table`` that are the project ``project_id``'s (store/shared/project_rows.py), in its
        order."""
        yield from self._chosen(table, project_rows(table.name), project_id)

    def _chosen(self, table: Table, where: str | None, value: str) -> Iterator[Sequence[Any]]:
        """The rows meeting ``where`` (each ``?`` is ``value``); none when there is no condition."""
        if where is not None:
            yield from self._tables._walk(self.conn, self._tables.select(table, where), [value] * where.count("?"))

    def count(self, table: str) -> int:
        row = self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row else 0


class TableLoader(TableReader):
    def __init__(self, tables: SqlTables, conn: Executor, merge: bool) -> None:
        super().__init__(tables, conn)
        self.merge = merge
        self.loaded: list[str] = []
        self.deferred: list[str] = []  # the indexes to build again before the commit (_defer_indexes)
        self._shifts: dict[tuple[str, str], int] = {}  # under merge: (table, column) -> what its numbers move by

    def target(self) -> dict[str, Table]:
        """The carried tables of the store being loaded, by name."""
        return {t.name: t for t in self._tables._classified(self.conn)}

    def insert(self, table: Table, columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> int:
        """Insert ``rows`` (values by column name, for ``columns``) in batches; the rows inserted. Under merge a
        row whose key the target holds is skipped, a row without a key that the target holds too (MATCHED_BY,
        store/shared/merge_match.py: ``rows`` is read twice then) is skipped, and generated numbers move past the
        target's."""
        kinds = {c.name: c.kind for c in table.columns}
        derived = self._tables._derived(table.name)
        names = [*columns, *derived]
        values = [*(marks(1) for _ in columns), *(sql for sql, _ in derived.values())]
        sql = f"{self._tables._insert_head(table.name, names)} VALUES ({', '.join(values)})"
        if self.merge and table.keyed:
            sql += " ON CONFLICT DO NOTHING"
        write = None
        self._tables._before_rows(self.conn, table.name)
        if not self.merge:
            self.deferred.extend(self._tables._defer_indexes(self.conn, table.name))
            write = self._tables._bulk(self.conn, table.name, names)
        shifts = self._merge_shifts(table, columns) if self.merge else {}
        matching = self._matching(table, columns, shifts)
        if matching and iter(rows) is rows:
            raise TypeError(f"table {table.name}: a merge reads its rows twice; pass them re-iterable, not an iterator")
        found = recognised(matching, rows, self._lookup(table)) if matching else Recognised()
        before = self.count(table.name)
        batches = self._batches(table, columns, rows, shifts, matching, found)
        for batch, computed in self._tables._derive(table.name, batches):
            self._insert(table, sql, self._params(table, batch, columns, kinds, computed), write)
        self.loaded.append(table.name)
        return self.count(table.name) - before

    def _batches(self, table: Table, columns: Sequence[str], rows: Iterable[Mapping[str, Any]],
                 shifts: Mapping[str, int], matching: Matching | None,
                 found: Recognised) -> Iterator[Batch]:
        """The rows to load, BATCH_ROWS at a time: under merge, renumbered, and without those the target holds."""
        batch: Batch = []
        for ordinal, given in enumerate(rows):
            if ordinal in found.skipped:
                continue
            moved = {**given, **{c: given[c] + by for c, by in shifts.items() if given[c] is not None}}
            batch.append(resolved(matching, moved, found) if matching else moved)
            if len(batch) == BATCH_ROWS:
                yield list(self._named_loaded(table, batch, columns))
                batch = []
        if batch:
            yield list(self._named_loaded(table, batch, columns))

    def _params(self, table: Table, batch: Sequence[Mapping[str, Any]], columns: Sequence[str],
                kinds: Mapping[str, str], computed: Computed) -> list[list[Any]]:
        """Each row's values as the target takes them (a flag a boolean), then its derived values; a text the
        target cannot hold (a NUL on PostgreSQL) refused, naming its column."""
        flags = [i for i, c in enumerate(columns) if kinds[c] == "flag"]
        holds_nul = self._tables.dialect.text("\x00") == "\x00"
        params: list[list[Any]] = []
        for i, row in enumerate(batch):
            values = [row[c] for c in columns]
            for j in flags:
                if values[j] is not None:
                    values[j] = bool(values[j])
            if not holds_nul:
                for column, value in zip(columns, values, strict=True):
                    if type(value) is str and "\x00" in value:
                        raise LoadRefused(f"table {table.name}: a row's {column} holds a NUL character (\\x00), "
                                          "which this store's text cannot hold; remove it on the source, then try "
                                          "again")
            params.append([*values, *(derived[i] for derived in computed)])
        return params

    def _insert(self, table: Table, sql: str, batch: list[list[Any]], write: Bulk | None) -> None:
        try:
            if write is not None:
                write(batch)
            else:
                self.conn.executemany(sql, batch)
        except self._tables.dialect.integrity_error as exc:
            reason = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
            raise LoadRefused(f"table {table.name}: a row names a row the target lacks, or breaks one of its rules "
                              f"({reason}); nothing was loaded") from None

    def _named_loaded(self, table: Table, batch: Sequence[Mapping[str, Any]],
                      columns: Sequence[str]) -> Sequence[Mapping[str, Any]]:
        """Under merge, the rows of ``batch`` whose renumbered references (NUMBERED_BY) name a row this merge
        loaded: every renumbered number is past the target's own, so one present in the target was loaded."""
        if not self.merge:
            return batch
        kept = list(batch)
        for column in columns:
            other, key = NUMBERED_BY.get((table.name, column), (table.name, ""))
            if other == table.name:
                continue
            wanted = sorted({row[column] for row in kept if row[column] is not None})
            present: set[Any] = set()
            for start in range(0, len(wanted), BATCH_ROWS):
                chunk = wanted[start:start + BATCH_ROWS]
                found = self.conn.execute(f"SELECT {key} FROM {other} WHERE {key} IN ({marks(len(chunk))})", chunk)
                present.update(r[0] for r in found.fetchall())
            kept = [row for row in kept if row[column] is None or row[column] in present]
        return kept

    def _matching(self, table: Table, columns: Sequence[str], shifts: Mapping[str, int]) -> Matching | None:
        """Under merge, how the rows of a table without a key of their own are recognised in the target."""
        if not self.merge or table.name not in MATCHED_BY:
            return None
        numbered = table.numbered if table.numbered in columns else None
        kinds = {c.name: c.kind for c in table.columns}
        return Matching(table.name, tuple(c for c in columns if c != numbered), numbered,
                        tuple(c for c in columns if NUMBERED_BY.get((table.name, c), ("", ""))[0] == table.name),
                        kinds, shifts.get(numbered, 0) if numbered else 0)

    def _lookup(self, table: Table) -> Lookup:
        def rows(where: str, params: Sequence[Any]) -> Iterator[Mapping[str, Any]]:
            for row in self._tables._walk(self.conn, self._tables.select(table, where), params):
                yield dict(zip(table.names, row, strict=True))
        return rows

    def _merge_shifts(self, table: Table, columns: Sequence[str]) -> dict[str, int]:
        """What each generated number of ``table`` moves by: past the target's largest (recorded for the
        columns that name it, loaded later)."""
        shifts: dict[str, int] = {}
        if table.numbered is not None and table.numbered in columns:
            row = self.conn.execute(f"SELECT coalesce(max({table.numbered}), 0) FROM {table.name}").fetchone()
            shifts[table.numbered] = self._shifts[(table.name, table.numbered)] = int(row[0]) if row else 0
        for column in columns:
            named = NUMBERED_BY.get((table.name, column))
            if named is not None:
                shifts[column] = self._shifts.get(named, 0)
        return shifts


def _referenced_first(tables: Mapping[str, Table], references: Iterable[tuple[str, str]]) -> list[Table]:
    """The tables in an order where each comes after those it references (by name where free)."""
    needs: dict[str, set[str]] = {name: set() for name in tables}
    for table, referenced in references:
        if table in needs and referenced in needs and referenced != table:
            needs[table].add(referenced)
    ordered: list[Table] = []
    while needs:
        ready = sorted(name for name, wanted in needs.items() if not wanted)
        if not ready:
            raise UnclassifiedTable(f"tables {', '.join(sorted(needs))} reference one another in a cycle")
        for name in ready:
            ordered.append(tables[name])
            del needs[name]
        for wanted in needs.values():
            wanted.difference_update(ready)
    return ordered
