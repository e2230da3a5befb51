"""The records of memories: what a service writes, what a store returns, how a memory search is asked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

MEMORY_TYPES: tuple[str, ...] = ("durable", "working")
TIES: tuple[str, ...] = ("about", "mention")  # how a memory is tied to a document: remember's about, or its text


@dataclass(frozen=True)
class DocumentTie:
    """A document a memory is about (``how``: one of TIES), by its project and project-relative path."""

    project: str
    path: str
    how: str


@dataclass(frozen=True)
class Narrowing:
    """Who wrote a memory, with which token, its tags and when: what the REST API's wider filters choose by."""

    author_user_id: str | None = None
    author_token_id: str | None = None
    tags: Sequence[str] = ()  # every one of them
    created_since: str | None = None  # created at or after (ISO 8601 UTC)
    created_until: str | None = None  # created before


@dataclass(frozen=True)
class MemoryInput:
    """A memory to write. ``content_hash`` is the sha256 hex of ``content`` (a taught action item's: of its content
    and its tags, services/brain_knowledge.py): the store keeps one live row per (project, path, content_hash)."""

    ref: str
    project: str
    author_user_id: str
    author_token_id: str | None
    memory_type: str  # one of MEMORY_TYPES
    path: str  # a logical path such as projects/apollo/decisions ("" for none)
    title: str
    content: str  # verbatim
    tags: tuple[str, ...]
    content_hash: str
    created: str  # ISO 8601 UTC, sorts as text
    expires_at: str | None = None  # working memories only
    private_to: str | None = None  # a user id: only that author sees it; None: every reader of the project
    documents: tuple[DocumentTie, ...] = ()  # written with it, in its transaction


@dataclass(frozen=True)
class MemoryRecord:
    ref: str
    project: str
    author_user_id: str
    author_token_id: str | None
    memory_type: str
    path: str
    title: str
    content: str
    tags: tuple[str, ...]
    content_hash: str
    created: str
    updated: str
    expires_at: str | None = None
    superseded_by: str | None = None
    deleted_at: str | None = None
    deleted_by: str | None = None
    delete_reason: str | None = None
    private_to: str | None = None  # a user id: only that author sees it; None: every reader of the project

    @property
    def live(self) -> bool:
        """Neither forgotten nor superseded (an expired working memory is still live, just out of search)."""
        return self.deleted_at is None and self.superseded_by is None


@dataclass(frozen=True)
class MemoryQuery:
    """A full-text query over the live memories of ``projects``.

    ``terms`` are words already case-folded by the service (letters and digits, no syntax). The strict
    query needs every term as a whole word; the tolerant one any term, stemmed (English), a term of 3 or
    more characters also as a word prefix.
    """

    projects: Sequence[str]
    terms: Sequence[str]
    now: str  # working memories whose expires_at <= now are left out
    limit: int  # candidates wanted, best full-text relevance first
    path_prefix: str = ""  # "" for every path; otherwise the path itself or anything below it
    path_prefix_partial: bool = False  # True: any path that starts with path_prefix ("apol" finds apollo/x)
    viewer: str = ""  # whose private memories are included (a user id); others' private ones never are
    memory_type: str | None = None
    narrowing: Narrowing = field(default_factory=lambda: Narrowing())
    explain: bool = True  # False: leave MemoryHit.matched empty (a caller that never shows why saves the work)


@dataclass(frozen=True)
class MemoryFilter:
    """Memories chosen by their fields rather than by words, newest first.

    Live memories of ``projects`` by default; ``superseded`` adds superseded ones; forgotten ones come
    only from ``forgotten_projects`` or, anywhere in ``projects``, when ``forgotten_author`` wrote them.
    """

    projects: Sequence[str]
    narrowing: Narrowing = field(default_factory=lambda: Narrowing())
    path_prefix: str = ""  # inside each of ``projects``: the path itself or anything below it
    memory_type: str | None = None
    viewer: str = ""  # whose private memories are included (a user id); others' private ones never are
    superseded: bool = False
    forgotten_projects: Sequence[str] = ()
    forgotten_author: str | None = None


@dataclass(frozen=True)
class MemoryHit:
    record: MemoryRecord
    relevance: float  # > 0, larger is better: FTS5's bm25 on both backends (PostgreSQL: store/postgres/word_rank.py)
    matched: tuple[tuple[str, tuple[str, ...]], ...]  # (field, words of that field that matched), fields in order
