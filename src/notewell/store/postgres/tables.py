"""The table walk on PostgreSQL: the catalog from information_schema and pg_catalog, a REPEATABLE READ
read-only transaction for the snapshot, a server-side cursor for streaming, and the word columns computed
as rows are loaded (lexemes.py, as the memories and brain stores compute them)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

from notewell.errors import StoreCannotWrite
from notewell.store.postgres import lexeme_pool, lexemes, live_stems, word_totals
from notewell.store.postgres.database import PostgresDatabase, read_only
from notewell.store.postgres.dialect import PgExecutor, PostgresDialect, bound
from notewell.store.shared.dialect import Executor
from notewell.store.shared.tables import AfterLoad, Batch, Bulk, Column, Computed, Derived, SqlTables

_KINDS = {"text": "text", "integer": "integer", "bigint": "integer", "smallint": "integer", "boolean": "flag",
          "double precision": "real", "real": "real", "bytea": "blob"}
CURSOR_ROWS = 1000


def _memory_words(table: str, rows: Sequence[Mapping[str, Any]]) -> list[Any]:
    return list(lexemes.tsvectors(table, [(r["title"], r["content"], r["tags"], r["path"]) for r in rows]))


def _piece_words(rows: Sequence[Mapping[str, Any]]) -> list[Any]:
    """As PostgresBrain.index computes a piece's words (session_words), a batch at once."""
    return list(lexemes.tsvectors("stems", [(r["body"] or "", "", "", "") for r in rows]))


_DERIVED: dict[str, Derived] = {  # module-level functions: lexeme_pool hands them to other processes
    "memories": {"words": ("?::tsvector", partial(_memory_words, "words")),
                 "stems": ("?::tsvector", partial(_memory_words, "stems"))},
    "brain_session_words": {"words": ("?::tsvector", _piece_words)},
}


class PostgresTables(SqlTables):
    def __init__(self, db: PostgresDatabase, after_load: AfterLoad | None = None) -> None:
        self.db = db
        super().__init__(PostgresDialect(db), after_load)

    def cannot_write(self) -> StoreCannotWrite | None:
        """The database read-only (a standby, default_transaction_read_only), or a write refused lately (a full
        disk on the database's server)."""
        with self.db.connection() as conn:
            row = conn.execute("SHOW transaction_read_only").fetchone()
        if row is not None and row[0] == "on":
            return read_only(self.db.url)
        return self.db.refused()

    def _table_names(self, conn: Executor) -> list[str]:
        return [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
            " AND table_type = 'BASE TABLE'").fetchall()]

    def _columns(self, conn: Executor, table: str) -> list[Column]:
        return [Column(r[0], _KINDS.get(r[1], r[1])) for r in conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()"
            " AND table_name = ? ORDER BY ordinal_position", (table,)).fetchall()]

    def _key(self, conn: Executor, table: str) -> list[str]:
        return [r[0] for r in conn.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
            " AND a.attnum = ANY(i.indkey) WHERE i.indrelid = to_regclass(?) AND i.indisprimary"
            " ORDER BY array_position(i.indkey::int2[], a.attnum)", (table,)).fetchall()]

    def _references(self, conn: Executor) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in conn.execute(
            "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint"
            " WHERE contype = 'f' AND connamespace = current_schema()::regnamespace").fetchall()]

    @contextmanager
    def _snapshot(self) -> Iterator[Executor]:
        with self.db.transaction() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield PgExecutor(conn)

    def _walk(self, conn: Executor, sql: str, params: Sequence[Any] = ()) -> Iterator[Sequence[Any]]:
        assert isinstance(conn, PgExecutor)
        with conn.conn.cursor(name="notewell_walk") as cur:
            cur.itersize = CURSOR_ROWS
            if params:
                cur.execute(bound(sql), params)
            else:
                cur.execute(sql)
            yield from cur

    def _ordered(self, column: Column) -> str:
        return f'{column.name} COLLATE "C"' if column.kind == "text" else column.name

    def _before_rows(self, conn: Executor, table: str) -> None:
        """A table whose word totals a trigger keeps (word_totals.py) is counted once when the load ends instead:
        a trigger's update per loaded row would pile up versions of one row. The live memories' stems are filled
        once at the end too (live_stems.py)."""
        if table in word_totals.TOTALLED:
            conn.execute(word_totals.suspended(table))
        if table == "memories":
            conn.execute(live_stems.suspended())

    def _derived(self, table: str) -> Derived:
        return _DERIVED.get(table, {})

    def _insert_head(self, table: str, columns: Sequence[str]) -> str:
        # a key GENERATED ALWAYS (the audit log's) takes the carried value only when told to
        return f"INSERT INTO {table} ({', '.join(columns)}) OVERRIDING SYSTEM VALUE"

    def _derive(self, table: str, batches: Iterator[Batch]) -> Iterator[tuple[Batch, Computed]]:
        """The word vectors computed ahead in worker processes (lexeme_pool.py)."""
        derived = self._derived(table)
        if not derived:
            return super()._derive(table, batches)
        return lexeme_pool.computed_ahead([compute for _, compute in derived.values()], batches)

    def _defer_indexes(self, conn: Executor, table: str) -> list[str]:
        """The table's word indexes (GIN): built at the end of a load, from every row at once, in a fraction of
        the time that inserting each row's words into them takes. Dropped as the table's first rows come (after
        the load checked that the store is empty, so a refused import never locks a store's tables)."""
        found = conn.execute(
            "SELECT schemaname, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
            " AND tablename = ? AND indexdef LIKE '% USING gin %' ORDER BY indexname", (table,)).fetchall()
        for schema, name, _ in found:
            conn.execute(f'DROP INDEX "{schema}"."{name}"')
        return [definition for _, _, definition in found]

    def _bulk(self, conn: Executor, table: str, columns: Sequence[str]) -> Bulk:
        """A batch by one COPY (text format: the server parses each value, a word vector's text too) instead of
        a round of INSERTs; COPY writes a GENERATED ALWAYS key's given value as OVERRIDING SYSTEM VALUE does."""
        assert isinstance(conn, PgExecutor)
        sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"

        def write(rows: Sequence[Sequence[Any]]) -> None:
            with conn.conn.cursor() as cur, cur.copy(sql) as copy:
                for row in rows:
                    copy.write_row(row)
        return write

    def _after_load(self, conn: Executor, tables: Sequence[str]) -> None:
        """Each generated key's sequence moved past the largest loaded value, so new rows never collide; each
        loaded table's word totals counted, the live memories' stems filled (``_before_rows``)."""
        for table in word_totals.TOTALLED:
            if table in tables:
                for statement in word_totals.recounted(table):
                    conn.execute(statement)
        if "memories" in tables:
            for statement in live_stems.refilled():
                conn.execute(statement)
        for table, column in conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
                " AND is_identity = 'YES'").fetchall():
            if table in tables:
                conn.execute(f"SELECT setval(pg_get_serial_sequence(?, ?), coalesce(max({column}), 0) + 1, false)"
                             f" FROM {table}", (table, column))
