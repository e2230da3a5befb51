"""Agent memory: remember, strict search, tolerant recall, token-bounded context packs, forget.

Visibility is the project's and every decision goes to notewell.access.authorization (actions
``memory:read``, ``memory:write``, ``memory:change``; the rule for who may supersede or forget a memory
is in notewell.access.policy): a memory is seen by whoever
sees its project (a member's home only by that member; staff and admin every ordinary project, never a
home; a project-scoped token its project only). A memory the caller may not see gives the same
``Not found: <ref>`` as one that does not exist.

Locations: a memory lives in a project at a logical path inside it; its full location is
``<project>/<path>``, e.g. ``projects/apollo/decisions``. A path is kept composed (NFC: paths.composed), and
every path a caller gives is read so: either Unicode form of "café" names one place. A path_filter is a
prefix of such locations, character by character (services.location_filter: ``~alice/auth/tok`` finds
``~alice/auth/tokens``). A path_filter that can match no project the caller may read is refused as a scope
divergence (the same refusal whether that project exists or not).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from notewell.access.policy import sees_memory
from notewell.access.principal import Principal
from notewell.errors import Conflict, Forbidden, InvalidArgument, NotFound
from notewell.paths import composed, normalize_path, split_vault_path
from notewell.records.identity import Project
from notewell.records.memories import (
    MemoryFilter,
    MemoryHit,
    MemoryInput,
    MemoryQuery,
    MemoryRecord,
    Narrowing,
)
from notewell.services.context_pack import ContextPack, PackItem, pack
from notewell.services.hybrid import Fused, fuse, identifier
from notewell.services.location_filter import ANY, location_filter
from notewell.services.meaning import words_only
from notewell.services.memory_checks import (
    check_expiry,
    check_limit,
    check_line,
    check_memory_type,
    check_tags,
    check_text,
    check_unicode,
    default_title,
)
from notewell.services.memory_documents import document_ties, readable_ties
from notewell.services.memory_rank import blend, one_word, query_terms, record_text, tolerant_query_terms
from notewell.services.recall_documents import RecalledMemory, memory_label, recall_documents
from notewell.store.base import Store
from notewell.timestamps import now_iso

if TYPE_CHECKING:
    from notewell.access.audit import AuditTrail
    from notewell.access.authorization import Authorization
    from notewell.search.engine import SearchEngine
    from notewell.services.links import LinkService
    from notewell.services.meaning import MeaningService

SEARCH_LIMIT_DEFAULT = 5
SEARCH_LIMIT_MAX = 50
RECALL_LIMIT_DEFAULT = 10
LIST_LIMIT_MAX = 100
CANDIDATES_MIN = 20  # the blend re-ranks the best max(3 x limit, 20) full-text candidates
ABOUT_SHOWN = 10  # memories about a document that readDoc and the document page show
CONTEXT_TOKENS_DEFAULT = 2000
CONTEXT_TOKENS_MIN = 50
CONTEXT_TOKENS_MAX = 100_000
MAX_CONTENT_CHARS = 100_000
MAX_TITLE_CHARS = 200
MAX_REASON_CHARS = 500


@dataclass(frozen=True)
class Memory:
    ref: str
    project: str
    path: str
    memory_type: str
    title: str
    content: str
    tags: tuple[str, ...]
    created: str
    updated: str
    author: str  # user id
    expires_at: str | None = None
    author_token: str | None = None  # the id of the token it was written with (None: the command line)
    superseded_by: str | None = None
    deleted_at: str | None = None
    delete_reason: str | None = None
    private: bool = False  # only its author sees it, whatever anyone's role

    @property
    def location(self) -> str:
        return f"{self.project}/{self.path}" if self.path else self.project


@dataclass(frozen=True)
class MemoryResult:
    memory: Memory
    score: float
    why: str
    matched: dict[str, list[str]]  # field -> the words of that field that matched
    found_by: tuple[str, ...] = ("words",)  # "words", "meaning" or both (services.hybrid)
    similarity: float | None = None  # cosine similarity to the query, when meaning found it
    documents: tuple[str, ...] = ()  # the documents it is tied to that the caller may read (vault paths)
    documents_gone: tuple[str, ...] = ()  # those deleted since, in projects the caller may read: the tie is kept


@dataclass(frozen=True)
class Remembered:
    memory: Memory
    created: bool  # False: this content was already at this project and path; its ref is returned
    superseded: str | None = None


@dataclass(frozen=True)
class MemoryAbout:
    """A memory about a document, and how: ``about`` (remember named it) or ``mention`` (its text does)."""

    memory: Memory
    how: str


@dataclass(frozen=True)
class MemorySearch:
    query: str
    mode: str  # "strict" or "tolerant"
    terms: list[str]
    results: list[MemoryResult] = field(default_factory=list)
    words_only: str | None = None  # why a tolerant search could not use meaning (off, no model, an unreadable query)
    more: bool = False  # more memories match than the limit let through (strict: every word; tolerant: as recall)


def _memory(r: MemoryRecord) -> Memory:
    return Memory(ref=r.ref, project=r.project, path=r.path, memory_type=r.memory_type, title=r.title,
                  content=r.content, tags=r.tags, created=r.created, updated=r.updated, author=r.author_user_id,
                  expires_at=r.expires_at, author_token=r.author_token_id, superseded_by=r.superseded_by,
                  deleted_at=r.deleted_at, delete_reason=r.delete_reason, private=r.private_to is not None)


def _candidates(limit: int) -> int:
    return max(3 * limit, CANDIDATES_MIN)


def _already_forgotten(record: MemoryRecord) -> Conflict:
    return Conflict(f"Already forgotten: {record.ref} was forgotten at {record.deleted_at}; it is in no search any "
                    "more, so there is nothing left to do")


def _why(hit: MemoryHit, terms: Sequence[str], strict: bool) -> str:
    fields = "; ".join(f"{name}: {', '.join(words)}" for name, words in hit.matched)
    if strict:
        return f"every term matched as a whole word ({', '.join(terms)}) — {fields}"
    return f"matched words (stems and prefixes of {', '.join(terms)}) — {fields}"


def _why_fused(found: Fused[MemoryRecord, MemoryHit], terms: Sequence[str]) -> str:
    parts = [_why(found.hit, terms, False)] if found.hit is not None else []
    if "meaning" in found.matched:
        parts.append(f"close in meaning (similarity {found.similarity:.2f})")
    return "; ".join(parts)


class MemoryService:
    def __init__(self, store: Store, authorization: Authorization, audit: AuditTrail, links: LinkService,
                 engine: SearchEngine | None = None, meaning: MeaningService | None = None) -> None:
        self.store = store
        self.links = links  # include_documents walks links as buildContext does
        self.memories = store.memories
        self.authorization = authorization
        self.audit = audit
        self.engine = engine
        self.meaning = meaning

    def _readable(self, p: Principal) -> list[str]:
        return [project.id for project in self.authorization.projects(p, "memory:read")]

    # --- writes ---------------------------------------------------------------------------------------

    def remember(self, p: Principal, content: str, *, path: str = "", memory_type: str = "durable",
                 title: str | None = None, tags: Sequence[str] | None = None, project: str | None = None,
                 supersedes: str | None = None, expires_at: str | None = None, private: bool = False,
                 about: str | None = None) -> Remembered:
        """Keep ``content`` verbatim; the same content at the same project and path returns the existing ref.
        ``private``: only the author will see it (every memory tool, every door, whatever anyone's role); by
        default a memory is seen by every reader of its project. ``about``: the document (a vault path) it is
        about; the documents its text names are tied to it too (services/memory_documents.py)."""
        self.authorization.authorize(p, "memory:write")
        if not isinstance(content, str) or not content.strip():
            raise InvalidArgument("content", "must not be empty; give the text to remember")
        if len(content) > MAX_CONTENT_CHARS:
            raise InvalidArgument("content", f"is {len(content)} characters; keep a memory to {MAX_CONTENT_CHARS}")
        check_text("content", content)
        kind = check_memory_type(memory_type)
        # one place whichever Unicode form is typed; composed first, as composing may lengthen a path threefold
        clean_path = normalize_path(composed(path) if isinstance(path, str) else path or "", "path")
        check_line("path", clean_path)
        clean_title = (title or "").strip() or default_title(content)
        check_line("title", clean_title)
        if len(clean_title) > MAX_TITLE_CHARS:
            raise InvalidArgument("title", f"is {len(clean_title)} characters; keep it to {MAX_TITLE_CHARS}")
        clean_tags = check_tags(tags)
        expiry = check_expiry(expires_at, kind)
        target = self._write_target(p, project)
        old: MemoryRecord | None = None
        if supersedes:
            old = self._visible(p, supersedes)
            if not old.live:
                raise InvalidArgument("supersedes", f"{supersedes} is already superseded by {old.superseded_by}; "
                                                    "supersede that one instead")
            self._require_change_right(p, old, "supersede")
        ties = document_ties(self.store, self.authorization, p, about, content, target.id)
        memory = MemoryInput(
            ref=f"mem_{secrets.token_hex(10)}", project=target.id, author_user_id=p.user_id,
            author_token_id=p.token_id, memory_type=kind, path=clean_path, title=clean_title, content=content,
            tags=clean_tags, content_hash=hashlib.sha256(content.encode("utf-8")).hexdigest(), created=now_iso(),
            expires_at=expiry, private_to=p.user_id if private else None, documents=ties,
        )
        with self.store.together():  # the memory, the rule it retires and its audit entry: one commit, or none
            record, created = self.memories.add(memory, supersedes=old.ref if old else None)
            superseded = old.ref if old and record.ref != old.ref else None  # (the store supersedes by a live copy too)
            if superseded:
                self.store.brain.retire_gone(superseded, record.created)  # a taught rule's memory: the rule goes too
            self.audit.record(p, "memory.remember", record.ref, {
                "project": record.project, "path": record.path, "memory_type": record.memory_type,
                "created": created, "supersedes": superseded, "private": record.private_to is not None,
            })
        if created and self.meaning is not None:
            self.meaning.work.set()  # its vector was queued with it: the runner takes it now
        return Remembered(_memory(record), created, superseded)

    def about_document(self, p: Principal, path: str, limit: int = ABOUT_SHOWN) -> list[MemoryAbout]:
        """The live memories p may see that are about the document at ``path`` (a vault path), newest first;
        none for a caller who may not read memories (a document's reader without the scope)."""
        if not self.authorization.allowed(p, "memory:read"):
            return []
        project, rel = split_vault_path(normalize_path(path, "path"), "path")
        found = self.store.memory_documents.about((project, rel), self._readable(p), p.user_id, now_iso(), limit)
        return [MemoryAbout(_memory(record), how) for record, how in found]

    def may_remember(self, p: Principal, *, project: str | None = None, supersedes: str | None = None) -> None:
        """Raise what ``remember`` would refuse this caller for, writing nothing: the scope, the project, and
        the right to change the memory it supersedes (superseded or forgotten since, as after a first
        request with the same Idempotency-Key). A kept answer is handed back only past this check."""
        self.authorization.authorize(p, "memory:write")
        self._write_target(p, project)
        if supersedes:
            self._require_change_right(p, self._visible(p, supersedes, include_forgotten=True), "supersede")

    def _write_target(self, p: Principal, project: str | None) -> Project:
        if not project and p.local_owner and p.bound_project is None:
            raise InvalidArgument("project", "name the project to write to; the local owner has no home")
        return self.authorization.authorize(p, "memory:write", project or p.default_project)

    def forget(self, p: Principal, ref: str, reason: str | None = None) -> Memory:
        """Soft-delete a memory: it leaves every search; the row stays for the audit trail. The reason is
        optional (XMemo's flow is find, review, forget); the audit log says when none was given. A memory
        already forgotten is said to be so to whoever may see its project, not "Not found"."""
        self.authorization.authorize(p, "memory:write")
        if reason is not None and not isinstance(reason, str):
            raise InvalidArgument("reason", "must be text, or left out")
        why = (reason or "").strip()
        if len(why) > MAX_REASON_CHARS:
            raise InvalidArgument("reason", f"is {len(why)} characters; keep it to {MAX_REASON_CHARS}")
        if "\x00" in why:
            raise InvalidArgument("reason", "contains a NUL character (\\x00); remove it")
        check_unicode("reason", why)
        record = self._visible(p, ref, include_forgotten=True)
        if record.deleted_at is not None:
            raise _already_forgotten(record)
        self._require_change_right(p, record, "forget")
        at = now_iso()
        done = self.memories.forget(record.ref, p.user_id, why, at)
        if done is None:  # forgotten by someone else meanwhile
            raise _already_forgotten(self.memories.get(record.ref) or record)
        self.store.brain.retire_gone(record.ref, at)  # a taught rule's memory: the rule goes with it
        self.audit.record(p, "memory.forget", record.ref, {"project": record.project, "reason": why or None,
                                                           "reasonGiven": bool(why)})
        return _memory(done)

    def _require_change_right(self, p: Principal, record: MemoryRecord, verb: str) -> None:
        if self.authorization.allowed(p, "memory:change", record):
            return
        raise Forbidden(f"Forbidden: only the author of {record.ref}, a writer of {record.project} or an admin "
                        f"may {verb} it")

    # --- reads ----------------------------------------------------------------------------------------

    def _visible(self, p: Principal, ref: object, *, include_forgotten: bool = False) -> MemoryRecord:
        if not isinstance(ref, str) or not ref.strip():
            raise InvalidArgument("ref", "must not be empty; give a memory ref such as mem_3f2a…")
        record = self.memories.get(ref.strip())
        if record is None or not self.authorization.allowed(p, "project:see", record):
            raise NotFound(f"Not found: {ref}")
        if record.deleted_at is not None and not include_forgotten:
            raise NotFound(f"Not found: {ref}")
        return record

    def get(self, p: Principal, ref: str) -> Memory:
        """A memory by ref, superseded ones included (they only leave search); a forgotten one (with when and
        why) only to whoever could have forgotten it, as the listing with forgotten ones shows it: Not found to
        anyone else."""
        self.authorization.authorize(p, "memory:read")
        record = self._visible(p, ref, include_forgotten=True)
        if record.deleted_at is not None and not self.authorization.allowed(p, "memory:change", record):
            raise NotFound(f"Not found: {ref}")
        return _memory(record)

    def _seen(self, p: Principal) -> tuple[list[str], list[str]]:
        """The projects whose memories p may read and those whose documents p may read, in one read of the store."""
        seen = self.authorization.seen(p)
        return ([project.id for project in seen.projects("memory:read")],
                [project.id for project in seen.projects("knowledge:read")])

    def _query(self, p: Principal, readable: list[str], terms: list[str], path_filter: str | None,
               memory_type: str | None, limit: int, narrow: Narrowing | None = None) -> MemoryQuery:
        kind = check_memory_type(memory_type, filtering=True) if memory_type not in (None, "", ANY) else None
        where = location_filter(path_filter, readable)
        return MemoryQuery(projects=where.projects, terms=terms, now=now_iso(), limit=limit,
                           path_prefix=composed(where.prefix), path_prefix_partial=where.partial, memory_type=kind,
                           narrowing=narrow or Narrowing(), viewer=p.user_id)

    def _rank(self, hits: list[MemoryHit], terms: list[str], *, strict: bool, prefer_working: bool,
              limit: int) -> list[MemoryResult]:
        if not hits:
            return []
        best = max(h.relevance for h in hits)
        now = datetime.now(UTC)
        scored = sorted(
            ((blend(h.relevance / best, h.record.created, h.record.memory_type, now, prefer_working=prefer_working),
              i, h) for i, h in enumerate(hits)),
            key=lambda t: (-t[0], t[1]),
        )
        return [MemoryResult(_memory(h.record), round(score, 4), _why(h, terms, strict),
                             {name: list(words) for name, words in h.matched})
                for score, _, h in scored[:limit]]

    def search_memory(self, p: Principal, query: str, *, limit: int = SEARCH_LIMIT_DEFAULT,
                      path_filter: str | None = None, memory_type: str | None = None,
                      prefer_working: bool = False, narrow: Narrowing | None = None) -> MemorySearch:
        """Strict: every query word must appear as a whole word (case and accents folded) in the title,
        content, tags or path. Zero results is an honest answer. ``narrow``: the wider filters. A limit of 0
        (XMemo refuses only a negative one) checks everything and returns nothing."""
        self.authorization.authorize(p, "memory:read")
        terms = query_terms(query)
        limit = check_limit(limit, "limit", SEARCH_LIMIT_MAX, minimum=0)
        readable, documents = self._seen(p)
        chosen = self._query(p, readable, terms, path_filter, memory_type, _candidates(limit), narrow)
        hits = self.memories.strict(chosen) if limit else []
        ranked = self._rank(hits, terms, strict=True, prefer_working=bool(prefer_working), limit=limit)
        return MemorySearch(query, "strict", terms, self._named(documents, ranked), more=len(hits) > limit)

    def recall(self, p: Principal, query: str, *, limit: int = RECALL_LIMIT_DEFAULT, path_filter: str | None = None,
               memory_type: str | None = None, prefer_working: bool = False,
               narrow: Narrowing | None = None) -> MemorySearch:
        """Tolerant: any word, English stems, words of 3+ letters also as prefixes; ranked by the blend. A limit
        of 0 checks everything and returns nothing. ``more``: candidates beyond the limit were found (by words, or
        by meaning alone from hybrid.MEANING_MIN), which a larger limit or a narrower filter reaches."""
        self.authorization.authorize(p, "memory:read")
        terms = tolerant_query_terms(query)
        limit = check_limit(limit, "limit", SEARCH_LIMIT_MAX, minimum=0)
        readable, documents = self._seen(p)
        chosen = self._query(p, readable, terms, path_filter, memory_type, _candidates(limit), narrow)
        if not limit:
            return MemorySearch(query, "tolerant", terms)
        near = self.meaning.nearest_memories_ahead(chosen, query) if self.meaning is not None else list
        hits = self.memories.tolerant(chosen)  # while the nearest are found
        nearest = near()
        similar, noise = (self.meaning.beyond([h.record.ref for h in hits], nearest, query)
                          if self.meaning is not None else ({}, None))
        found = fuse(hits, lambda h: h.relevance, lambda h: h.record, nearest, lambda r: r.ref,
                     lookup=one_word(query), exact=query if identifier(query) else None,
                     text_of=lambda h: record_text(h.record), similar=similar, noise=noise)
        return MemorySearch(query, "tolerant", terms,
                            self._named(documents, self._rank_fused(found, terms, bool(prefer_working), limit)),
                            words_only=words_only(self.meaning, query), more=len(found) > limit)

    def _named(self, documents: list[str], results: list[MemoryResult]) -> list[MemoryResult]:
        """The results, each naming the documents it is tied to in ``documents`` (the projects whose documents the
        caller may read), and those of them deleted since (docs/links.md)."""
        named = readable_ties(self.store, documents, [r.memory.ref for r in results])
        return [replace(r, documents=named[r.memory.ref].present, documents_gone=named[r.memory.ref].gone)
                if r.memory.ref in named else r for r in results]

    def _rank_fused(self, found: list[Fused[MemoryRecord, MemoryHit]], terms: list[str], prefer_working: bool,
                    limit: int) -> list[MemoryResult]:
        now = datetime.now(UTC)
        scored = sorted(((blend(f.relevance, f.item.created, f.item.memory_type, now, prefer_working=prefer_working),
                          i, f) for i, f in enumerate(found)), key=lambda t: (-t[0], t[1]))
        return [MemoryResult(_memory(f.item), round(score, 4), _why_fused(f, terms),
                             {name: list(words) for name, words in f.hit.matched} if f.hit else {},
                             tuple(f.matched), f.similarity)
                for score, _, f in scored[:limit]]

    def recall_context(self, p: Principal, query: str, *, max_tokens: int = CONTEXT_TOKENS_DEFAULT,
                       include_documents: bool = False, path_filter: str | None = None,
                       memory_type: str | None = None, narrow: Narrowing | None = None) -> ContextPack:
        """The best memories (and with include_documents the best readable document passages, and the documents
        one link from theirs and from the memories', services/recall_documents.py) for a query, packed into one
        block of at most ``max_tokens`` (services.tokens counts), by relevance."""
        self.authorization.authorize(p, "memory:read")
        terms = tolerant_query_terms(query)
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or not (
                CONTEXT_TOKENS_MIN <= max_tokens <= CONTEXT_TOKENS_MAX):
            raise InvalidArgument("max_tokens", f"must be from {CONTEXT_TOKENS_MIN} to {CONTEXT_TOKENS_MAX} "
                                                f"(got {max_tokens!r})")
        found = self.recall(p, query, limit=SEARCH_LIMIT_MAX, path_filter=path_filter, memory_type=memory_type,
                            narrow=narrow)
        top = found.results[0].score if found.results else 1.0
        items = [PackItem(kind="memory", ref=r.memory.ref, title=r.memory.title, label=memory_label(r.memory.location,
                          r.memory.memory_type, r.memory.created, r.documents), text=r.memory.content,
                          relevance=r.score / top, documents=r.documents, found_by=r.found_by,
                          similarity=r.similarity) for r in found.results]
        if include_documents:
            self.authorization.authorize(p, "knowledge:read")
            if self.engine is None:
                raise InvalidArgument("include_documents", "this server has no document index; index a vault first")
            readable = [project.id for project in self.authorization.projects(p, "knowledge:read")]
            recalled = [RecalledMemory(r.memory.ref, r.score / top, r.documents) for r in found.results]
            items += recall_documents(self.engine, self.store, self.links, readable, terms, recalled)
        items.sort(key=lambda item: -item.relevance)
        packed = pack(query, items, max_tokens)
        packed.words_only = found.words_only
        return packed

    def list_memories(self, p: Principal, *, project: str | None = None, path: str = "",
                      memory_type: str | None = None, narrow: Narrowing | None = None,
                      include_superseded: bool = False, include_forgotten: bool = False, limit: int = 20,
                      offset: int = 0) -> tuple[list[Memory], bool]:
        """Memories chosen by their fields, newest first. Superseded ones on request; forgotten ones on
        request and only where the caller could have forgotten them (their own, a project they may write,
        or any for an admin): the same rule as forget's. Returns the page and whether more follow."""
        self.authorization.authorize(p, "memory:read")
        limit = check_limit(limit, "limit", LIST_LIMIT_MAX)
        if not isinstance(offset, int) or offset < 0:
            raise InvalidArgument("offset", "must be 0 or more")
        check_text("path", path)
        if path and not project:
            raise InvalidArgument("path", "needs project: a path is looked for inside one project")
        projects = [self.authorization.authorize(p, "memory:read", project).id] if project else self._readable(p)
        forgotten: list[str] = []
        # forgotten ones where p could have forgotten them (memory:change): the same rule as get's and forget's
        include_forgotten = include_forgotten and self.authorization.allowed(p, "memory:change")
        if include_forgotten:
            forgotten = [pid for pid in projects if self.authorization.allowed(p, "memory:change", pid)]
        chosen = MemoryFilter(
            projects=projects, narrowing=narrow or Narrowing(), path_prefix=composed(normalize_path(path, "path")),
            memory_type=check_memory_type(memory_type) if memory_type else None, viewer=p.user_id,
            superseded=include_superseded, forgotten_projects=forgotten,
            forgotten_author=p.user_id if include_forgotten else None)
        found = self.memories.listing(chosen, limit + 1, offset)
        return [_memory(r) for r in found[:limit]], len(found) > limit

    def export(self, p: Principal, *, include_inactive: bool = False) -> Iterator[Memory]:
        """Every memory the caller may read, oldest first (superseded and forgotten ones on request: a forgotten
        one only where the caller could have forgotten it, as ``get`` shows it)."""
        self.authorization.authorize(p, "memory:read")
        for record in self.memories.all(self._readable(p), include_inactive=include_inactive):
            if not sees_memory(p, record.private_to):  # the projects are authorized; a private one is its author's
                continue
            if record.deleted_at is None or self.authorization.allowed(p, "memory:change", record):
                yield _memory(record)
