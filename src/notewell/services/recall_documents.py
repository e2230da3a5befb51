"""The documents recall_context packs with ``include_documents`` (docs/memory.md, docs/links.md).

First the best passages of the documents the caller may read (services/passages.py). Then the same link walk
as buildContext's (services/link_walk.py), one hop: its starts are the passages' documents and the documents
the best memories are tied to (memory_documents: ``about``, or named in the text), and what it reaches is
packed as whole documents (up to their first link_walk.DOCUMENT_CHARS characters: a longer one is not
complete, and left_out says where its rest is read), each labelled with why it is
there ("linked from <path> line 3", "links to <path> at line 12"). The walk reads only the projects the
caller may read, so a document hidden from the caller is never reached or named: the answer is the one the
caller would get if it did not exist. Everything goes through the one packer, so the budget holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from notewell.records.documents import DocKey
from notewell.search.engine import SearchEngine
from notewell.services.context_pack import PackItem
from notewell.services.link_walk import Reached, document_item, walk
from notewell.services.links import LinkService
from notewell.services.passages import document_passages
from notewell.store.base import Store

MEMORY_STARTS: Final = 5
"""The documents of at most this many of the best memories start the walk ..."""
DOCUMENTS_PER_MEMORY: Final = 2
"""... at most this many of each (in path order)."""
LINKED_MAX: Final = 8
"""At most this many whole documents are added: the walk's, beyond the passages."""
HOP_WEIGHT: Final = 0.5
"""A document reached ranks at this share of the relevance of what brought it."""
LABEL_DOCUMENTS: Final = 3
"""A memory's label names at most this many of its documents (its item in the answer names them all)."""


@dataclass(frozen=True)
class RecalledMemory:
    """What the walk needs of a memory recall found: its ref, relevance and the documents it is tied to."""

    ref: str
    relevance: float
    documents: tuple[str, ...]  # vault paths the caller may read


def memory_label(location: str, memory_type: str, created: str, documents: Sequence[str]) -> str:
    """A memory's label in a pack: where it is kept, its type and day, and the documents it is tied to."""
    label = f"{location} · {memory_type} · {created[:10]}"
    if documents:
        more = len(documents) - LABEL_DOCUMENTS
        label += f" · about {', '.join(documents[:LABEL_DOCUMENTS])}" + (f" (+{more} more)" if more > 0 else "")
    return label


def _key(location: str) -> DocKey:
    project, _, path = location.partition("/")
    return project, path


def recall_documents(engine: SearchEngine, store: Store, links: LinkService, readable: list[str],
                     terms: Sequence[str], memories: Sequence[RecalledMemory]) -> list[PackItem]:
    """The passages for ``terms``, then the documents the walk adds (best first: what brought them first)."""
    passages = sorted(document_passages(engine, store.documents, readable, terms), key=lambda i: -i.relevance)
    reached = Reached()
    relevance: dict[DocKey, float] = {}
    for passage in passages:
        key = _key(passage.ref.split("#", 1)[0])
        if key not in reached.documents:
            reached.add_document(key, "holds a passage", 0)
            relevance[key] = passage.relevance
    for memory in memories[:MEMORY_STARTS]:
        for location in memory.documents[:DOCUMENTS_PER_MEMORY]:
            key = _key(location)
            if key not in reached.documents:
                reached.add_document(key, f"tied to memory {memory.ref}", 1)
                relevance[key] = HOP_WEIGHT * memory.relevance
    walk(links, readable, reached, 1)
    added: list[PackItem] = []
    for key, reach in reached.documents.items():
        if len(added) >= LINKED_MAX:
            break
        if reach.distance == 0:
            continue
        rank = relevance.get(key)  # a memory's document; else one the walk reached, from one of its starts
        if rank is None:
            rank = HOP_WEIGHT * relevance[reach.via] if reach.via is not None else 0.0
        doc = store.documents.get(*key)
        if doc is not None:
            added.append(document_item(f"{key[0]}/{key[1]}", doc.meta.title, reach.why, doc.text, rank))
    return [*passages, *added]
