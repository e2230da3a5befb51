"""The records of the links between documents: what the indexer writes and what a store returns.

Plain frozen values (the store builds them; the indexer and the services pass them around). A link's
``kind`` is one of vault/note_links.KINDS; its ``target`` is what the document wrote (a wikilink's name, a
markdown link's vault path, a mention's text), kept so the link can be resolved again when documents come,
go or move.
"""

from __future__ import annotations

from dataclasses import dataclass

from notewell.records.documents import DocKey


@dataclass(frozen=True)
class LinkInput:
    """One link of a document, as the indexer writes it, with the document it resolved to (None: none)."""

    kind: str
    line: int
    target: str
    anchor: str
    label: str
    name_key: str  # what re-resolution finds the link by: its target's file name, folded (note_links.name_key)
    target_id: int | None


@dataclass(frozen=True)
class LinkToResolve:
    """A stored link that a document's arrival, departure or move may resolve differently."""

    source_id: int
    seq: int
    source: DocKey
    kind: str
    target: str
    target_id: int | None


LINE_TEXT_MAX = 2000


@dataclass(frozen=True)
class LinkRecord:
    """A stored link as a read returns it: where it is written and what it resolved to."""

    source: DocKey
    line: int
    kind: str
    target: str
    anchor: str
    label: str
    line_text: str  # the line the link is on, as the document has it now (at most LINE_TEXT_MAX characters)
    resolved: DocKey | None  # the target document; None when the link names nothing (or nothing unique)
