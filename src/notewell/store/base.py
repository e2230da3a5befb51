"""What the services may ask of a store, whatever database is behind it.

Each concept has its own repository (documents here; identity, memories and audit in their own
modules), and a Store holds one of each. Repositories take project ids as given: deciding who may see
which project is the access module's work, never the store's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from notewell.access.models import AuditEntry, Grant, Project, TokenRecord, User
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


class CandidateDoc(NamedTuple):
    """A document a query must verify. A named tuple: a common word has thousands, made in a hot loop."""

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
    def metas(self, project: str, prefix: str = "") -> list[DocumentMeta]: ...
    def candidates(self, scope: Scope, plan: Plan | None, *, after: DocKey | None = None,
                   limit: int | None = None) -> list[CandidateDoc]:
        """The documents in scope whose index holds the plan's trigrams (every one for None), in
        (project, path) order, starting after the key ``after``, at most ``limit`` of them."""
        ...
    def bodies(self, ids: Sequence[int]) -> Iterator[tuple[int, bytes]]:
        """The texts of ``ids`` as stored (UTF-8 bytes), in that order: the search reads them undecoded."""
        ...
    def brains(self, project: str | None = None) -> list[BrainRecord]: ...
    def skipped(self) -> list[SkippedRecord]: ...
    def sizes(self) -> tuple[int, int, int]: ...  # (documents, text bytes, index bytes)


class IdentityRepository(Protocol):
    """Users, projects, grants and tokens. Emails compare through access.models.email_key (lower-cased).

    add_user and add_project raise notewell.errors.Conflict when the email, handle or id exists.
    Lists are sorted: users by email key, projects by id, grants by the other key, tokens by creation.
    """

    def add_user(self, user: User, home: Project | None = None) -> None: ...  # user + home, one transaction
    def user(self, user_id: str) -> User | None: ...
    def user_by_email(self, email: str) -> User | None: ...
    def user_by_handle(self, handle: str) -> User | None: ...
    def users(self) -> list[User]: ...
    def set_user_active(self, user_id: str, active: bool) -> None: ...
    def project(self, project_id: str) -> Project | None: ...
    def projects(self) -> list[Project]: ...
    def projects_for_user(self, user_id: str) -> list[Project]: ...  # ordinary ones + homes user_id owns
    def add_project(self, project: Project) -> None: ...
    def update_project(self, project: Project) -> None: ...  # every field but id, kind, owner, created_at
    def grant(self, user_id: str, project_id: str) -> Grant | None: ...
    def grants_for_user(self, user_id: str) -> list[Grant]: ...
    def grants_for_project(self, project_id: str) -> list[Grant]: ...
    def set_grant(self, grant: Grant) -> None: ...  # insert, or change the level of the existing grant
    def remove_grant(self, user_id: str, project_id: str) -> bool: ...
    def add_token(self, token: TokenRecord, secret_hash: str) -> None: ...
    def token(self, token_id: str) -> TokenRecord | None: ...
    def token_with_hash(self, token_id: str) -> tuple[TokenRecord, str] | None: ...
    def tokens(self, user_id: str | None = None) -> list[TokenRecord]: ...
    def revoke_token(self, token_id: str, at: str) -> bool: ...  # False if unknown or revoked already
    def touch_token(self, token_id: str, at: str) -> None: ...  # sets last_used_at


class AuditRepository(Protocol):
    """Append-only log; ``detail`` is stored as JSON. list_since: entries with at >= ``at``, oldest first."""

    def append(self, at: str, user_id: str, token_id: str | None, action: str, target: str,
               detail: dict[str, object] | None = None) -> AuditEntry: ...
    def list_since(self, at: str | None = None, limit: int | None = None) -> list[AuditEntry]: ...


class CredentialRepository(Protocol):
    """What browser sign-in keeps: password hashes (argon2id), one-time sign-in links (by the SHA-256 of their
    secret), failed sign-ins per key (an email or an address) and the key that signs session cookies."""

    def set_password(self, user_id: str, password_hash: str, at: str) -> None: ...
    def password_hash(self, user_id: str) -> str | None: ...
    def add_link(self, link_hash: str, user_id: str, created_at: str, expires_at: str) -> None: ...
    def link_user(self, link_hash: str, at: str) -> str | None:
        """The user of an unused, unexpired link, without using it."""
        ...
    def use_link(self, link_hash: str, at: str) -> str | None:
        """Mark the link used and return its user, if it was unused and unexpired; None otherwise (atomic)."""
        ...
    def add_failure(self, key: str, at: str, forget_before: str) -> None: ...  # also drops key's older failures
    def failures_since(self, key: str, since: str) -> int: ...
    def signing_key(self, name: str) -> str:
        """A random key made on first use and then kept, so every server sharing the store signs alike."""
        ...


class Store(Protocol):
    """Every repository of one database. Read-only members, so that a store's concrete repositories
    satisfy the protocols (a writable protocol attribute would have to match the type exactly)."""

    @property
    def documents(self) -> DocumentRepository: ...
    @property
    def identity(self) -> IdentityRepository: ...
    @property
    def audit(self) -> AuditRepository: ...
    @property
    def memories(self) -> MemoryRepository: ...
    @property
    def credentials(self) -> CredentialRepository: ...
    @property
    def url(self) -> str: ...
    def close(self) -> None: ...


# --- memories -----------------------------------------------------------------------------------------

MEMORY_TYPES: tuple[str, ...] = ("durable", "working")


@dataclass(frozen=True)
class MemoryInput:
    """A memory to write. ``content_hash`` is the sha256 hex of ``content``: the store keeps one live row
    per (project, path, content_hash)."""

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
    memory_type: str | None = None


@dataclass(frozen=True)
class MemoryHit:
    record: MemoryRecord
    relevance: float  # > 0, larger is better (SQLite: -bm25; PostgreSQL: ts_rank)
    matched: tuple[tuple[str, tuple[str, ...]], ...]  # (field, words of that field that matched), fields in order


class MemoryRepository(Protocol):
    def add(self, memory: MemoryInput, supersedes: str | None = None) -> tuple[MemoryRecord, bool]:
        """Insert, or return the live row with the same (project, path, content_hash) and False.

        With ``supersedes`` (a live ref) that row gets ``superseded_by`` in the same transaction and
        leaves search; raises Conflict when it is no longer live. Safe under concurrent writers."""
        ...
    def get(self, ref: str) -> MemoryRecord | None: ...
    def forget(self, ref: str, by_user_id: str, reason: str, at: str) -> MemoryRecord | None:
        """Soft-delete; None when there is no such ref or it was forgotten already."""
        ...
    def strict(self, query: MemoryQuery) -> list[MemoryHit]: ...
    def tolerant(self, query: MemoryQuery) -> list[MemoryHit]: ...
    def all(self, projects: Sequence[str], include_inactive: bool = False) -> Iterator[MemoryRecord]:
        """Every memory of ``projects`` by creation; superseded and forgotten ones only when asked."""
        ...
    def count(self, projects: Sequence[str] | None = None) -> int: ...  # live memories
