"""Memories on SQLite: the rows, the one-live-copy rule and two FTS5 word indexes.

Two external-content FTS5 tables index title, content, tags and path of the *live* memories only
(a supersede or a forget removes the row from both, so searches need no liveness filter):

- ``memory_words``  (unicode61): whole words, case and accents folded. The strict search asks it for
  every term as a quoted token, so a term never matches a longer word or another form of itself.
- ``memory_stems``  (porter over unicode61): English stems. The tolerant search asks it for any term,
  a term of 3+ characters also as a prefix (``"tok"*``), ranked by bm25.

The one-live-copy rule is a partial UNIQUE index on (project, path, content_hash) over live rows, and
a write is ``INSERT ... ON CONFLICT DO NOTHING`` followed by reading the row that won: concurrent
writers of the same content all get the same ref.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from notewell.errors import Conflict
from notewell.records.memories import MemoryHit, MemoryInput, MemoryQuery, MemoryRecord
from notewell.store.memory_rows import MEMORY_COLUMNS, memory_from_row, searched_fields, tags_json, written
from notewell.store.shared.dialect import Executor
from notewell.store.shared.meaning import QUEUE_ITEM, drop_vector
from notewell.store.shared.memories import SqlMemories, search_conditions
from notewell.store.shared.memory_documents import tie
from notewell.store.shared.migrations import Migration
from notewell.store.sqlite.database import WORD_TEXT_SQL, SqliteDatabase
from notewell.store.sqlite.dialect import SqliteDialect
from notewell.word_breaks import word_text

FIELDS: tuple[str, ...] = ("title", "content", "tags", "path")
# What the word indexes read of a memory: each field through word_breaks.word_text (a function registered on
# every connection by database.py). Never 'rebuild' them: that reads the fields as they are.
WORD_TEXT_FIELDS = ", ".join(f"{WORD_TEXT_SQL}({f})" for f in FIELDS)
MEMORY_INDEXES = ("memory_words", "memory_stems")
# Each word index as the migrations make it today (a repair makes it again so: store/sqlite/index_rebuild.py)
MEMORY_INDEX_DDL = {
    "memory_words": "CREATE VIRTUAL TABLE memory_words USING fts5 (title, content, tags, path, content = 'memories',"
                    " content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2')",
    "memory_stems": "CREATE VIRTUAL TABLE memory_stems USING fts5 (title, content, tags, path, content = 'memories',"
                    " content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2', prefix = '3 4 5 6 7 8')",
}


def fill_memory_index(index: str) -> str:
    """The statement that fills the (empty) word index ``index`` with the live memories, as the writer indexes them."""
    return (f"INSERT INTO {index} (rowid, title, content, tags, path) SELECT id, {WORD_TEXT_FIELDS} FROM memories"
            " WHERE deleted_at IS NULL AND superseded_by IS NULL")


# Both word indexes emptied and filled again with the live memories (a load)
REINDEX_MEMORIES = tuple(statement for index in MEMORY_INDEXES for statement in (
    f"INSERT INTO {index} ({index}) VALUES ('delete-all')", fill_memory_index(index)))

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY,
            ref TEXT NOT NULL UNIQUE,
            project TEXT NOT NULL,
            author_user_id TEXT NOT NULL,
            author_token_id TEXT,
            memory_type TEXT NOT NULL CHECK (memory_type IN ('durable', 'working')),
            path TEXT NOT NULL,
            title TEXT NOT NULL,
            content TEXT NOT NULL,
            tags TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            created TEXT NOT NULL,
            updated TEXT NOT NULL,
            expires_at TEXT,
            superseded_by TEXT,
            deleted_at TEXT,
            deleted_by TEXT,
            delete_reason TEXT
        )
        """,
        """
        CREATE UNIQUE INDEX memories_one_live_copy ON memories (project, path, content_hash)
            WHERE deleted_at IS NULL AND superseded_by IS NULL
        """,
        "CREATE INDEX memories_project_path ON memories (project, path)",
        MEMORY_INDEX_DDL["memory_words"],
        """
        CREATE VIRTUAL TABLE memory_stems USING fts5 (title, content, tags, path, content = 'memories',
            content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2', prefix = '3')
        """,
    ),
    # Prefix indexes for 3 to 8 characters: a prefix query then reads one precomputed doclist instead of
    # merging every matching term's (4 ms -> 1 ms for a common word over 100k memories; index +75%).
    (
        "DROP TABLE memory_stems",
        MEMORY_INDEX_DDL["memory_stems"],
        "INSERT INTO memory_stems (memory_stems) VALUES ('rebuild')",
        """
        INSERT INTO memory_stems (memory_stems, rowid, title, content, tags, path)
            SELECT 'delete', id, title, content, tags, path FROM memories
            WHERE deleted_at IS NOT NULL OR superseded_by IS NOT NULL
        """,
    ),
    # Listing a project's memories by creation (as PostgreSQL has had from its first step).
    (
        "CREATE INDEX IF NOT EXISTS memories_project_created ON memories (project, created)",
    ),
    # Private memories (only their author sees them): one live copy per place and content *and* audience,
    # so another person writing the same words there never receives the private memory's ref.
    (
        "ALTER TABLE memories ADD COLUMN private_to TEXT",
        "DROP INDEX memories_one_live_copy",
        """
        CREATE UNIQUE INDEX memories_one_live_copy ON memories (project, path, content_hash, COALESCE(private_to, ''))
            WHERE deleted_at IS NULL AND superseded_by IS NULL
        """,
    ),
]

RANK_WINDOW = 1000
BM25_WEIGHTS = "4.0, 1.0, 2.0, 2.0"  # title, content, tags, path: a word in the title says more
_SCRATCH = {"memory_words": "words", "memory_stems": "stems"}  # lexemes' in-memory tables, same tokenizers


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def strict_expression(terms: Sequence[str]) -> str:
    """Every term as a whole word (a run of CJK characters as the phrase of its characters: word_breaks.py)."""
    return " AND ".join(_quote(word_text(t)) for t in terms)


def tolerant_expression(terms: Sequence[str]) -> str:
    return " OR ".join(_quote(word_text(t)) + ("*" if len(t) >= 3 else "") for t in terms)


class SqliteMemories(SqlMemories):
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        super().__init__(SqliteDialect(db), MIGRATIONS)

    # --- writes ---------------------------------------------------------------------------------------

    def add(self, memory: MemoryInput, supersedes: str | None = None) -> tuple[MemoryRecord, bool]:
        with self.db.transaction() as conn:
            retired = self._retire_expired_twin(conn, memory)
            cur = conn.execute(
                "INSERT INTO memories (ref, project, author_user_id, author_token_id, memory_type, path, title,"
                " content, tags, content_hash, created, updated, expires_at, private_to)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (memory.ref, memory.project, memory.author_user_id, memory.author_token_id, memory.memory_type,
                 memory.path, memory.title, memory.content, tags_json(memory.tags),
                 memory.content_hash, memory.created, memory.created, memory.expires_at, memory.private_to),
            )
            if cur.rowcount == 0:
                row = conn.execute(
                    f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.project = ? AND m.path = ? AND m.content_hash = ?"
                    " AND COALESCE(m.private_to, '') = ? AND m.deleted_at IS NULL AND m.superseded_by IS NULL",
                    (memory.project, memory.path, memory.content_hash, memory.private_to or ""),
                ).fetchone()
                if supersedes is not None and supersedes != row[0]:  # (ref is MEMORY_COLUMNS' first)
                    self._supersede(conn, supersedes, row[0], memory.created)
                return memory_from_row(row), False
            new_id = int(cur.lastrowid or 0)
            self._index(conn, new_id)
            conn.execute(QUEUE_ITEM, ("memory", new_id))
            tie(conn, new_id, memory.documents)
            if supersedes is not None and supersedes not in (memory.ref, retired):
                self._supersede(conn, supersedes, memory.ref, memory.created)
            return written(memory), True

    def _index(self, conn: Executor, row_id: int) -> None:
        for table in MEMORY_INDEXES:
            conn.execute(f"INSERT INTO {table} (rowid, title, content, tags, path) SELECT id, {WORD_TEXT_FIELDS}"
                         " FROM memories WHERE id = ?", (row_id,))

    def _unindex(self, conn: Executor, row_id: int) -> None:
        for table in MEMORY_INDEXES:
            conn.execute(f"INSERT INTO {table} ({table}, rowid, title, content, tags, path)"
                         f" SELECT 'delete', id, {WORD_TEXT_FIELDS} FROM memories WHERE id = ?", (row_id,))

    def _reword(self, conn: Executor, row_id: int) -> None:
        """Nothing to do: the row keeps no words (its FTS5 indexes read its fields, ``_index``)."""

    def _supersede(self, conn: sqlite3.Connection, old_ref: str, new_ref: str, at: str) -> None:
        row = conn.execute(
            "SELECT id FROM memories WHERE ref = ? AND deleted_at IS NULL AND superseded_by IS NULL", (old_ref,)
        ).fetchone()
        if row is None:
            raise Conflict(f"supersedes: {old_ref} was superseded or forgotten meanwhile; search again for "
                           "the current memory")
        self._unindex(conn, row[0])
        drop_vector(conn, "memory", row[0])
        conn.execute("UPDATE memories SET superseded_by = ?, updated = ? WHERE id = ?", (new_ref, at, row[0]))

    # --- reads ----------------------------------------------------------------------------------------

    def strict(self, query: MemoryQuery) -> list[MemoryHit]:
        return self._search("memory_words", strict_expression(query.terms), query)

    def tolerant(self, query: MemoryQuery) -> list[MemoryHit]:
        return self._search("memory_stems", tolerant_expression(query.terms), query)

    def _search(self, table: str, expression: str, query: MemoryQuery) -> list[MemoryHit]:
        if not query.projects or not query.terms:
            return []
        where, values = search_conditions(query, self.dialect)
        params: list[Any] = [expression, *values]
        sql_from = (f"FROM {table} JOIN memories m ON m.id = {table}.rowid"
                    f" WHERE {table} MATCH ? AND {' AND '.join(where)}")
        # bm25 costs a few microseconds per matching row: rank only the RANK_WINDOW newest matches (rows are
        # numbered in write order and FTS5 walks them newest first), in one pass.
        ranked = self.db.conn.execute(
            f"SELECT id, relevance FROM (SELECT m.id AS id, -bm25({table}, {BM25_WEIGHTS}) AS relevance {sql_from}"
            f" ORDER BY {table}.rowid DESC LIMIT ?) ORDER BY relevance DESC, id DESC LIMIT ?",
            [*params, RANK_WINDOW, query.limit],
        ).fetchall()
        if not ranked:
            return []
        ids = [row[0] for row in ranked]
        rows = {row[0]: row[1:] for row in self.db.conn.execute(
            f"SELECT m.id, {MEMORY_COLUMNS} FROM memories m WHERE m.id IN ({','.join('?' * len(ids))})", ids)}
        from notewell.store.postgres import lexemes  # shared with the PostgreSQL store (a late import: no cycle)

        # highlight() over just these rows, in a scratch in-memory FTS5 table: cheap, unlike a second MATCH
        matched = lexemes.matched(_SCRATCH[table], expression, searched_fields(rows)) if query.explain else {}
        return [MemoryHit(memory_from_row(rows[i]), max(float(score), 1e-9), matched.get(i, ())) for i, score in ranked]
