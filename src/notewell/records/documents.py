"""The records of the document index: what the indexer writes, what a store returns, what a query may touch.

Plain frozen values, shared by the store (which builds them) and the search and services above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

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


@dataclass(frozen=True, slots=True)  # a sync holds one per stored document
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


class CandidateDoc(NamedTuple):
    """A document a query must verify. A named tuple: a common word has thousands, made in a hot loop."""

    id: int
    project: str
    path: str
    regions: tuple[int, ...] | None = None  # the ids of the regions the index matched; None: all of them
    # reading the named regions need not test their words first (PostgreSQL): a walk tested them as it went,
    # or the index named so few regions in all that reading each whole costs less than testing its words
    skip_words_test: bool = False


@dataclass(frozen=True)
class SkippedRecord:
    project: str
    path: str
    size: int
    reason: str


@dataclass(frozen=True)
class BrainHead:
    """A brain as a list of brains shows it: without the documents its brain.md lists."""

    project: str
    folder: str  # project-relative; the brain id is "<project>/<folder>"
    title: str
    summary: str
    parent: str | None  # the parent brain's id (<project>/<folder>, or <project> for a root brain), any project

    @property
    def id(self) -> str:
        return brain_id(self.project, self.folder)

    @property
    def parent_project(self) -> str | None:
        return None if self.parent is None else self.parent.partition("/")[0]


@dataclass(frozen=True)
class BrainRecord(BrainHead):
    documents: tuple[tuple[str, str], ...]  # (project-relative path, title) as brain.md lists them


def brain_id(project: str, folder: str) -> str:
    """The id of the brain in project-relative ``folder`` ("" for the project's root)."""
    return f"{project}/{folder}" if folder else project


@dataclass(frozen=True)
class Scope:
    """Which documents a query may touch: projects, a path prefix, excluded sub-folders, file types."""

    projects: Sequence[str]
    prefix: str = ""  # project-relative folder or file (it and everything below it); "" for the whole project
    prefix_partial: bool = False  # True: any path that starts with prefix's characters ("apol" finds apollo/x)
    exclude_prefixes: Sequence[str] = ()  # project-relative folders left out (sub-brains)
    file_types: Sequence[str] = ()  # endings such as ".md"; empty for every type
