"""The link walk: from a few documents, the documents their links reach, both ways, hop by hop (docs/links.md).

buildContext (services/link_context.py), recall_context's ``include_documents`` (services/recall_documents.py)
and brain_ask_oracle (services/brain_oracle.py) walk with it. Every step goes through services.links with the
projects the caller may read, so a document the caller may not read is never reached, nor named in a reason: a
link into it is a link to nothing, a backlink from it is not there. The walk visits at most MAX_DOCUMENTS
documents and takes at most LINKS_PER_DOCUMENT links each way from each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from notewell.records.documents import DocKey
from notewell.services.context_pack import SHORTENED_MARK, PackItem
from notewell.services.line_endings import position
from notewell.services.links import LinkService
from notewell.services.text_cut import cut_within

MAX_DOCUMENTS: Final = 30
"""A walk reaches at most this many documents (its start included), however many hops."""
LINKS_PER_DOCUMENT: Final = 50
"""Each document visited contributes at most this many outgoing links and this many backlinks."""
DOCUMENT_CHARS: Final = 4_000
"""A document reached enters a pack as at most its first this many characters (services/text_cut.py: cut at a
line break, else a sentence end, else a word boundary, never inside a character)."""


@dataclass(frozen=True)
class Reach:
    why: str  # "linked from <path> line 33", "links to <path> at line 12", or the start's own reason
    distance: int  # hops from the start (0: a start)
    via: DocKey | None = None  # the document it was reached from (None: a start)
    line: int = 0  # the line of the link that reached it (in ``via``, or in it for a backlink)
    backlink: bool = False  # True: it links to ``via``; False: ``via`` links to it


@dataclass
class Reached:
    """The documents a walk reached, in the order it reached them, each with why and how far."""

    documents: dict[DocKey, Reach] = field(default_factory=dict)
    truncated: bool = False  # the walk stopped at MAX_DOCUMENTS

    def add_document(self, key: DocKey, why: str, distance: int) -> None:
        """A start of the walk (or a document it reached, with ``reach``)."""
        self.add(key, Reach(why, distance))

    def add(self, key: DocKey, reach: Reach) -> None:
        if key in self.documents:
            return
        if len(self.documents) >= MAX_DOCUMENTS:
            self.truncated = True
            return
        self.documents[key] = reach


def walk(links: LinkService, readable: list[str], reached: Reached, hops: int) -> None:
    """Follow links from every document in ``reached`` (its starts) for ``hops`` hops, outgoing links before
    backlinks, each document's in their order. A document reached is one hop further than the one it was
    reached from (a start may itself be one hop from what the caller asked for: a memory's documents), and is
    kept at the distance it was first reached."""
    frontier = list(reached.documents)
    for _ in range(hops):
        before = set(reached.documents)
        found: list[DocKey] = []
        for key in frontier:
            came = reached.documents[key]
            source, distance = f"{key[0]}/{key[1]}", came.distance + 1
            # a document that links where the one before linked too (the same client, the same policy) says so
            also = (f", as {came.via[0]}/{came.via[1]} does" if came.via is not None and not came.backlink else "")
            for link in links.outgoing(key, readable, LINKS_PER_DOCUMENT):
                if link.path is not None:
                    found.append(_reach(reached, link.path, Reach(f"linked from {source} line {link.line}", distance,
                                                                  key, link.line)))
            for link in links.backlinks(key, readable, LINKS_PER_DOCUMENT):
                found.append(_reach(reached, link.source, Reach(f"links to {source} at line {link.line}{also}",
                                                                distance, key, link.line, backlink=True)))
        frontier = [k for k in dict.fromkeys(found) if k in reached.documents and k not in before]
        if not frontier:
            return


def _reach(reached: Reached, vault_path: str, reach: Reach) -> DocKey:
    project, _, rel = vault_path.partition("/")
    reached.add((project, rel), reach)
    return project, rel


def document_item(location: str, title: str, why: str, text: str, relevance: float) -> PackItem:
    """A document as it enters a pack: whole when it is at most DOCUMENT_CHARS characters; else its beginning
    (services/text_cut.py), marked as shortened, with the line and column its rest starts at (where readDoc, or
    GET .../documents/{path}, reads on), so that the pack says it is not complete and how to read the rest."""
    cut = cut_within(text, DOCUMENT_CHARS)
    if cut.rest >= len(text):
        return PackItem("document", location, title, why, text, relevance)
    line, column = position(text, cut.rest)
    at = f"offset {line}" + (f", column {column}" if column > 1 else "")
    return PackItem("document", location, title, why, text[: cut.kept] + SHORTENED_MARK, relevance,
                    cut=(f"only its first {cut.kept:,} of {len(text):,} characters are packed (a document enters "
                         f"at most {DOCUMENT_CHARS:,}): its rest is read from {at}"))
