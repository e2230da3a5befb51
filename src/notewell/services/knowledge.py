"""Listing, reading and searching the vault within what a Principal may see.

Every method asks notewell.access.authorization (action ``knowledge:read``) first, so a token without
the knowledge:read scope gets nothing here, and again for each project it touches; a project, document
or brain the caller may not see gives exactly the same ``Not found: <what they named>`` as one that does
not exist. Search goes through the one search engine. Nothing here knows about MCP: the tools map these
results onto each product's shapes.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from notewell import limits
from notewell.access.policy import Action
from notewell.access.principal import Principal
from notewell.answer_bound import json_bytes, text_within
from notewell.errors import InvalidArgument, NotFound, not_unicode
from notewell.paths import (
    PATH_MAX_CHARS,
    indexed_prefix,
    indexed_spelling,
    indexed_start,
    normalize_path,
    split_vault_path,
)
from notewell.records.documents import BrainHead, BrainRecord, DocKey, DocumentMeta, Scope
from notewell.search.engine import CaseMode as CaseMode  # what a door names of a search: re-exported here, so
from notewell.search.engine import Match, SearchEngine, SearchRequest  # no door imports notewell.search
from notewell.search.engine import SearchResult as SearchResult
from notewell.services.line_endings import shown_lines
from notewell.services.location_filter import location_filter
from notewell.services.note_diff import VERSION_CHARS
from notewell.store.base import Store
from notewell.vault.parse import BRAIN_FILE
from notewell.vault.scan import ROOT_PROJECT

if TYPE_CHECKING:
    from notewell.access.authorization import Authorization, Seen
    from notewell.records.identity import Project


# --- results ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProjectInfo:
    id: str
    name: str
    description: str
    kind: str
    documents: int


@dataclass(frozen=True)
class DocInfo:
    path: str  # project-relative
    title: str
    summary: str
    size: int
    lines: int


@dataclass(frozen=True)
class DocList:
    project: str
    path: str
    documents: list[DocInfo]
    truncated: bool  # more documents follow this page
    offset: int = 0  # how many documents came before this page (0 on a page asked for by ``after``)
    next_after: str | None = None  # the path the next page starts after (its ``after``), None on the last page


@dataclass(frozen=True)
class DocPart:
    path: str  # vault path, project first
    title: str
    text: str
    first_line: int
    last_line: int  # first_line - 1 when the part is empty
    total_lines: int
    next_offset: int | None  # the offset of the next part, or None at the end
    shortened: bool  # a single line longer than the character budget was cut: its rest is the next part
    version: str = ""  # the version a write's expected_version names (services/note_diff.py)
    decoded: str = ""  # why the text is not exactly the file's bytes ("not valid UTF-8: ..."), or ""
    first_column: int = 1  # the character of first_line the text starts at, counting from 1
    next_column: int | None = None  # where the next part starts in line next_offset when it goes on a cut line


@dataclass(frozen=True)
class Hit:
    path: str  # vault path, project first
    line: int
    snippet: str
    version: str  # the document's version when answered ("" if it was deleted meanwhile), as readDoc's


@dataclass(frozen=True)
class HitList:
    query: str
    hits: list[Hit]
    truncated: bool
    complete: bool = True  # false when the search ran out of time (SearchResult.complete)
    scanned: bool = False  # no literal text narrowed it: every document in scope was read


@dataclass(frozen=True)
class DocumentHit:
    """A document that matched, by its location (project first) and first matching line."""

    project: str
    path: str  # project-relative
    title: str
    line: int
    snippet: str

    @property
    def location(self) -> str:
        return f"{self.project}/{self.path}"


@dataclass(frozen=True)
class DocumentHits:
    query: str
    hits: list[DocumentHit]
    truncated: bool  # more documents match than were returned
    complete: bool = True  # false when the search ran out of time (SearchResult.complete)
    scanned: bool = False  # no literal text narrowed it: every document in scope was read


@dataclass(frozen=True)
class BrainInfo:
    id: str
    project: str
    title: str
    summary: str
    parent: str | None  # brain id


@dataclass(frozen=True)
class BrainDocument:
    path: str  # vault path
    title: str
    listed: bool  # named in brain.md


@dataclass(frozen=True)
class BrainPage:
    brain: BrainInfo
    contents: str  # the text of brain.md
    documents: list[BrainDocument]
    sub_brains: list[BrainInfo]
    parent: BrainInfo | None
    more_documents: bool = False  # documents past the first limits.BRAIN_DOCUMENTS_MAX were left out


@dataclass(frozen=True)
class BrainHit:
    brain: str
    path: str
    document: str
    line: int
    snippet: str


@dataclass(frozen=True)
class BrainHitList:
    brain: str
    query: str
    searched: list[str]
    hits: list[BrainHit]
    truncated: bool
    complete: bool = True
    scanned: bool = False


@dataclass(frozen=True)
class NoteMatch:
    repo: str
    path: str  # vault path
    line: int
    text: str
    shortened: bool
    version: str  # as Hit's


@dataclass(frozen=True)
class NotePage:
    query: str
    matches: list[NoteMatch]
    offset: int
    has_more: bool
    repo: str | None
    complete: bool = True
    scanned: bool = False


READ: Action = "knowledge:read"


# --- the service ------------------------------------------------------------------------------------


def _check_after(after: str | None, offset: int, folder: str, what: str) -> None:
    """A listing's cursor: the last item of a page this listing gave (a document's path within ``folder``, or a
    project id), never with an offset, which would count from a place the cursor no longer names."""
    if after is None:
        return
    fix = (f"pass the nextAfter of the previous page as it is (the last {what} listed), or leave after out for "
           "the first page")
    if offset:
        raise InvalidArgument("after", f"takes no offset: {fix}; or page by offset alone")
    if not after:
        raise InvalidArgument("after", f"is empty: {fix}")
    if len(after) > PATH_MAX_CHARS or "\x00" in after:
        raise InvalidArgument("after", f"is not a {what} (at most {PATH_MAX_CHARS} characters, no NUL): {fix}")
    if folder and not (after == folder or after.startswith(folder + "/")):
        raise InvalidArgument("after", f"must be a {what} inside the folder listed ({folder}): {fix}")


def _check_query(query: str) -> None:
    if len(query) < limits.QUERY_MIN_CHARS:
        raise InvalidArgument("query", f"must have at least {limits.QUERY_MIN_CHARS} characters")


class KnowledgeService:
    def __init__(self, store: Store, authorization: Authorization, engine: SearchEngine) -> None:
        self.store = store
        self.authorization = authorization
        self.engine = engine

    # projects and documents ------------------------------------------------------------------------

    def _project(self, p: Principal, project: str) -> Project:
        return self.authorization.authorize(p, READ, project)

    def _may_read(self, p: Principal, project: str) -> bool:
        return self.authorization.allowed(p, READ, project)

    def projects(self, p: Principal) -> list[Project]:
        """The projects p may read (what a door lists, or offers to choose from)."""
        self.authorization.authorize(p, READ)
        return self.authorization.projects(p, READ)

    def projects_with_counts(self, p: Principal, *, offset: int = 0, after: str | None = None,
                             limit: int | None = None) -> list[ProjectInfo]:
        """The projects p may read with how many documents each holds (the store keeps the counts), by id, from
        ``offset`` on; or, with ``after`` (a cursor: the last id of the previous page), those whose id sorts after
        it, so that a project added or removed between two pages moves no other across the pages' edge. With
        ``limit``, that many at most: the counts are read for them alone."""
        self.authorization.authorize(p, READ)
        if not 0 <= offset <= limits.NOTES_OFFSET_MAX:
            raise InvalidArgument("offset", f"must be from 0 to {limits.NOTES_OFFSET_MAX}")
        if limit is not None and limit < 1:
            raise InvalidArgument("limit", f"is {limit}; give 1 or more")
        _check_after(after, offset, "", "project id")
        visible = [pr for pr in self.authorization.projects(p, READ) if after is None or pr.id > after]
        projects = visible[offset:None if limit is None else offset + limit]
        counts = self.store.documents.project_counts([pr.id for pr in projects])
        return [ProjectInfo(pr.id, pr.name, pr.description, pr.kind, counts.get(pr.id, 0)) for pr in projects]

    def list_docs(self, p: Principal, project: str, path: str = "", *, offset: int = 0, after: str | None = None,
                  limit: int = limits.LIST_DOCS_MAX) -> DocList:
        """A page of the project's documents (under the folder ``path``) by path: ``limit`` after ``offset``, or
        after the path ``after`` (a keyset cursor, the previous page's ``next_after``). An offset counts the
        documents before it as they are at each read, so a rename between two reads moves the others across the
        pages' edge (one listed twice or not at all); a cursor names where the last page ended, so every document
        neither renamed nor deleted meanwhile is listed exactly once, and each read is one range of the (project,
        path) index. The folder typed in either Unicode form (or a mix of its names' forms) is the one the index
        holds, as readDoc finds a note (paths.indexed_prefix), and the answer names it so."""
        pr = self._project(p, project)
        if not 1 <= limit <= limits.LIST_DOCS_MAX:
            raise InvalidArgument("limit", f"must be from 1 to {limits.LIST_DOCS_MAX}")
        if not 0 <= offset <= limits.NOTES_OFFSET_MAX:
            raise InvalidArgument("offset", f"must be from 0 to {limits.NOTES_OFFSET_MAX}")
        prefix = normalize_path(path)
        if prefix:
            prefix = indexed_prefix(self.store.documents, pr.id, prefix) or prefix
        _check_after(after, offset, prefix, "document's path")
        metas = self.store.documents.metas(pr.id, prefix, limit=limit + 1, offset=offset, after=after)
        docs = [_doc_info(m) for m in metas[:limit]]
        more = len(metas) > limit
        return DocList(pr.id, prefix, docs, truncated=more, offset=offset,
                       next_after=docs[-1].path if more else None)

    def read_doc(self, p: Principal, path: str, offset: int = 1,
                 limit: int = limits.READ_DOC_LINES_DEFAULT, column: int = 1) -> DocPart:
        """Lines ``offset`` on, whole, within READ_DOC_MAX_BYTES as JSON. A line longer than that alone comes in
        pieces, one a part, each naming the ``column`` (character, from 1) its rest starts at, so that every
        character of every line can be read."""
        self.authorization.authorize(p, READ)
        if offset < 1:
            raise InvalidArgument("offset", "must be 1 or more (the first line to read, counting from 1)")
        if column < 1:
            raise InvalidArgument("column", "must be 1 or more (the character of the line to start at, from 1)")
        if not 1 <= limit <= limits.READ_DOC_LINES_MAX:
            raise InvalidArgument("limit", f"must be between 1 and {limits.READ_DOC_LINES_MAX} lines")
        project, rel = split_vault_path(normalize_path(path))
        doc = None
        if rel and self._may_read(p, project):
            spelled = indexed_spelling(self.store.documents, project, rel)
            doc = self.store.documents.get(project, spelled) if spelled is not None else None
        if doc is None:
            raise NotFound(f"Not found: {path}")
        vault_path = f"{project}/{doc.meta.path}"
        lines = shown_lines(doc.text)
        total = len(lines)
        if offset > max(total, 1):
            raise InvalidArgument("offset", f"is past the end: {vault_path} has {total} lines")
        start = offset - 1
        chosen = lines[start : start + limit]
        if column > 1:
            first = chosen[0] if chosen else ""
            if column > len(first):
                raise InvalidArgument("column", f"is past the end of line {offset} of {vault_path}: it has "
                                                f"{len(first)} characters")
            chosen[0] = first[column - 1:]
        taken: list[str] = []
        size = 0  # the text as JSON: its lines' lengths as JSON (one's quotes stand for an escaped newline)
        next_column = None
        for line in chosen:
            cost = json_bytes(line)
            if taken and size + cost > limits.READ_DOC_MAX_BYTES:
                break
            if cost > limits.READ_DOC_MAX_BYTES:  # so the part's first line: alone, its rest the next part
                piece = text_within(line, limits.READ_DOC_MAX_BYTES)
                taken.append(piece)
                next_column = column + len(piece)
                break
            taken.append(line)
            size += cost
        last = start + len(taken)
        if next_column is not None:
            next_offset: int | None = last
        else:
            next_offset = last + 1 if last < total else None
        return DocPart(vault_path, doc.meta.title, "\n".join(taken), offset, last, total,
                       next_offset=next_offset, shortened=next_column is not None,
                       version=doc.meta.sha256[:VERSION_CHARS], decoded=doc.meta.note, first_column=column,
                       next_column=next_column)

    def search_knowledge(self, p: Principal, query: str, project: str | None = None) -> HitList:
        self.authorization.authorize(p, READ)
        _check_query(query)
        projects = [self._project(p, project).id] if project else [pr.id for pr in self.authorization.projects(p, READ)]
        result = self._first_per_file(query, Scope(projects=projects), limits.SEARCH_MAX_RESULTS)
        versions = self._versions(result)
        hits = [Hit(m.vault_path, m.line, m.text, versions.get((m.project, m.path), "")) for m in result.matches]
        return HitList(query, hits, truncated=result.has_more, complete=result.complete, scanned=result.scanned)

    def find_documents(self, p: Principal, query: str, *, path_filter: str | None = None,
                       limit: int = limits.SEARCH_MAX_RESULTS) -> DocumentHits:
        """searchKnowledge's search (case-insensitive substring, the first matching line of each document, the
        same permissions) over the documents whose location starts with ``path_filter`` (XMemo's logical path
        prefix: services.location_filter), at most ``limit`` of them; 0 checks everything and returns none."""
        self.authorization.authorize(p, READ)
        _check_query(query)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= limits.SEARCH_MAX_RESULTS:
            raise InvalidArgument("limit", f"must be from 0 to {limits.SEARCH_MAX_RESULTS}")
        where = location_filter(path_filter, [pr.id for pr in self.authorization.projects(p, READ)])
        prefix = where.prefix
        if prefix:  # typed in the other Unicode form, or a mix of its names' forms: what the file's spelling finds
            documents, project = self.store.documents, where.projects[0]
            prefix = (indexed_start(documents, project, prefix) if where.partial
                      else indexed_prefix(documents, project, prefix)) or prefix
        scope = Scope(projects=where.projects, prefix=prefix, prefix_partial=where.partial)
        result = self._first_per_file(query, scope, max(limit, 1))
        shown = result.matches[:limit]
        titles = self.store.documents.titles([(m.project, m.path) for m in shown])  # one statement for them all
        hits = [DocumentHit(m.project, m.path, titles.get((m.project, m.path), posixpath.basename(m.path)), m.line,
                            m.text) for m in shown]
        return DocumentHits(query, hits, truncated=result.has_more or len(result.matches) > limit,
                            complete=result.complete, scanned=result.scanned)

    def search(self, p: Principal, query: str, *, projects: Sequence[str] = (), path: str = "",
               file_types: Sequence[str] = (), regex: bool = False, case: CaseMode = "insensitive",
               all_lines: bool = False, limit: int = limits.SEARCH_MAX_RESULTS, offset: int = 0) -> SearchResult:
        """Every option of the engine (the command line's search), within what p may read: the ``projects``
        named (each one p may read; a hidden one is answered as a missing one), a vault-relative folder or
        file ``path`` inside them, and file types (``md`` or ``.md``)."""
        self.authorization.authorize(p, READ)
        readable = [pr.id for pr in self.authorization.projects(p, READ)]
        for name in projects:
            if name not in readable:
                raise InvalidArgument("project", f"no project {name} you may read; yours: {', '.join(readable)}")
        chosen = list(projects or readable)
        path_project, prefix = split_vault_path(normalize_path(path), "path")
        if path_project:
            if path_project not in readable:
                raise InvalidArgument("path", f"{path} is in no project you may read; yours: {', '.join(readable)}")
            if projects and path_project not in projects:
                raise InvalidArgument("path", f"{path} is not inside the project named ({', '.join(projects)})")
            chosen = [path_project]
            if prefix:  # typed in the other Unicode form, or a mix of its names' forms: the one readDoc finds
                prefix = indexed_prefix(self.store.documents, path_project, prefix) or prefix
        for file_type in file_types:
            if (why := not_unicode(file_type)) is not None:
                raise InvalidArgument("type", why)
        types = tuple(t if t.startswith(".") else f".{t}" for t in file_types)
        return self.engine.search(SearchRequest(query=query, scope=Scope(projects=chosen, prefix=prefix,
                                                                          file_types=types),
                                                regex=regex, case=case, all_lines=all_lines, limit=limit,
                                                offset=offset))

    def _versions(self, result: SearchResult) -> dict[DocKey, str]:
        """Each matched document's version, read after the search: one query for the page's documents."""
        sums = self.store.documents.checksums([(m.project, m.path) for m in result.matches])
        return {key: sha256[:VERSION_CHARS] for key, sha256 in sums.items()}

    def _first_per_file(self, query: str, scope: Scope, limit: int) -> SearchResult:
        return self.engine.search(SearchRequest(query=query, scope=scope, limit=limit))

    # brains ------------------------------------------------------------------------------------------

    def list_brains(self, p: Principal, project: str | None = None) -> list[BrainInfo]:
        """The brains of the projects p may read (or of the one named), by project then folder: their heads read
        in one statement (not the documents each brain.md lists), and whether p may read a project a parent is
        declared in answered from the projects p could see, read once (``Seen``). It read each project's brains
        whole, a statement a project, and asked the store again for each brain whose parent is in another
        project."""
        self.authorization.authorize(p, READ)
        seen = self.authorization.seen(p)
        projects = [self._project(p, project).id] if project else [pr.id for pr in seen.projects(READ)]
        heads = self.store.documents.brain_heads(projects)
        of_project: dict[str, dict[str, BrainHead]] = {}
        for head in heads:
            of_project.setdefault(head.project, {})[head.folder] = head
        return [self._info(b, seen, of_project[b.project]) for b in heads]

    def _parent_id(self, b: BrainHead, seen: Seen, brains: Mapping[str, BrainHead] | None = None) -> str | None:
        """The id of ``b``'s parent as p sees it (``seen``: the projects p could see). A parent in another project
        that p may not read is taken for what the indexer takes a parent that is not there: the nearest enclosing
        brain of b's own project (``brains``: b's project's, holding at least those over the folders enclosing
        b's; read in one statement when not given). So a hidden brain looks exactly like a missing one, and a
        declaration cannot be used to learn that a brain exists where p may not look."""
        if b.parent is None or b.parent_project in (None, b.project) or seen.allowed(READ, b.parent_project or ""):
            return b.parent
        if brains is None:
            brains = {h.folder: h for h in self.store.documents.brain_heads_at(b.project, _enclosing(b.folder))}
        for folder in _enclosing(b.folder):
            if folder in brains:
                return brains[folder].id
        return None

    def _info(self, b: BrainHead, seen: Seen, brains: Mapping[str, BrainHead] | None = None) -> BrainInfo:
        return BrainInfo(b.id, b.project, b.title, b.summary, self._parent_id(b, seen, brains))

    def _brain(self, seen: Seen, brain_id: str) -> BrainRecord:
        """The brain named, whole; NotFound naming ``brain_id`` if hidden or missing."""
        project, _, folder = brain_id.strip().strip("/").partition("/")
        if project and seen.allowed(READ, project):
            record = self.store.documents.brain(project, folder)
            if record is not None:
                return record
        raise NotFound(f"Not found: {brain_id}")

    def get_brain(self, p: Principal, brain_id: str) -> BrainPage:
        """A brain's page in a bounded number of statements, whatever the number of projects, brains and
        documents: the brain, its brain.md, which documents brain.md lists exist (one statement), the brains
        inside its folder (sub-brains, whose documents are not its own) and those stored with it as their parent
        (one statement each), its parent's head; whether p may read a project answered from ``Seen``. It read
        every brain of every project p may read, a statement a project, and each listed document alone."""
        self.authorization.authorize(p, READ)
        seen = self.authorization.seen(p)
        record = self._brain(seen, brain_id)
        docs = self.store.documents
        brain_md_path = posixpath.join(record.folder, BRAIN_FILE) if record.folder else BRAIN_FILE
        brain_md = docs.get(record.project, brain_md_path)
        below = docs.brain_heads_below(record.project, record.folder)
        listed = self._brain_documents(record, {b.folder for b in below}, brain_md_path)
        more = len(listed) > limits.BRAIN_DOCUMENTS_MAX
        del listed[limits.BRAIN_DOCUMENTS_MAX:]
        parent_id = self._parent_id(record, seen)
        parent = None
        if parent_id is not None:
            project, _, folder = parent_id.partition("/")
            parent = next(iter(docs.brain_heads_at(project, [folder])), None)
        return BrainPage(BrainInfo(record.id, record.project, record.title, record.summary, parent_id),
                         brain_md.text if brain_md else "", listed, self._children(record, below, seen),
                         self._info(parent, seen) if parent else None, more)

    def _children(self, record: BrainRecord, below: Sequence[BrainHead], seen: Seen) -> list[BrainInfo]:
        """The brains whose parent p sees as ``record`` (``below``: the brains inside its folder), by id: those
        stored with it as their parent in projects p may read, and those inside its folder whose declared parent
        p may not read and whose nearest enclosing brain it is."""
        inside: dict[str, BrainHead] = {b.folder: b for b in below}
        inside[record.folder] = record
        children = [b for b in self.store.documents.brain_heads_with_parent(record.id)
                    if b.id != record.id and seen.allowed(READ, b.project)]
        children += [b for b in below if b.parent != record.id and self._parent_id(b, seen, inside) == record.id]
        return sorted((BrainInfo(b.id, b.project, b.title, b.summary, record.id) for b in children),
                      key=lambda b: b.id)

    def _brain_documents(self, record: BrainRecord, sub_brains: set[str], brain_md_path: str) -> list[BrainDocument]:
        """The brain's documents, brain.md's first, up to one past limits.BRAIN_DOCUMENTS_MAX: those brain.md lists
        that exist found that many at a time in one statement (each was a statement), then as many more of its
        folder as are wanted in one statement, by path, which leaves out the folders of ``sub_brains`` (the brains
        inside it), brain.md and the documents listed already: it read the folder a thousand at a time and passed
        over the sub-brains' documents, every one of them read when they came first by path."""
        docs = self.store.documents
        wanted = limits.BRAIN_DOCUMENTS_MAX + 1
        listed: list[BrainDocument] = []
        named: dict[str, str] = {}  # each path brain.md lists, with the title it first gives it
        for rel, title in record.documents:
            named.setdefault(rel, title)
        pending = list(named.items())
        shown: list[str] = []
        for start in range(0, len(pending), wanted):
            chunk = pending[start : start + wanted]
            present = docs.metas_at(record.project, [rel for rel, _ in chunk])
            for rel, title in chunk:
                if rel in present:
                    listed.append(BrainDocument(f"{record.project}/{rel}", title, listed=True))
                    shown.append(rel)
                    if len(listed) == wanted:
                        return listed
        rest = docs.metas(record.project, record.folder, limit=wanted - len(listed), exclude=_outermost(sub_brains),
                          leave_out=[brain_md_path, *shown])
        listed += (BrainDocument(f"{record.project}/{meta.path}", meta.title, listed=False) for meta in rest)
        return listed

    def search_brain(self, p: Principal, brain_id: str, query: str, include_parents: bool = False) -> BrainHitList:
        """A search inside a brain (and up to limits.BRAIN_PARENT_LEVELS parents) in a bounded number of statements
        besides the searches: each brain of the chain read alone, with the brains inside its folder (left out of
        its search), and the titles of its hits brain.md does not give read in one statement. It read every brain
        of each project on the chain, and each such title alone."""
        self.authorization.authorize(p, READ)
        _check_query(query)
        seen = self.authorization.seen(p)
        record = self._brain(seen, brain_id)
        docs = self.store.documents
        chain = [record]
        if include_parents:
            current = record
            while current.parent is not None and len(chain) <= limits.BRAIN_PARENT_LEVELS:
                parent_id = self._parent_id(current, seen)
                project, _, folder = (parent_id or "").partition("/")
                parent = docs.brain(project, folder) if parent_id is not None else None
                if parent is None or parent.id in {b.id for b in chain}:
                    break
                chain.append(parent)
                current = parent
        found: list[tuple[BrainRecord, Match]] = []
        covered: list[str] = []  # the brains whose matches are in the answer (one past the bound is only probed)
        truncated = False
        complete = True
        scanned = False
        for brain in chain:
            remaining = limits.SEARCH_MAX_RESULTS - len(found)
            inside = {b.folder for b in docs.brain_heads_below(brain.project, brain.folder)}  # searched alone
            scope = Scope(projects=[brain.project], prefix=brain.folder,  # the outermost hold the others
                          exclude_prefixes=_outermost(inside))
            result = self._first_per_file(query, scope, max(remaining, 1))
            complete = complete and result.complete
            scanned = scanned or result.scanned
            if remaining <= 0:
                truncated = truncated or bool(result.matches)
                continue
            covered.append(brain.id)
            found += [(brain, m) for m in result.matches]
            truncated = truncated or result.has_more
        hits = self._brain_hits(found)
        return BrainHitList(record.id, query, covered, hits, truncated, complete, scanned)

    def _brain_hits(self, found: Sequence[tuple[BrainRecord, Match]]) -> list[BrainHit]:
        """Each match with its document's title: as its brain's brain.md gives it, else as indexed (read in one
        statement for a project's matches), else its file name."""
        given = {brain.id: dict(brain.documents) for brain, _ in found}
        untitled: dict[str, list[str]] = {}
        for brain, m in found:
            if not given[brain.id].get(m.path):
                untitled.setdefault(brain.project, []).append(m.path)
        indexed = {project: self.store.documents.metas_at(project, paths) for project, paths in untitled.items()}
        hits = []
        for brain, m in found:
            meta = indexed.get(brain.project, {}).get(m.path)
            title = given[brain.id].get(m.path) or (meta.title if meta else posixpath.basename(m.path))
            hits.append(BrainHit(brain.id, m.vault_path, title, m.line, m.text))
        return hits

    # search_notes -------------------------------------------------------------------------------------

    def search_notes(self, p: Principal, query: str, *, path: str = "", regex: bool = False,
                     limit: int = limits.NOTES_LIMIT_DEFAULT, offset: int = 0, repo: str | None = None,
                     case: CaseMode = "smart") -> NotePage:
        self.authorization.authorize(p, READ)
        if not query:
            raise InvalidArgument("query", "must not be empty; give the text to look for")
        if not 1 <= limit <= limits.NOTES_LIMIT_MAX:
            raise InvalidArgument("limit", f"must be between 1 and {limits.NOTES_LIMIT_MAX}")
        if not 0 <= offset <= limits.NOTES_OFFSET_MAX:
            raise InvalidArgument("offset", "must be 0 or more")
        norm = normalize_path(path)
        path_project, prefix = split_vault_path(norm)
        if repo is not None:
            self._project(p, repo)
            if norm and path_project != repo:  # with a repo named, a path relative to it is what a person means
                norm = f"{repo}/{norm}"
                path_project, prefix = split_vault_path(norm)
        if norm and "/" not in norm and repo is None and not self._may_read(p, path_project) \
                and self._may_read(p, ROOT_PROJECT) \
                and indexed_spelling(self.store.documents, ROOT_PROJECT, norm) is not None:
            # a note at the vault root, by its path on disk in either Unicode form (a name that is neither stays
            # Not found); the prefix below takes the spelling the index holds
            norm = f"{ROOT_PROJECT}/{norm}"
            path_project, prefix = split_vault_path(norm)
        if norm:
            # a folder or file that holds no note is not there, as a hidden one is not (search_notes' page says so);
            # one typed in the other Unicode form, or a mix of its names' forms, is the one readDoc finds
            if not self._may_read(p, path_project):
                raise NotFound(f"Not found: {path}")
            if prefix:
                spelled = indexed_prefix(self.store.documents, path_project, prefix)
                if spelled is None:
                    raise NotFound(f"Not found: {path}")
                prefix = spelled
            projects = [path_project]
        elif repo is not None:
            projects = [repo]
        else:
            projects = [pr.id for pr in self.authorization.projects(p, READ)]
        result = self.engine.search(SearchRequest(query=query, scope=Scope(projects=projects, prefix=prefix),
                                                  regex=regex, case=case, all_lines=True, limit=limit, offset=offset))
        versions = self._versions(result)
        matches = [NoteMatch(m.project, m.vault_path, m.line, m.text, m.shortened,
                             versions.get((m.project, m.path), "")) for m in result.matches]
        return NotePage(query, matches, offset, result.has_more, repo, result.complete, result.scanned)


def _doc_info(m: DocumentMeta) -> DocInfo:
    return DocInfo(m.path, m.title, m.summary, m.size, m.line_count)


def _enclosing(folder: str) -> list[str]:
    """The folders enclosing project-relative ``folder``, nearest first, the project's root ("") last."""
    enclosing: list[str] = []
    while folder:
        folder = posixpath.dirname(folder)
        enclosing.append(folder)
    return enclosing


def _outermost(folders: set[str]) -> tuple[str, ...]:
    """Those of ``folders`` inside none of the others, sorted: what leaves them all out of a query."""
    return tuple(sorted(f for f in folders if not _in_folders(f, folders)))


def _in_folders(path: str, folders: set[str]) -> bool:
    """Whether ``path`` lies inside one of ``folders``: its own folders looked up, where comparing it with each of them
    made a brain over 2,000 sub-brains take 650 ms (two million comparisons for its 2,000 brain.md files)."""
    folder = posixpath.dirname(path)
    while folder:
        if folder in folders:
            return True
        folder = posixpath.dirname(folder)
    return False
