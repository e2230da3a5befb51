"""Each project's document count and text bytes, kept by the document writer as documents change.

A listing of projects (listProjects, GET /projects, the web's projects page) and the store's sizes read
one row per project instead of counting documents on every call (671 ms at 1 GB for seven projects). The
writer adds up what each upsert, delete and rename changes while its transaction runs and writes one row
per project it touched just before the commit: never a row update per document, which on PostgreSQL would
pile up a version of the same row per document inside a build's one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping

from notewell.store.shared.dialect import Executor


def project_counts_ddl(words: Mapping[str, str]) -> tuple[str, ...]:
    """The table, filled from the documents already stored (a migration step of each backend)."""
    return (
        f"CREATE TABLE project_documents (project {words['key']} PRIMARY KEY, documents {words['int64']} NOT NULL,"
        f" bytes {words['int64']} NOT NULL)",
        "INSERT INTO project_documents (project, documents, bytes)"
        " SELECT project, count(*), coalesce(sum(size), 0) FROM documents GROUP BY project",
    )


class ProjectCounts:
    """What one write transaction changes of each project's count and bytes, written once at its end."""

    def __init__(self) -> None:
        self._changes: dict[str, tuple[int, int]] = {}

    def add(self, project: str, documents: int, size: int) -> None:
        had = self._changes.get(project, (0, 0))
        self._changes[project] = (had[0] + documents, had[1] + size)

    def write(self, sql: Executor) -> None:
        rows = [(project, count, size) for project, (count, size) in self._changes.items() if count or size]
        self._changes.clear()
        if not rows:
            return
        sql.executemany(
            "INSERT INTO project_documents (project, documents, bytes) VALUES (?, ?, ?) ON CONFLICT (project)"
            " DO UPDATE SET documents = project_documents.documents + excluded.documents,"
            " bytes = project_documents.bytes + excluded.bytes", rows)
        sql.execute("DELETE FROM project_documents WHERE documents = 0")
