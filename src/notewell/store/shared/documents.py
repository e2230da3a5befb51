"""The documents repository in SQL both backends run, as basic-memory's SearchRepositoryBase: the plain
statements written once over the Dialect, each backend's subclass adding what really differs.

Written here: the rows of documents, skipped files, vault projects and brains (their writes, their state
and metadata reads) and the scope of a query as a WHERE fragment. Each backend supplies its schema (its
migration steps, already applied to existing databases), how text is kept and indexed (upsert, delete,
reading regions), how candidates are found (FTS5 trigram shards on SQLite, pg_trgm on PostgreSQL), the
write transaction (a parallel build on SQLite, a bulk GIN merge on PostgreSQL) and the sizes.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from notewell.records.documents import (
    BrainHead,
    BrainRecord,
    CandidateDoc,
    DocKey,
    DocState,
    Document,
    DocumentInput,
    DocumentMeta,
    Scope,
    SkippedRecord,
)
from notewell.records.links import LinkInput, LinkToResolve
from notewell.records.plan import Plan
from notewell.store.document_rows import (
    BRAIN_COLUMNS,
    BRAIN_HEAD_COLUMNS,
    brain_from_row,
    brain_head_from_row,
    extension,
    meta_from_row,
)
from notewell.store.path_range import path_bounds
from notewell.store.shared.dialect import Dialect, Executor, marks
from notewell.store.shared.links import LinkWrites
from notewell.store.shared.memory_documents import follow_rename
from notewell.store.shared.migrations import Migration
from notewell.store.shared.project_counts import ProjectCounts

META_COLUMNS = "d.project, d.path, d.title, d.summary, d.size, d.mtime_ns, d.sha256, d.line_count, d.note"
_STATE = "SELECT d.id, d.project, d.path, d.size, d.mtime_ns, d.sha256 FROM documents d"
METAS_AT_PATHS = 2000  # paths a statement of metas_at asks for (well under both backends' limits on parameters)
CHECKSUM_TERMS = 200  # projects a statement of checksums asks for (SQLite: an OR of 1,000 terms is too deep)


def at_or_below(column: str, path: str, partial: bool = False) -> tuple[str, list[str]]:
    """A condition that ``column`` is ``path`` or below it (``partial``: starts with its characters), as a
    range of code points (store/path_range.py), never LIKE."""
    return f"({column} = ? OR ({column} >= ? AND {column} < ?))", path_bounds(path, partial)


def scope_sql(scope: Scope, dialect: Dialect) -> tuple[str, list[Any]]:
    """A WHERE fragment (on documents d) for a scope, with its parameters."""
    if not scope.projects:
        return dialect.words["false"], []
    clause, params = dialect.one_of("d.project", scope.projects)
    clauses = [clause]
    if scope.prefix:
        clause, values = at_or_below("d.path", scope.prefix, scope.prefix_partial)
        clauses.append(clause)
        params += values
    if scope.exclude_prefixes:
        clauses.append(_all_of(["NOT (d.path >= ? AND d.path < ?)"] * len(scope.exclude_prefixes)))
        params += [bound for folder in scope.exclude_prefixes for bound in (folder + "/", folder + "0")]
    if scope.file_types:
        clause, values = dialect.one_of("d.ext", [t.lower() for t in scope.file_types])
        clauses.append(clause)
        params += values
    return " AND ".join(clauses), params


def _all_of(clauses: Sequence[str]) -> str:
    """The clauses ANDed as a balanced tree: SQLite parses a chain of them as one as deep as it is long, and refuses
    one over 1,000 deep (searchBrain over a brain of 1,000 sub-brains, each a clause, was an internal error)."""
    if len(clauses) == 1:
        return clauses[0]
    half = len(clauses) // 2
    return f"({_all_of(clauses[:half])} AND {_all_of(clauses[half:])})"


class SqlDocumentWriter(ABC):
    """One write transaction's writes; a backend adds how a document's text is stored and indexed."""

    def __init__(self, sql: Executor, dialect: Dialect) -> None:
        self.sql = sql
        self.dialect = dialect
        self.changed = 0  # documents added, changed or deleted
        self.links = LinkWrites(sql, dialect)
        self.counts = ProjectCounts()  # a backend's upsert and delete add to it; its writer writes it last

    @abstractmethod
    def upsert(self, doc: DocumentInput) -> None: ...

    @abstractmethod
    def delete(self, key: DocKey) -> None: ...

    def touch(self, key: DocKey, mtime_ns: int) -> None:
        self.sql.execute("UPDATE documents SET mtime_ns = ? WHERE project = ? AND path = ?", (mtime_ns, *key))

    def rename(self, old: DocKey, new: DocKey, mtime_ns: int) -> None:
        moved = self.sql.execute("UPDATE documents SET project = ?, path = ?, ext = ?, mtime_ns = ?"
                                 " WHERE project = ? AND path = ? RETURNING size",
                                 (*new, extension(new[1]), mtime_ns, *old)).fetchone()
        if moved is not None:
            follow_rename(self.sql, old, new)
        if moved is not None and old[0] != new[0]:
            self.counts.add(old[0], -1, -moved[0])
            self.counts.add(new[0], 1, moved[0])

    def set_links(self, key: DocKey, links: Sequence[LinkInput]) -> None:
        self.links.set_links(key, links)

    def links_named(self, name_keys: Sequence[str]) -> list[LinkToResolve]:
        return self.links.links_named(name_keys)

    def retarget_links(self, changes: Sequence[tuple[int, int, int | None]]) -> None:
        self.links.retarget(changes)

    def take_pending_links(self) -> list[DocKey]:
        return self.links.take_pending()

    def set_skipped(self, skipped: Sequence[SkippedRecord]) -> None:
        self.sql.execute("DELETE FROM skipped_files")
        self.sql.executemany(
            "INSERT INTO skipped_files (project, path, size, reason) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (project, path) DO UPDATE SET size = excluded.size, reason = excluded.reason",
            [(s.project, s.path, s.size, s.reason) for s in skipped])

    def set_projects(self, projects: Sequence[str]) -> None:
        self.sql.execute("DELETE FROM vault_projects")
        self.sql.executemany("INSERT INTO vault_projects (id) VALUES (?)", [(p,) for p in projects])

    def set_brains(self, brains: Sequence[BrainRecord]) -> None:
        text = self.dialect.text
        self.sql.execute("DELETE FROM brains")
        self.sql.executemany(
            f"INSERT INTO brains ({BRAIN_COLUMNS}) VALUES ({marks(6)})",
            [(b.project, b.folder, text(b.title), text(b.summary), b.parent, text(json.dumps(b.documents)))
             for b in brains])


class SqlDocuments(ABC):
    """The documents repository less its text, index and write transaction (a backend's subclass)."""

    def __init__(self, dialect: Dialect, migrations: Sequence[Migration]) -> None:
        self.dialect = dialect
        dialect.migrate("documents", migrations)

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.dialect.reading() as conn:
            return conn.execute(sql, params).fetchall()

    @abstractmethod
    def writer(self) -> AbstractContextManager[SqlDocumentWriter]: ...

    @abstractmethod
    def get(self, project: str, path: str) -> Document | None: ...

    @abstractmethod
    def candidates(self, scope: Scope, plan: Plan | None, *, after: DocKey | None = None,
                   limit: int | None = None) -> list[CandidateDoc]: ...

    @abstractmethod
    def texts(self, candidates: Sequence[CandidateDoc],
              plan: Plan | None = None) -> Iterator[tuple[int, int, bytes]]: ...

    @abstractmethod
    def sizes(self) -> tuple[int, int, int]: ...

    def state(self, under: Sequence[DocKey] | None = None) -> dict[DocKey, DocState]:
        if under is None:
            return {(r[1], r[2]): DocState(*r) for r in self._rows(_STATE)}
        found: dict[DocKey, DocState] = {}
        for project, path in under:
            where, params = "d.project = ?", [project]
            if path:
                below, values = at_or_below("d.path", path)
                where, params = f"{where} AND {below}", params + values
            found.update({(r[1], r[2]): DocState(*r) for r in self._rows(f"{_STATE} WHERE {where}", params)})
        return found

    def ids(self, project: str) -> dict[str, int]:
        """Every document of the project: its path and id (what a link resolves against)."""
        return {str(r[0]): int(r[1]) for r in self._rows("SELECT path, id FROM documents WHERE project = ?",
                                                         [project])}

    def project_counts(self, projects: Sequence[str]) -> dict[str, int]:
        """How many documents each of ``projects`` holds (kept as documents change: store/shared/project_counts)."""
        if not projects:
            return {}
        clause, params = self.dialect.one_of("project", projects)
        rows = self._rows(f"SELECT project, documents FROM project_documents WHERE {clause}", params)
        return {project: int(count) for project, count in rows}

    def _totals(self) -> tuple[int, int]:
        """(documents, text bytes) of the whole store, from the projects' counts."""
        count, size = self._rows(
            "SELECT coalesce(sum(documents), 0), coalesce(sum(bytes), 0) FROM project_documents")[0]
        return int(count), int(size)

    def vault_projects(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM vault_projects ORDER BY id")]

    def meta(self, project: str, path: str) -> DocumentMeta | None:
        rows = self._rows(f"SELECT {META_COLUMNS} FROM documents d WHERE d.project = ? AND d.path = ?",
                          (project, path))
        return meta_from_row(rows[0]) if rows else None

    def metas(self, project: str, prefix: str = "", *, limit: int | None = None, offset: int = 0,
              after: str | None = None, exclude: Sequence[str] = (),
              leave_out: Sequence[str] = ()) -> list[DocumentMeta]:
        where, params = scope_sql(Scope(projects=[project], prefix=prefix, exclude_prefixes=exclude), self.dialect)
        if prefix:  # the folder's whole range too: its condition, an OR, gave SQLite's index the project's range
            where, params = f"{where} AND d.path >= ? AND d.path < ?", [*params, *path_bounds(prefix, False)[::2]]
        if leave_out:
            clause, values = self.dialect.one_of("d.path", list(dict.fromkeys(leave_out)))
            where, params = f"{where} AND NOT ({clause})", [*params, *values]
        if after is not None:  # a keyset: the (project, path) index starts at ``after``, whatever precedes it
            where, params = f"{where} AND d.path > ?", [*params, after]
        page, page_params = ("", []) if limit is None else (" LIMIT ? OFFSET ?", [limit, offset])
        rows = self._rows(f"SELECT {META_COLUMNS} FROM documents d WHERE {where} ORDER BY d.path{page}",
                          [*params, *page_params])
        return [meta_from_row(r) for r in rows]

    def metas_at(self, project: str, paths: Sequence[str]) -> dict[str, DocumentMeta]:
        found: dict[str, DocumentMeta] = {}
        unique = list(dict.fromkeys(paths))
        for start in range(0, len(unique), METAS_AT_PATHS):
            where, params = self.dialect.one_of("d.path", unique[start : start + METAS_AT_PATHS])
            rows = self._rows(f"SELECT {META_COLUMNS} FROM documents d WHERE d.project = ? AND {where}",
                              [project, *params])
            found.update((meta.path, meta) for meta in map(meta_from_row, rows))
        return found

    def named(self, file_name: str) -> list[DocKey]:
        # a suffix compared as characters (no LIKE, whose case rules differ between the backends)
        rows = self._rows("SELECT d.project, d.path FROM documents d WHERE d.path = ?"
                          " OR substr(d.path, length(d.path) - ?) = ? ORDER BY d.project, d.path",
                          (file_name, len(file_name), f"/{file_name}"))
        return [(project, path) for project, path in rows]

    def checksums(self, keys: Sequence[DocKey]) -> dict[DocKey, str]:
        """One statement for many projects' documents (a search's page spans several projects: a statement
        each was a round trip each on PostgreSQL, six for the 36 files of "levenshtein" at 1 GB)."""
        return self._keyed("d.sha256", keys)

    def titles(self, keys: Sequence[DocKey]) -> dict[DocKey, str]:
        """One statement for a search's hits (XMemo's search_knowledge read each hit's title alone)."""
        return self._keyed("d.title", keys)

    def _keyed(self, column: str, keys: Sequence[DocKey]) -> dict[DocKey, str]:
        """``column`` of each document named that exists; each project's paths are one OR'ed term, which both
        backends answer from the (project, path) index. At most ``CHECKSUM_TERMS`` terms a statement: SQLite
        refuses an expression over 1,000 deep."""
        by_project: dict[str, list[str]] = {}
        for project, path in dict.fromkeys(keys):
            by_project.setdefault(project, []).append(path)
        projects = list(by_project.items())
        found: dict[DocKey, str] = {}
        for start in range(0, len(projects), CHECKSUM_TERMS):
            terms, params = [], []
            for project, paths in projects[start : start + CHECKSUM_TERMS]:
                clause, values = self.dialect.one_of("d.path", paths)
                terms.append(f"(d.project = ? AND {clause})")
                params += [project, *values]
            rows = self._rows(f"SELECT d.project, d.path, {column} FROM documents d WHERE {' OR '.join(terms)}",
                              params)
            found.update({(project, path): value for project, path, value in rows})
        return found

    def brains(self, project: str | None = None) -> list[BrainRecord]:
        sql, params = f"SELECT {BRAIN_COLUMNS} FROM brains", []
        if project is not None:
            sql, params = sql + " WHERE project = ?", [project]
        return [brain_from_row(r) for r in self._rows(sql + " ORDER BY project, folder", params)]

    def brain_heads(self, projects: Sequence[str]) -> list[BrainHead]:
        if not projects:
            return []
        where, params = self.dialect.one_of("project", projects)
        return [brain_head_from_row(r) for r in self._rows(
            f"SELECT {BRAIN_HEAD_COLUMNS} FROM brains WHERE {where} ORDER BY project, folder", params)]

    def brain(self, project: str, folder: str) -> BrainRecord | None:
        rows = self._rows(f"SELECT {BRAIN_COLUMNS} FROM brains WHERE project = ? AND folder = ?", (project, folder))
        return brain_from_row(rows[0]) if rows else None

    def brain_heads_at(self, project: str, folders: Sequence[str]) -> list[BrainHead]:
        if not folders:
            return []
        where, params = self.dialect.one_of("folder", list(dict.fromkeys(folders)))
        return [brain_head_from_row(r) for r in self._rows(
            f"SELECT {BRAIN_HEAD_COLUMNS} FROM brains WHERE project = ? AND {where} ORDER BY folder",
            [project, *params])]

    def brain_heads_below(self, project: str, folder: str) -> list[BrainHead]:
        where, params = ("folder <> ?", [""]) if not folder else (
            "folder >= ? AND folder < ?", path_bounds(folder, False)[1:])
        return [brain_head_from_row(r) for r in self._rows(
            f"SELECT {BRAIN_HEAD_COLUMNS} FROM brains WHERE project = ? AND {where} ORDER BY folder",
            [project, *params])]

    def brain_heads_with_parent(self, parent: str) -> list[BrainHead]:
        return [brain_head_from_row(r) for r in self._rows(
            f"SELECT {BRAIN_HEAD_COLUMNS} FROM brains WHERE parent = ? ORDER BY project, folder", (parent,))]

    def skipped(self, reason: str | None = None) -> list[SkippedRecord]:
        where, params = ("", []) if reason is None else (" WHERE reason = ?", [reason])
        rows = self._rows(f"SELECT project, path, size, reason FROM skipped_files{where} ORDER BY project, path",
                          params)
        return [SkippedRecord(*r) for r in rows]
