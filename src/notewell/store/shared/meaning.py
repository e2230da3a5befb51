"""Vectors and the embedding queue, in SQL both backends run.

An item to embed is a memory (taught knowledge is a memory too) or a brain session. Whatever writes one puts
a row in ``embedding_queue`` in the same transaction (``QUEUE_ITEM``), so a committed item is queued work that
no crash can lose. A runner claims due rows with a lease (their ``next_at`` moved past now: a runner killed
mid-batch leaves them to be claimed again when it runs out), embeds them outside any transaction, and then in
one transaction writes each vector and deletes its queue row. A failure counts an attempt and sets the next
try further off (the runner decides when).

A batch costs the same statements whatever its size (up to ``ROWS`` items): the claim leases its rows in one
(and reads the texts in one a kind), the write locks the rows in one, writes the vectors in one and deletes the
rows in one, a failure counts its attempts in one. Each used to run four or five a row (issue 27).

``vectors`` holds one float16 vector per item and model, with the generation that wrote it (little-endian,
``DIMENSIONS`` values); reading a vector of another model is never done, so a new model re-embeds rather than
mixes. Forgetting or superseding a memory deletes its vector in the same transaction, and every read joins the
live row anyway.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from notewell.meaning.texts import memory_text, session_text
from notewell.records.meaning import Job, QueueState
from notewell.store.shared.dialect import Dialect, Executor, marks
from notewell.store.shared.migrations import Migration

KINDS = ("memory", "session")
ROWS = 500  # items a statement of the queue names at most: 2,500 parameters (SQLite takes 32,766, PostgreSQL 65,535)
_Row = TypeVar("_Row")
_UNHELD = re.compile("[\x00\ud800-\udfff]")  # what a failure's text may not hold: a NUL, a lone surrogate
_LIVE_MEMORY = "deleted_at IS NULL AND superseded_by IS NULL"
_SESSION_TEXT = "(prompt <> '' OR COALESCE(summary, '') <> '')"
"""A session with something to embed (``session_text`` of it is not empty): the others are neither queued nor
counted."""

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE vectors (
            kind {key} NOT NULL,
            item_id {int64} NOT NULL,
            model {key} NOT NULL,
            vector {blob} NOT NULL,
            PRIMARY KEY (kind, item_id)
        )
        """,
        """
        CREATE TABLE embedding_queue (
            kind {key} NOT NULL,
            item_id {int64} NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at {key} NOT NULL,
            error TEXT,
            PRIMARY KEY (kind, item_id)
        )
        """,
        "CREATE INDEX embedding_queue_due ON embedding_queue (next_at, kind, item_id)",
        # a store made before vectors: every live memory and every session is queued (the backfill)
        f"INSERT INTO embedding_queue (kind, item_id, attempts, next_at) SELECT 'memory', id, 0, '' FROM memories"
        f" WHERE {_LIVE_MEMORY}",
        "INSERT INTO embedding_queue (kind, item_id, attempts, next_at)"
        " SELECT 'session', seq, 0, '' FROM brain_sessions",
    ),
    # The vectors' generation: each write of vectors takes the next one (serialised on this row, so a reader
    # that sees generation g sees every vector of g and before), and a process's cache loads only the new ones.
    (
        "CREATE TABLE meaning_generation (id INTEGER PRIMARY KEY, value {int64} NOT NULL)",
        "INSERT INTO meaning_generation (id, value) VALUES (1, 0)",
        "ALTER TABLE vectors ADD COLUMN gen {int64} NOT NULL DEFAULT 0",
        "CREATE INDEX vectors_generation ON vectors (kind, gen)",
    ),
]

QUEUE_ITEM = ("INSERT INTO embedding_queue (kind, item_id, attempts, next_at) VALUES (?, ?, 0, '')"
              " ON CONFLICT (kind, item_id) DO UPDATE SET attempts = 0, next_at = '', error = NULL")
"""Queue (or queue again: a closed session's text changed) one item, in the writer's transaction."""


def drop_vector(conn: Executor, kind: str, item_id: int) -> None:
    """Take an item out of the vector path (forgotten, superseded), in the caller's transaction."""
    # the queue row first, as done() locks it before it writes the vector: one order, no deadlock
    conn.execute("DELETE FROM embedding_queue WHERE kind = ? AND item_id = ?", (kind, item_id))
    conn.execute("DELETE FROM vectors WHERE kind = ? AND item_id = ?", (kind, item_id))


def _memory_texts(conn: Executor, ids: Sequence[int]) -> dict[int, str]:
    rows = conn.execute(f"SELECT id, title, content, tags, path FROM memories WHERE id IN ({marks(len(ids))})"
                        f" AND {_LIVE_MEMORY}", list(ids)).fetchall()
    return {int(r[0]): memory_text(r[1], r[2], json.loads(r[3])) for r in rows}


def _session_texts(conn: Executor, ids: Sequence[int]) -> dict[int, str]:
    rows = conn.execute(f"SELECT seq, prompt, summary FROM brain_sessions WHERE seq IN ({marks(len(ids))})",
                        list(ids)).fetchall()
    return {int(r[0]): session_text(r[1], r[2]) for r in rows}


def _chunks(rows: Sequence[_Row]) -> list[Sequence[_Row]]:
    """``rows`` in parts of at most ``ROWS`` (a statement's parameters stay within both backends' limits)."""
    return [rows[start:start + ROWS] for start in range(0, len(rows), ROWS)]


def _values(rows: Sequence[Sequence[Any]]) -> str:
    """A VALUES list with a row of placeholders for each of ``rows`` (``_flat`` of them its parameters)."""
    return "VALUES " + ", ".join([f"({marks(len(rows[0]))})"] * len(rows))


def _flat(rows: Sequence[Sequence[Any]]) -> list[Any]:
    """The parameters of these rows of a VALUES list, in order."""
    return [value for row in rows for value in row]


class VectorIndex(Protocol):
    """A backend's own index of the vectors (pgvector's on PostgreSQL), kept by the writes of vectors."""

    def write(self, conn: Executor, vectors: Sequence[tuple[str, int, bytes]]) -> None:
        """Index the vectors just written, in the writer's transaction."""


class SqlMeaning:
    def __init__(self, dialect: Dialect) -> None:
        self.sql = dialect
        self.index: VectorIndex | None = None  # set by the backend's store when it has one
        dialect.migrate("meaning", dialect.rendered(MIGRATIONS))

    def memory_vectors(self, refs: Sequence[str], model: str) -> dict[str, bytes]:
        """The vectors of these memories (by ref) that ``model`` made; a memory not embedded yet is left out."""
        if not refs:
            return {}
        # memories first, by their refs (SQLite's CROSS JOIN keeps that order): with the refs as parameters its
        # planner walked every memory vector by kind instead (16 ms for 30 refs among 20k, against 0.2 ms)
        with self.sql.reading() as conn:
            rows = conn.execute(
                "SELECT m.ref, v.vector FROM memories m CROSS JOIN vectors v"
                f" WHERE m.ref IN ({marks(len(refs))}) AND v.kind = 'memory' AND v.item_id = m.id AND v.model = ?",
                [*refs, model]).fetchall()
        return {str(r[0]): bytes(r[1]) for r in rows}

    def has_due(self, now: str) -> bool:
        """Whether any item is due: a read, so that an idle runner's polls take no write lock."""
        with self.sql.reading() as conn:
            found = conn.execute("SELECT 1 FROM embedding_queue WHERE next_at <= ? LIMIT 1", (now,)).fetchone()
        return found is not None

    def claim(self, now: str, lease_until: str, limit: int) -> list[Job]:
        """Up to ``limit`` of the oldest due items, leased until ``lease_until``, with their texts (by kind and id)."""
        skip = " SKIP LOCKED" if self.sql.lock else ""
        with self.sql.transaction() as conn:
            rows = sorted(conn.execute(
                "WITH due AS MATERIALIZED (SELECT kind, item_id FROM embedding_queue WHERE next_at <= ?"
                f" ORDER BY next_at, kind, item_id LIMIT ?{self.sql.lock}{skip})"
                " UPDATE embedding_queue SET next_at = ? WHERE (kind, item_id) IN (SELECT kind, item_id FROM due)"
                " RETURNING kind, item_id, attempts", (now, min(limit, ROWS), lease_until)).fetchall())
            texts: dict[str, dict[int, str]] = {}
            for kind, reader in (("memory", _memory_texts), ("session", _session_texts)):
                ids = [int(r[1]) for r in rows if r[0] == kind]
                texts[kind] = reader(conn, ids) if ids else {}
        return [Job(str(k), int(i), int(a), texts.get(str(k), {}).get(int(i), "")) for k, i, a in rows]

    def done(self, model: str, vectors: Sequence[tuple[str, int, bytes]], gone: Sequence[tuple[str, int]],
             lease: str) -> None:
        """Write each vector and take its item off the queue; ``gone``: items that no longer exist; ``lease``: the
        lease the batch was claimed with (``claim``'s ``lease_until``).

        An item whose queue row went while its text was embedded was forgotten or superseded meanwhile
        (drop_vector takes both away in the forgetting transaction): its vector is not written, or it would
        come back into the store for good. An item whose row holds another lease now (queued again because its
        text changed, or claimed again by another runner after this lease ran out) gets the vector made, and its
        row is left to whoever holds it: the newer text is embedded after, and its vector written last.

        The queue rows are locked first, in one order (kind, id), as drop_vector locks its row before the vector:
        no deadlock with a forget or another runner."""
        made = {(kind, item_id): vector for kind, item_id, vector in vectors}  # one vector an item: the last
        items = sorted({*made, *gone})
        if not items:
            return
        with self.sql.transaction() as conn:
            leases: dict[tuple[str, int], str] = {}
            for chunk in _chunks(items):
                leases.update(((str(k), int(i)), str(at)) for k, i, at in conn.execute(
                    f"SELECT kind, item_id, next_at FROM embedding_queue WHERE (kind, item_id) IN ({_values(chunk)})"
                    f" ORDER BY kind, item_id{self.sql.lock}", _flat(chunk)).fetchall())
            kept = [(kind, item_id, vector) for (kind, item_id), vector in sorted(made.items())
                    if (kind, item_id) in leases]
            if kept:
                gen = conn.execute("UPDATE meaning_generation SET value = value + 1 WHERE id = 1"
                                   " RETURNING value").fetchone()[0]
                for part in _chunks(kept):
                    rows = [(kind, item_id, model, vector, gen) for kind, item_id, vector in part]
                    conn.execute(f"INSERT INTO vectors (kind, item_id, model, vector, gen) {_values(rows)}"
                                 " ON CONFLICT (kind, item_id) DO UPDATE SET model = excluded.model,"
                                 " vector = excluded.vector, gen = excluded.gen", _flat(rows))
                if self.index is not None:
                    self.index.write(conn, kept)
            mine = [key for key, held in sorted(leases.items()) if held == lease]
            for chunk in _chunks(mine):
                conn.execute(f"DELETE FROM embedding_queue WHERE next_at = ? AND (kind, item_id) IN ({_values(chunk)})",
                             [lease, *_flat(chunk)])

    def failed(self, retries: Sequence[tuple[str, int, str]], error: str, lease: str) -> None:
        """Count a failed attempt of each item (kind, id, when to try it next) whose row still holds ``lease``: a
        row queued again meanwhile (its text changed) is due with its new text, untried. ``error`` is kept as text
        either backend holds (a NUL, which PostgreSQL's text refuses, and a lone surrogate, which neither encodes, as
        U+FFFD): a failure that could not be recorded was neither counted nor backed off."""
        if not retries:
            return
        kept = _UNHELD.sub("\ufffd", error[:500])
        with self.sql.transaction() as conn:
            for part in _chunks(retries):
                conn.execute("UPDATE embedding_queue SET attempts = attempts + 1, next_at = d.column3, error = ?"
                             f" FROM ({_values(part)}) AS d"
                             " WHERE embedding_queue.kind = d.column1 AND embedding_queue.item_id = d.column2"
                             " AND embedding_queue.next_at = ?",
                             [kept, *_flat(part), lease])

    def all_due(self) -> int:
        """Make every queued item due now: the leases of a runner that was stopped and the delays of failures
        are dropped (a foreground `notewell embed`); how many were waiting."""
        with self.sql.transaction() as conn:
            return int(conn.execute("UPDATE embedding_queue SET next_at = '' WHERE next_at <> ''").rowcount or 0)

    def queue_missing(self) -> int:
        """Queue every live memory and every session with text that has no vector (after an import), in the
        caller's transaction if it has one; how many. A session without text was queued too, and counted as queued
        though never as an item: `notewell embed --status` said more queued than there were items."""
        with self.sql.transaction() as conn:
            queued = 0
            for kind, table, key, live in (("memory", "memories", "id", f" AND {_LIVE_MEMORY}"),
                                           ("session", "brain_sessions", "seq", f" AND {_SESSION_TEXT}")):
                queued += int(conn.execute(
                    f"INSERT INTO embedding_queue (kind, item_id, attempts, next_at) SELECT '{kind}', t.{key}, 0, ''"
                    f" FROM {table} t WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.kind = '{kind}'"
                    f" AND v.item_id = t.{key}){live} ON CONFLICT (kind, item_id) DO NOTHING").rowcount or 0)
            return queued

    def requeue_other_models(self, model: str) -> int:
        """Queue every item whose vector was made by another model (after a model change); how many."""
        with self.sql.transaction() as conn:
            cur = conn.execute("INSERT INTO embedding_queue (kind, item_id, attempts, next_at)"
                               " SELECT kind, item_id, 0, '' FROM vectors WHERE model <> ?"
                               " ON CONFLICT (kind, item_id) DO NOTHING", (model,))
            return int(cur.rowcount or 0)

    def state(self, model: str) -> QueueState:
        with self.sql.reading() as conn:
            queued, failing = conn.execute(
                "SELECT count(*), COALESCE(sum(CASE WHEN attempts > 0 THEN 1 ELSE 0 END), 0)"
                " FROM embedding_queue").fetchone()
            vectors = conn.execute("SELECT count(*) FROM vectors WHERE model = ?", (model,)).fetchone()[0]
            items = conn.execute(f"SELECT (SELECT count(*) FROM memories WHERE {_LIVE_MEMORY})"
                                 f" + (SELECT count(*) FROM brain_sessions WHERE {_SESSION_TEXT})").fetchone()[0]
            error = conn.execute("SELECT error FROM embedding_queue WHERE error IS NOT NULL"
                                 " ORDER BY attempts DESC, kind, item_id LIMIT 1").fetchone()
        return QueueState(int(queued), int(failing), int(vectors), int(items), error[0] if error else None)
