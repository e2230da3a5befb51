"""Memories tied to the documents they are about (docs/links.md, "Memories about a document").

A row per memory and document: ``about`` when remember named the document, ``mention`` when the memory's
text names its path. Rows are written with the memory, in its transaction (each backend's add calls
``tie``); the documents' writer moves them when a document is renamed, and a deleted document leaves them
(the memory is kept; its tie names a path that holds nothing now, which the readers show as gone). Who
may see which memory is the caller's decision: the read takes the projects and the viewer, as every
memory read does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from notewell.records.documents import DocKey
from notewell.records.memories import DocumentTie, MemoryRecord
from notewell.store.memory_rows import MEMORY_COLUMNS, PRIVATE_TO_VIEWER, memory_from_row
from notewell.store.shared.dialect import Dialect, Executor
from notewell.store.shared.migrations import Migration

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE memory_documents (
            memory_id {int64} NOT NULL REFERENCES memories (id),
            project {key} NOT NULL,
            path {key} NOT NULL,
            how {key} NOT NULL,
            PRIMARY KEY (memory_id, project, path)
        )
        """,
        "CREATE INDEX memory_documents_document ON memory_documents (project, path, memory_id)",
    ),
]
_LIVE = "m.deleted_at IS NULL AND m.superseded_by IS NULL"


def tie(sql: Executor, memory_id: int, documents: Sequence[DocumentTie]) -> None:
    """The memory's ties, in the transaction that adds it."""
    if documents:
        sql.executemany("INSERT INTO memory_documents (memory_id, project, path, how) VALUES (?, ?, ?, ?)",
                        [(memory_id, d.project, d.path, d.how) for d in documents])


def follow_rename(sql: Executor, old: DocKey, new: DocKey) -> None:
    """The ties of a renamed document follow it (a memory tied to both places keeps the old tie too)."""
    sql.execute("UPDATE memory_documents SET project = ?, path = ? WHERE project = ? AND path = ? AND NOT EXISTS"
                " (SELECT 1 FROM memory_documents o WHERE o.memory_id = memory_documents.memory_id"
                " AND o.project = ? AND o.path = ?)", (*new, *old, *new))


class SqlMemoryDocuments:
    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        dialect.migrate("memory_documents", dialect.rendered(MIGRATIONS))

    def about(self, document: DocKey, projects: Sequence[str], viewer: str, now: str,
              limit: int) -> list[tuple[MemoryRecord, str]]:
        """The live memories tied to ``document`` among ``projects`` (the viewer's private ones included, no
        one else's), newest first, each with how it is tied."""
        if not projects:
            return []
        clause, params = self.dialect.one_of("m.project", projects)
        sql = (f"SELECT {MEMORY_COLUMNS}, t.how FROM memory_documents t JOIN memories m ON m.id = t.memory_id"
               f" WHERE t.project = ? AND t.path = ? AND {_LIVE} AND {clause} AND {PRIVATE_TO_VIEWER}"
               " AND (m.expires_at IS NULL OR m.expires_at > ?) ORDER BY m.created DESC, m.id DESC LIMIT ?")
        values: list[Any] = [*document, *params, viewer, now, limit]
        with self.dialect.reading() as conn:
            rows = conn.execute(sql, values).fetchall()
        return [(memory_from_row(row[:-1]), row[-1]) for row in rows]

    def tied(self, documents: Sequence[DocKey]) -> set[DocKey]:
        if not documents:
            return set()
        wanted = list(dict.fromkeys(documents))
        pairs = " OR ".join(["(project = ? AND path = ?)"] * len(wanted))
        with self.dialect.reading() as conn:
            rows = conn.execute(f"SELECT DISTINCT project, path FROM memory_documents WHERE {pairs}",
                                [value for key in wanted for value in key]).fetchall()
        return {(project, path) for project, path in rows}

    def ties(self, refs: Sequence[str]) -> dict[str, list[DocumentTie]]:
        """The documents each of the memories ``refs`` is tied to, by path (a memory with none: no entry).
        Whether the caller may see the memories, and read the documents, is the caller's to decide."""
        if not refs:
            return {}
        clause, params = self.dialect.one_of("m.ref", list(dict.fromkeys(refs)))
        with self.dialect.reading() as conn:
            rows = conn.execute(f"SELECT m.ref, t.project, t.path, t.how FROM memory_documents t JOIN memories m"
                                f" ON m.id = t.memory_id WHERE {clause} ORDER BY m.ref, t.project, t.path",
                                params).fetchall()
        found: dict[str, list[DocumentTie]] = {}
        for ref, *tie in rows:
            found.setdefault(ref, []).append(DocumentTie(*tie))
        return found
