"""What the services may ask of a store, whatever database is behind it.

Each concept has its own repository (documents here; identity, memories and audit in their own
modules), and a Store holds one of each. Repositories take project ids as given: deciding who may see
which project is the access module's work, never the store's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from notewell.search.plan import Plan

DocKey = tuple[str, str]  # (project, project-relative path)


@dataclass(frozen=True)
class DocumentInput:
    project: str
    path: str
    title: str
    summary: str
    size: int
    mtime_ns: int
    sha256: str
    text: str
    note: str = ""  # why the text is not exactly the file's bytes (e.g. "decoded with replacement")


@dataclass(frozen=True)
class DocState:
    id: int
    project: str
    path: str
    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class DocumentMeta:
    project: str
    path: str
    title: str
    summary: str
    size: int
    mtime_ns: int
    sha256: str
    line_count: int
    note: str


@dataclass(frozen=True)
class Document:
    meta: DocumentMeta
    text: str


@dataclass(frozen=True)
class CandidateDoc:
    id: int
    project: str
    path: str


@dataclass(frozen=True)
class SkippedRecord:
    project: str
    path: str
    size: int
    reason: str


@dataclass(frozen=True)
class BrainRecord:
    project: str
    folder: str  # project-relative; the brain id is "<project>/<folder>"
    title: str
    summary: str
    parent: str | None  # project-relative folder of the parent brain, same project
    documents: tuple[tuple[str, str], ...]  # (project-relative path, title) as brain.md lists them

    @property
    def id(self) -> str:
        return f"{self.project}/{self.folder}" if self.folder else self.project


@dataclass(frozen=True)
class Scope:
    """Which documents a query may touch: projects, a path prefix, excluded sub-folders, file types."""

    projects: Sequence[str]
    prefix: str = ""  # project-relative folder or file; "" for the whole project
    exclude_prefixes: Sequence[str] = ()  # project-relative folders left out (sub-brains)
    file_types: Sequence[str] = ()  # endings such as ".md"; empty for every type


class DocumentWriter(Protocol):
    def upsert(self, doc: DocumentInput) -> None: ...
    def touch(self, key: DocKey, mtime_ns: int) -> None: ...
    def rename(self, old: DocKey, new: DocKey, mtime_ns: int) -> None: ...
    def delete(self, key: DocKey) -> None: ...
    def set_skipped(self, skipped: Sequence[SkippedRecord]) -> None: ...
    def set_projects(self, projects: Sequence[str]) -> None: ...
    def set_brains(self, brains: Sequence[BrainRecord]) -> None: ...


class DocumentRepository(Protocol):
    def state(self) -> dict[DocKey, DocState]: ...
    def writer(self) -> AbstractContextManager[DocumentWriter]: ...
    def vault_projects(self) -> list[str]: ...
    def get(self, project: str, path: str) -> Document | None: ...
    def meta(self, project: str, path: str) -> DocumentMeta | None: ...
    def list(self, project: str, prefix: str = "") -> list[DocumentMeta]: ...
    def candidates(self, scope: Scope, plan: Plan | None) -> list[CandidateDoc]: ...
    def texts(self, ids: Sequence[int]) -> Iterator[tuple[int, str]]: ...
    def brains(self, project: str | None = None) -> list[BrainRecord]: ...
    def skipped(self) -> list[SkippedRecord]: ...
    def sizes(self) -> tuple[int, int, int]: ...  # (documents, text bytes, index bytes)


class Store(Protocol):
    documents: DocumentRepository

    @property
    def url(self) -> str: ...
    def close(self) -> None: ...
