"""buildContext: the documents and memories around a start, found by following links, packed into a budget.

The start is a document (``path``), a memory (``ref``) or a ``query``. A memory's documents (the one at its
path, the ones it is about or names: services/memory_documents.py, and the links in its text) are one hop
from it; from the documents the walk follows links both ways (outgoing links and backlinks, through
services.links, so only what the caller may read is ever reached), and each document reached brings the
memories about it one hop further. Nothing beyond ``depth`` hops (default 1, at most MAX_DEPTH) enters, and
the walk visits at most MAX_DOCUMENTS documents. A query starts from the documents that match it best: those
holding the most of its words, then the most lines holding them, a word in the file's name first among equals.
Items are ranked by distance, then by the order they were reached (the start's own order first: a query's best
match first), and packed as recall_context packs (services/context_pack.py): whole when they fit, else ended at
a sentence boundary, else left out and reported; ``tokens_used <= max_tokens`` always. A document longer than
link_walk.DOCUMENT_CHARS enters as its beginning, not complete, and left_out names where its rest is read.
Each item says why it is there: "the document asked for", "linked from <path> line 33", "links to <path> at
line 12" (a backlink), "matches the query", "about <path>" or "mentions <path>" (a memory tied to a document),
"kept at this document's path".
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from notewell.access.principal import Principal
from notewell.errors import InvalidArgument
from notewell.fold import fold
from notewell.paths import composed, indexed_spelling
from notewell.records.documents import DocKey
from notewell.services.context_pack import ContextPack, LeftOut, PackItem, pack, render
from notewell.services.knowledge import READ, KnowledgeService
from notewell.services.link_walk import Reached, document_item, walk
from notewell.services.links import LinkService
from notewell.services.memory import CONTEXT_TOKENS_DEFAULT, CONTEXT_TOKENS_MAX, CONTEXT_TOKENS_MIN, MemoryService
from notewell.services.memory_rank import tolerant_query_terms
from notewell.services.passages import looked_up
from notewell.services.token_count import count_tokens
from notewell.store.base import Store
from notewell.vault.link_resolution import Resolver
from notewell.vault.note_links import parse_links

if TYPE_CHECKING:
    from notewell.access.authorization import Authorization

DEPTH_DEFAULT: Final = 1
MAX_DEPTH: Final = 3
QUERY_SEEDS: Final = 5
"""A query starts from at most this many documents and this many memories."""
QUERY_LINES_PER_WORD: Final = 200
"""A query's words are each looked for in at most this many lines when its starts are ranked."""
MEMORIES_AT_PATH: Final = 5
"""A document brings at most this many memories tied to it; the start document also this many kept at its path."""
REF_MAX_CHARS: Final = 200
TRY_TOKENS_FACTOR: Final = 1.25
CHARS_PER_TOKEN: Final = 4


@dataclass(frozen=True)
class ContextItem:
    kind: str  # "document" or "memory"
    ref: str  # a vault path, or a memory ref
    title: str
    why: str
    distance: int  # hops from the start (0: the start itself)
    tokens: int
    complete: bool  # False: ended at a sentence boundary, or a document cut to its beginning (left_out says where)


@dataclass(frozen=True)
class LinkContext:
    start: str  # what the walk started from: "path ...", "ref ...", "query ..."
    depth: int
    max_tokens: int
    text: str
    tokens_used: int
    items: list[ContextItem]
    left_out: list[LeftOut]
    truncated: bool  # the walk stopped at MAX_DOCUMENTS


@dataclass
class _Found(Reached):
    """What the walk reached (services/link_walk.py), and the memories of the start."""

    memories: dict[str, tuple[str, int, str, str]] = field(default_factory=dict)  # ref -> why, distance, title, text


def _check(depth: object, max_tokens: object) -> tuple[int, int]:
    if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= MAX_DEPTH:
        raise InvalidArgument("depth", f"must be from 0 to {MAX_DEPTH} hops (got {depth!r})")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not (
            CONTEXT_TOKENS_MIN <= max_tokens <= CONTEXT_TOKENS_MAX):
        raise InvalidArgument("max_tokens", f"must be from {CONTEXT_TOKENS_MIN} to {CONTEXT_TOKENS_MAX} "
                                            f"(got {max_tokens!r})")
    return depth, max_tokens


class LinkContextService:
    def __init__(self, store: Store, authorization: Authorization, links: LinkService, knowledge: KnowledgeService,
                 memory: MemoryService) -> None:
        self.store = store
        self.authorization = authorization
        self.links = links
        self.knowledge = knowledge
        self.memory = memory

    def build_context(self, p: Principal, *, path: str | None = None, ref: str | None = None,
                      query: str | None = None, depth: int = DEPTH_DEFAULT,
                      max_tokens: int = CONTEXT_TOKENS_DEFAULT) -> LinkContext:
        self.authorization.authorize(p, READ)
        given = [(name, value) for name, value in (("path", path), ("ref", ref), ("query", query)) if value]
        if len(given) != 1:
            raise InvalidArgument("path", "give exactly one of path (a document), ref (a memory) or query")
        depth, max_tokens = _check(depth, max_tokens)
        readable = self.links.readable(p)
        found = _Found()
        name, value = given[0]
        if name == "path":
            found.add_document(self.links.document(p, value, readable), "the document asked for", 0)
        elif name == "ref":
            if not isinstance(value, str) or len(value) > REF_MAX_CHARS:
                raise InvalidArgument("ref", f"a memory's ref is at most {REF_MAX_CHARS} characters (recall gives it)")
            self._from_memory(p, value, readable, found)
        else:
            self._from_query(p, value, found)
        start = min((reach.distance for reach in found.documents.values()), default=depth)
        walk(self.links, readable, found, max(0, depth - start))
        self._memories_of_documents(p, found, depth)
        return self._packed(f"{name} {value}", depth, max_tokens, found)

    def _memories_of_documents(self, p: Principal, found: _Found, depth: int) -> None:
        """The memories p may see about each document reached (tied to it; and for the start, kept at its path),
        one hop further than it. One query finds which documents have ties at all: most have none."""
        if not self.authorization.allowed(p, "memory:read"):
            return
        near = [(key, reach) for key, reach in found.documents.items() if reach.distance < depth]
        tied = self.store.memory_documents.tied([key for key, _ in near])
        for key, reach in near:
            location, distance = f"{key[0]}/{key[1]}", reach.distance + 1
            if key in tied:
                for about in self.memory.about_document(p, location, limit=MEMORIES_AT_PATH):
                    m = about.memory
                    why = f"about {location}" if about.how == "about" else f"mentions {location}"
                    found.memories.setdefault(m.ref, (why, distance, m.title, m.content))
            if reach.distance > 0 or not self.authorization.allowed(p, "memory:read", key[0]):
                continue
            kept, _ = self.memory.list_memories(p, project=key[0], path=key[1], limit=MEMORIES_AT_PATH)
            for m in kept:  # a memory's path is kept composed; a note's as its file is named (paths.composed)
                if m.path == composed(key[1]):
                    found.memories.setdefault(m.ref, (f"kept at {location}'s path", distance, m.title, m.content))

    def _from_memory(self, p: Principal, ref: str, readable: list[str], found: _Found) -> None:
        m = self.memory.get(p, ref)  # memory:read, and Not found for a memory p may not see
        found.memories[m.ref] = ("the memory asked for", 0, m.title, m.content)
        if m.project in readable and m.path and (on_disk := indexed_spelling(self.store.documents, m.project,
                                                                                m.path)) is not None:
            found.add_document((m.project, on_disk), "the memory's path", 1)  # the note as its file is named
        documents = self.store.documents
        resolver = Resolver(lambda project: documents.ids(project) if project in readable else {})
        source = (m.project, posixpath.join(m.path, "memory.md"))  # links read as from a note at the memory's path
        for link in parse_links(*source, m.content):
            target = resolver.locate(link.kind, link.target, source)
            if target is not None:
                found.add_document(target, f"named by the memory (line {link.line})", 1)
        for tie in self.store.memory_documents.ties([m.ref]).get(m.ref, []):  # remember's about, paths it names
            if tie.project in readable and documents.meta(tie.project, tie.path) is not None:
                found.add_document((tie.project, tie.path),
                                   "the memory is about it" if tie.how == "about" else "named by the memory", 1)

    def _from_query(self, p: Principal, query: str, found: _Found) -> None:
        for key, why in self._best_matches(p, query):
            found.add_document(key, why, 0)
        if self.authorization.allowed(p, "memory:read"):
            for r in self.memory.recall(p, query, limit=QUERY_SEEDS).results:
                found.memories[r.memory.ref] = ("a memory matching the query", 0, r.memory.title, r.memory.content)

    def _best_matches(self, p: Principal, query: str) -> list[tuple[DocKey, str]]:
        """The QUERY_SEEDS documents that match ``query`` best, each with why: the whole query as searchKnowledge
        finds it, or its words (services.memory_rank's tolerant words, as passages.looked_up keeps them), ranked
        by how many of the words a document holds, a word in its file name, and how many of its lines hold one."""
        words = [w for w in tolerant_query_terms(query) if looked_up(w)] or [query]
        lines: dict[DocKey, set[int]] = {}
        held: dict[DocKey, set[str]] = {}
        for word in dict.fromkeys([query, *words]):
            try:
                found = self.knowledge.search(p, word, all_lines=True, limit=QUERY_LINES_PER_WORD)
            except InvalidArgument:  # too short for the engine, say: the other words still count
                continue
            for m in found.matches:
                lines.setdefault((m.project, m.path), set()).add(m.line)
                held.setdefault((m.project, m.path), set()).add(word)

        def rank(key: DocKey) -> tuple[int, int, int, int, DocKey]:
            name = fold(posixpath.basename(key[1]))
            return (-(query in held[key]), -len(held[key] - {query}), -any(fold(w) in name for w in words),
                    -len(lines[key]), key)

        best = sorted(held, key=rank)[:QUERY_SEEDS]
        return [(key, f"matches the query (line {min(lines[key])}"
                       + (f" and {len(lines[key]) - 1} more)" if len(lines[key]) > 1 else ")")) for key in best]

    def _packed(self, start: str, depth: int, max_tokens: int, found: _Found) -> LinkContext:
        items: list[tuple[int, int, PackItem, str]] = []
        for order, (key, reach) in enumerate(found.documents.items()):
            if reach.distance > depth:  # a memory's documents, one hop from it, when depth is 0
                continue
            doc = self.store.documents.get(*key)
            if doc is not None:
                location, why, distance = f"{key[0]}/{key[1]}", reach.why, reach.distance
                items.append((distance, order, document_item(location, doc.meta.title, why, doc.text,
                                                             1 / (1 + distance)), why))
        for order, (ref, (why, distance, title, text)) in enumerate(found.memories.items()):
            items.append((distance, order, PackItem("memory", ref, title, why, text, 1 / (1 + distance)), why))
        items.sort(key=lambda item: (item[0], item[1]))
        tried, costs, untried = _worth_trying([item for _, _, item, _ in items], max_tokens)
        packed: ContextPack = pack(start, tried, max_tokens, costs)
        why_of = {item.ref: (why, distance) for distance, _, item, why in items}
        return LinkContext(start, depth, max_tokens, packed.text, packed.tokens_used,
                           [ContextItem(i.kind, i.ref, i.title, *why_of[i.ref], i.tokens, i.complete)
                            for i in packed.items], [*packed.left_out, *untried], found.truncated)


def _worth_trying(items: list[PackItem], max_tokens: int) -> tuple[list[PackItem], list[int], list[LeftOut]]:
    """The items the packer is given: the nearest ones until their whole cost reaches TRY_TOKENS_FACTOR times the
    budget (room for the packer to end one early and fit smaller ones after). The rest are reported left out
    without being counted (their tokens estimated as CHARS_PER_TOKEN characters each): counting, and ending an
    item early (a dozen counts of it), spent most of a call on thirty documents of which four could go in. The
    counts of the items tried are handed to the packer with them."""
    tried: list[PackItem] = []
    costs: list[int] = []
    untried: list[LeftOut] = []
    spent = 0
    for item in items:
        if spent >= TRY_TOKENS_FACTOR * max_tokens:
            untried.append(LeftOut(item.kind, item.ref, item.title, -(-len(render(item, item.text)) // CHARS_PER_TOKEN),
                                   "not tried: nearer items filled the budget (tokens estimated)"))
            continue
        tried.append(item)
        costs.append(count_tokens(render(item, item.text)))
        spent += costs[-1]
    return tried, costs, untried
