"""Memories in SQL both backends run: forgetting one (and undoing that), and the reads (by ref, in order,
a listing, a count).

Forgetting is written here too. Each backend's subclass adds its schema (its migration steps, already
applied to existing databases) and what really differs: adding and superseding (which keep the word
indexes: FTS5 tables on SQLite, tsvector columns on PostgreSQL), taking a memory out of them, and the two
searches over them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

from notewell.errors import Conflict
from notewell.meaning.model import DIMENSIONS
from notewell.paths import composed
from notewell.records.memories import MemoryFilter, MemoryHit, MemoryInput, MemoryQuery, MemoryRecord
from notewell.store.memory_rows import (
    MEMORY_COLUMNS,
    PRIVATE_TO_VIEWER,
    listing_sql,
    memory_from_row,
    narrowing_sql,
)
from notewell.store.path_range import path_bounds
from notewell.store.shared.dialect import Dialect, Executor
from notewell.store.shared.meaning import QUEUE_ITEM, drop_vector
from notewell.store.shared.migrations import Migration
from notewell.store.vector_cache import VectorCache
from notewell.store.vector_search import Nearest, best_allowed, from_half

LIVE = "m.deleted_at IS NULL AND m.superseded_by IS NULL"
_BATCH = 1000


def search_conditions(query: MemoryQuery, dialect: Dialect, *, by_id: bool = False) -> tuple[list[str], list[Any]]:
    """The WHERE conditions (``?`` placeholders) both searches add to their index's match, with their
    parameters: the query's projects, not expired, its path and type, the viewer's private memories only,
    and its narrowing. ``by_id``: the caller adds a condition on ``m.id`` that should lead (the project
    index is not to be chosen)."""
    clause, params = dialect.one_of(dialect.unindexed("m.project") if by_id else "m.project", query.projects)
    where = [clause, "(m.expires_at IS NULL OR m.expires_at > ?)"]
    params.append(query.now)
    if query.path_prefix:
        where.append("(m.path = ? OR (m.path >= ? AND m.path < ?))")
        params += path_bounds(query.path_prefix, query.path_prefix_partial)
    if query.memory_type is not None:
        where.append("m.memory_type = ?")
        params.append(query.memory_type)
    where.append(PRIVATE_TO_VIEWER)
    params.append(query.viewer)
    narrowed, values = narrowing_sql(query.narrowing, dialect.position)
    return where + narrowed, params + values


def _lasting(expires_at: str | None) -> tuple[int, str]:
    """A memory's expiry as an order: never expiring lasts longest."""
    return (1, "") if expires_at is None else (0, expires_at)


class SqlMemories(ABC):
    def __init__(self, dialect: Dialect, migrations: Sequence[Migration]) -> None:
        self.dialect = dialect
        dialect.migrate("memories", migrations)
        self._vectors = VectorCache("memory", DIMENSIONS)

    def compose_paths(self) -> None:
        """The ``memory_paths`` step: every path kept composed (NFC), as the service has kept them since
        (paths.composed), so that a memory an earlier version filed under "cafe" and a combining accent is at the
        one place "café". A memory whose text was also live at the composed place (same content and audience)
        would be a second live copy there: the one that lasts longer is kept (an expired working memory is
        superseded by a live twin, as a write of it there retires it), else the earlier of the two (by write
        order), as a write of it there would have been answered; the other stays readable by its ref, and nothing
        is deleted.
        Run by the store once every component has its tables: after the brain's word_breaks step (SQLite's word
        indexes read a memory's fields as word_breaks.word_text composes them, the same for either form, so a
        path rewritten is still taken out of them by its fields) and the meaning's (its vectors)."""
        self.dialect.migrate("memory_paths", [(self.compose_rows,)])

    def compose_rows(self, conn: Executor) -> None:
        """The ``memory_paths`` step in ``conn``'s transaction. A load of an export runs it too, once its rows are
        in (SqlTables' ``after_load``): an export an earlier version wrote holds its paths as that version kept
        them, and the store it is loaded into has run the step already."""
        after = 0
        while rows := conn.execute("SELECT id, path FROM memories WHERE id > ? ORDER BY id LIMIT ?",
                                   (after, _BATCH)).fetchall():
            after = rows[-1][0]
            for row_id, path in rows:
                if composed(path) != path:
                    self._compose(conn, int(row_id), composed(path))

    def _compose(self, conn: Executor, row_id: int, path: str) -> None:
        ref, project, content_hash, audience, created, expires, live = conn.execute(
            "SELECT ref, project, content_hash, COALESCE(private_to, ''), created, expires_at,"
            " CASE WHEN deleted_at IS NULL AND superseded_by IS NULL THEN 1 ELSE 0 END FROM memories WHERE id = ?",
            (row_id,)).fetchone()
        twin = conn.execute(
            "SELECT id, ref, created, expires_at FROM memories WHERE project = ? AND path = ? AND content_hash = ?"
            " AND COALESCE(private_to, '') = ? AND deleted_at IS NULL AND superseded_by IS NULL",
            (project, path, content_hash, audience)).fetchone() if live else None
        if twin is not None:
            # The one that lasts longer is kept (never expiring, else expiring later; the earlier written when
            # they last alike): an expired working memory never takes the place of a live one, as a write's
            # _retire_expired_twin retires it, and needs no clock.
            mine, theirs = (_lasting(expires), -row_id), (_lasting(twin[3]), -int(twin[0]))
            kept, gone = (ref, int(twin[0])) if mine > theirs else (twin[1], row_id)
            at = max(created, twin[2])
            self._unindex(conn, gone)
            drop_vector(conn, "memory", gone)
            conn.execute("UPDATE memories SET superseded_by = ?, updated = ? WHERE id = ?", (kept, at, gone))
        conn.execute("UPDATE memories SET path = ? WHERE id = ?", (path, row_id))

    @abstractmethod
    def add(self, memory: MemoryInput, supersedes: str | None = None) -> tuple[MemoryRecord, bool]:
        """Write ``memory``, or answer the live copy of its text at its place (False) without writing; either way
        ``supersedes`` (a live memory's ref) is superseded by what is answered, unless that is the memory itself.
        Each backend runs ``_retire_expired_twin`` first in the same transaction."""

    def _retire_expired_twin(self, conn: Executor, memory: MemoryInput) -> str | None:
        """A working memory past its expiry left search, yet still held its place's one live copy of its text: a
        new write of that text there answered with the expired memory and wrote nothing, so the new one was
        never found. The expired one is superseded by the new one instead, in its transaction; its ref, if any."""
        row = conn.execute("SELECT id, ref FROM memories WHERE project = ? AND path = ? AND content_hash = ?"
                           " AND COALESCE(private_to, '') = ? AND deleted_at IS NULL AND superseded_by IS NULL"
                           f" AND expires_at IS NOT NULL AND expires_at <= ?{self.dialect.lock}",
                           (memory.project, memory.path, memory.content_hash, memory.private_to or "",
                            memory.created)).fetchone()
        if row is not None:
            self._unindex(conn, row[0])
            drop_vector(conn, "memory", row[0])
            conn.execute("UPDATE memories SET superseded_by = ?, updated = ? WHERE id = ?",
                         (memory.ref, memory.created, row[0]))
        return None if row is None else str(row[1])

    @abstractmethod
    def _index(self, conn: Executor, row_id: int) -> None:
        """Put a live memory into the word indexes (in ``conn``'s transaction)."""

    @abstractmethod
    def _unindex(self, conn: Executor, row_id: int) -> None:
        """Take a live memory out of the word indexes (in ``conn``'s transaction)."""

    @abstractmethod
    def _reword(self, conn: Executor, row_id: int) -> None:
        """A memory's fields were rewritten (``move``): the words its row keeps made again from them."""

    @abstractmethod
    def strict(self, query: MemoryQuery) -> list[MemoryHit]: ...

    @abstractmethod
    def tolerant(self, query: MemoryQuery) -> list[MemoryHit]: ...

    def forget(self, ref: str, by_user_id: str, reason: str, at: str) -> MemoryRecord | None:
        with self.dialect.transaction() as conn:
            row = conn.execute("SELECT id, superseded_by FROM memories WHERE ref = ? AND deleted_at IS NULL"
                               f"{self.dialect.lock}", (ref,)).fetchone()
            if row is None:
                return None
            if row[1] is None:
                self._unindex(conn, row[0])
            drop_vector(conn, "memory", row[0])
            conn.execute("UPDATE memories SET deleted_at = ?, deleted_by = ?, delete_reason = ?, updated = ?"
                         " WHERE id = ?", (at, by_user_id, self.dialect.text(reason), at, row[0]))
            found = conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?", (row[0],)).fetchone()
            return memory_from_row(found)

    def move(self, ref: str, path: str, content: str, content_hash: str) -> bool:
        """The memory (live or not) at ``path`` with this text, keeping its ref: out of the word indexes with its old
        fields and back with the new, its vector made again; False when there is no such ref, or a live copy of the
        text is at ``path`` already (two live copies at one place are never made)."""
        with self.dialect.transaction() as conn:
            row = conn.execute("SELECT id, project, COALESCE(private_to, ''), CASE WHEN deleted_at IS NULL AND"
                               " superseded_by IS NULL THEN 1 ELSE 0 END FROM memories WHERE ref = ?"
                               f"{self.dialect.lock}", (ref,)).fetchone()
            if row is None:
                return False
            row_id, project, audience, live = int(row[0]), row[1], row[2], bool(row[3])
            if live and conn.execute(
                    "SELECT 1 FROM memories WHERE project = ? AND path = ? AND content_hash = ? AND"
                    " COALESCE(private_to, '') = ? AND deleted_at IS NULL AND superseded_by IS NULL AND id <> ?",
                    (project, path, content_hash, audience, row_id)).fetchone() is not None:
                return False
            if live:
                self._unindex(conn, row_id)
            conn.execute("UPDATE memories SET path = ?, content = ?, content_hash = ? WHERE id = ?",
                         (path, self.dialect.text(content), content_hash, row_id))
            self._reword(conn, row_id)
            if live:
                self._index(conn, row_id)
                conn.execute(QUEUE_ITEM, ("memory", row_id))
            return True

    def restore(self, ref: str, at: str) -> MemoryRecord | None:
        """Undo a forget: live again, back in the word indexes and queued for its vector (None when it is not
        forgotten). Conflict when a live copy of it (same project, path and content) was written since."""
        with self.dialect.transaction() as conn:
            row = conn.execute("SELECT id, superseded_by, project, path, content_hash, COALESCE(private_to, '')"
                               f" FROM memories WHERE ref = ? AND deleted_at IS NOT NULL{self.dialect.lock}",
                               (ref,)).fetchone()
            if row is None:
                return None
            twin = conn.execute("SELECT ref FROM memories WHERE project = ? AND path = ? AND content_hash = ?"
                                " AND COALESCE(private_to, '') = ? AND deleted_at IS NULL AND superseded_by IS NULL",
                                (row[2], row[3], row[4], row[5])).fetchone()
            if twin is not None and row[1] is None:
                raise Conflict(f"memory {twin[0]} holds the same text at the same place; {ref} stays forgotten")
            conn.execute("UPDATE memories SET deleted_at = NULL, deleted_by = NULL, delete_reason = NULL,"
                         " updated = ? WHERE id = ?", (at, row[0]))
            if row[1] is None:  # a superseded one stays out of search, as it was before
                self._index(conn, row[0])
                conn.execute(QUEUE_ITEM, ("memory", row[0]))
            found = conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?", (row[0],)).fetchone()
            return memory_from_row(found)

    def nearest(self, query: MemoryQuery, vector: bytes, model: str) -> list[Nearest[MemoryRecord]]:
        """The ``query.limit`` memories of ``query``'s scope (its projects, path, type, the viewer's private
        ones, not expired, live: the same conditions as the word searches) whose vectors of ``model`` are
        nearest to ``vector`` (float16 bytes), by cosine similarity, best first. Every vector is scored in
        this process (store/vector_cache.py); only candidates the scope's SQL allows are answered, checked
        best first until enough pass (vector_search.best_allowed), so an allowed memory is never dropped."""
        if not query.projects or query.limit <= 0:
            return []
        by_id, by_id_params = search_conditions(query, self.dialect, by_id=True)
        with self.dialect.reading() as conn:
            self._vectors.refresh(conn, model)
            ids, scores = self._vectors.scores(from_half(vector))

            def allowed(candidates: list[int] | None) -> set[int]:
                if candidates is None:  # the whole allowed scope, once: here the project index should lead
                    where, params = search_conditions(query, self.dialect)
                    return {int(r[0]) for r in conn.execute(
                        f"SELECT m.id FROM memories m WHERE {LIVE} AND {' AND '.join(where)}", params).fetchall()}
                among, ids_param = self.dialect.one_of("m.id", candidates)
                return {int(r[0]) for r in conn.execute(
                    f"SELECT m.id FROM memories m WHERE {among} AND {LIVE} AND {' AND '.join(by_id)}",
                    [*ids_param, *by_id_params]).fetchall()}

            return self._answer(conn, best_allowed(ids, scores, query.limit, allowed))

    def vector_search(self) -> str:
        return "searched exactly in this process (768 bytes of RAM per memory)"

    def _answer(self, conn: Executor, best: list[tuple[int, float]]) -> list[Nearest[MemoryRecord]]:
        """The memories of ``best`` (id, similarity), in its order."""
        if not best:
            return []
        found = [item_id for item_id, _ in best]
        rows = {int(r[0]): memory_from_row(r[1:]) for r in conn.execute(
            f"SELECT m.id, {MEMORY_COLUMNS} FROM memories m WHERE m.id IN ({','.join('?' * len(found))})",
            found).fetchall()}
        return [Nearest(rows[i], similarity) for i, similarity in best if i in rows]

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.dialect.reading() as conn:
            return conn.execute(sql, params).fetchall()

    def get(self, ref: str) -> MemoryRecord | None:
        rows = self._rows(f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.ref = ?", (ref,))
        return memory_from_row(rows[0]) if rows else None

    def all(self, projects: Sequence[str], include_inactive: bool = False) -> Iterator[MemoryRecord]:
        if not projects:
            return
        where, params = self.dialect.one_of("m.project", projects)
        if not include_inactive:
            where += f" AND {LIVE}"
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {where} ORDER BY m.created, m.id"
        yield from (memory_from_row(r) for r in self.dialect.stream(sql, params))

    def listing(self, chosen: MemoryFilter, limit: int, offset: int = 0) -> list[MemoryRecord]:
        if not chosen.projects:
            return []
        sql, params = listing_sql(chosen, limit, offset, self.dialect.position)
        return [memory_from_row(r) for r in self._rows(sql, params)]

    def count(self, projects: Sequence[str] | None = None) -> int:
        sql, params = f"SELECT count(*) FROM memories m WHERE {LIVE}", list[Any]()
        if projects is not None:
            if not projects:
                return 0
            where, params = self.dialect.one_of("m.project", projects)
            sql += f" AND {where}"
        rows = self._rows(sql, params)
        return int(rows[0][0]) if rows else 0
