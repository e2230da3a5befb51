"""A document's links and backlinks within what a Principal may read (docs/links.md).

Links never cross a permission boundary: the service asks ``Authorization`` which projects the caller may
read, and the store answers from those alone, so a link into a project or home the caller may not read is
reported exactly as a link to nothing (unresolved, its target as written), a mention of a document the
caller may not read is not listed (as a mention of nothing is not), and a backlink from a document the
caller may not read is neither listed nor counted. The document asked about must itself be readable, else
the answer is readDoc's ``Not found``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from notewell.access.principal import Principal
from notewell.errors import InvalidArgument, NotFound
from notewell.paths import indexed_spelling, normalize_path, split_vault_path
from notewell.records.documents import DocKey
from notewell.records.links import LinkRecord
from notewell.services.knowledge import READ
from notewell.store.base import Store
from notewell.vault.link_resolution import Resolver
from notewell.vault.link_rewrite import Move
from notewell.vault.links import OUTSIDE_PROJECT
from notewell.vault.note_links import MAX_LINKS_PER_DOCUMENT, snippet
from notewell.vault.scan import disk_path

if TYPE_CHECKING:
    from notewell.access.authorization import Authorization

LINKS_LIMIT_DEFAULT: Final = 50
LINKS_LIMIT_MAX: Final = 200
"""Links per list and page."""
LINKS_OFFSET_MAX: Final = 1_000_000

Direction = Literal["both", "outgoing", "backlinks"]
DIRECTIONS: Final[tuple[Direction, ...]] = ("both", "outgoing", "backlinks")


@dataclass(frozen=True)
class Link:
    """One link as an answer gives it: where it is written (``source``, ``line``, ``snippet``) and the
    document it names (``path``, a vault path; None when it names none the caller may read)."""

    source: str  # vault path of the linking document
    line: int
    kind: str
    target: str  # as written: a wikilink's name, a markdown link's vault path, a mention's text
    anchor: str
    label: str
    snippet: str
    path: str | None


@dataclass(frozen=True)
class DocLinks:
    """A page of a document's links (``outgoing``, in reading order) and backlinks (by source), with how many
    of each there are in all that the caller may see. ``outgoing_cut``: the document holds 1,000 links or more
    (MAX_LINKS_PER_DOCUMENT) and the index keeps its first 1,000 only, so a link past them is in neither list
    nor total (nor any other document's backlinks): only the document's text has it."""

    path: str  # the document, project first
    outgoing: list[Link]
    outgoing_total: int
    backlinks: list[Link]
    backlinks_total: int
    offset: int
    limit: int
    direction: str = "both"  # the lists paged: both totals are always counted
    outgoing_cut: bool = False  # the document reached MAX_LINKS_PER_DOCUMENT: links past it are not indexed

    @property
    def has_more(self) -> bool:
        paged = [*([self.outgoing_total] if self.direction != "backlinks" else []),
                 *([self.backlinks_total] if self.direction != "outgoing" else [])]
        return self.offset + self.limit < max(paged)


def _link(record: LinkRecord) -> Link:
    path = f"{record.resolved[0]}/{record.resolved[1]}" if record.resolved else None
    near = record.label or posixpath.basename(record.target)  # what the line most likely holds of the link
    return Link(f"{record.source[0]}/{record.source[1]}", record.line, record.kind, record.target, record.anchor,
                record.label, snippet(record.line_text, near), path)


class LinkService:
    def __init__(self, store: Store, authorization: Authorization) -> None:
        self.store = store
        self.authorization = authorization

    def readable(self, p: Principal) -> list[str]:
        """The projects whose documents p may read (what every answer here is confined to)."""
        return [pr.id for pr in self.authorization.projects(p, READ)]

    def linking(self, key: DocKey, names: list[str], readable: list[str], limit: int) -> list[DocKey]:
        """The documents of ``readable`` projects that link to the document, or by name to a file named one of
        ``names`` (as a link reads a file name: name_key), by path, at most ``limit``."""
        return self.store.links.linking(key, names, readable, limit)

    def crowded(self, readable: list[str], limit: int) -> list[DocKey]:
        """The documents of ``readable`` projects with more links than the index keeps (MAX_LINKS_PER_DOCUMENT,
        or exactly as many), by path, at most ``limit``: a link past the bound is in no stored row, so only
        reading such a document finds it."""
        return self.store.links.crowded(readable, MAX_LINKS_PER_DOCUMENT, limit)

    def passed_over_symlinks(self, readable: list[str]) -> list[str]:
        """The vault paths of the symbolic links in ``readable`` projects that the index passed over as leading
        outside their project (vault/links.py): what names a note of another project from there."""
        return [disk_path(s.project, s.path) for s in self.store.documents.skipped(OUTSIDE_PROJECT)
                if s.project in readable]

    def move(self, moved_from: DocKey, moved_to: DocKey, readable: list[str],
             attachment: Callable[[str], str | None]) -> Move:
        """The documents of ``readable`` projects as they are now, after ``moved_from`` went to ``moved_to``, and
        as they were before (what vault/link_rewrite.py rewrites links between); another project is empty, as a
        link into it is answered. ``attachment``: the spelling on disk of a vault path naming a file that is no
        document (Move.attachment)."""
        documents = self.store.documents

        def now(project: str) -> dict[str, int]:
            if project not in readable:
                return {}
            return documents.ids(project)

        def then(project: str) -> dict[str, int]:
            paths = now(project)
            if project == moved_to[0] and moved_to[1] in paths:
                paths[moved_from[1]] = paths.pop(moved_to[1])
            return paths

        return Move(moved_from, moved_to, before=Resolver(then), after=Resolver(now), attachment=attachment)

    def document(self, p: Principal, path: str, readable: list[str]) -> DocKey:
        """The readable document at ``path`` (a vault path), else readDoc's Not found naming it."""
        project, rel = split_vault_path(normalize_path(path))
        if rel and project in readable:
            spelled = indexed_spelling(self.store.documents, project, rel)
            if spelled is not None:
                return project, spelled
        raise NotFound(f"Not found: {path}")

    def outgoing(self, key: DocKey, readable: list[str], limit: int, offset: int = 0) -> list[Link]:
        return [_link(r) for r in self.store.links.outgoing(key, readable, limit, offset)]

    def backlinks(self, key: DocKey, readable: list[str], limit: int, offset: int = 0) -> list[Link]:
        return [_link(r) for r in self.store.links.backlinks(key, readable, limit, offset)]

    def links(self, p: Principal, path: str, *, direction: str = "both", limit: int = LINKS_LIMIT_DEFAULT,
              offset: int = 0) -> DocLinks:
        """The document's outgoing links (reading order) and backlinks (by source), each a page of ``limit``
        from ``offset``, with how many there are in all that p may see, and whether the document holds as many
        links as the index keeps (``outgoing_cut``: a link past them is in no list, only in its text)."""
        self.authorization.authorize(p, READ)
        if direction not in DIRECTIONS:
            raise InvalidArgument("direction", f"must be one of {', '.join(DIRECTIONS)}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LINKS_LIMIT_MAX:
            raise InvalidArgument("limit", f"must be from 1 to {LINKS_LIMIT_MAX}")
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= LINKS_OFFSET_MAX:
            raise InvalidArgument("offset", f"must be from 0 to {LINKS_OFFSET_MAX}")
        readable = self.readable(p)
        key = self.document(p, path, readable)
        links = self.store.links
        outgoing = self.outgoing(key, readable, limit, offset) if direction != "backlinks" else []
        backlinks = self.backlinks(key, readable, limit, offset) if direction != "outgoing" else []
        return DocLinks(f"{key[0]}/{key[1]}", outgoing, links.count_outgoing(key, readable), backlinks,
                        links.count_backlinks(key, readable), offset, limit, direction,
                        links.is_crowded(key, MAX_LINKS_PER_DOCUMENT))
