"""The search engine: one plain-Python API that the CLI, the MCP tools and the benchmarks call.

A query becomes a candidate plan (the literals every match must contain) and a matcher. The store
returns the candidate documents of the scope in order (project, then path, by code point), with the
regions of their text that the index matched, and the matcher finds the lines of those regions.
Without a usable trigram (a query of one or two characters, a regex with no literal) every document
in scope is a candidate, read whole: the result says it scanned, and a scan stops at its time budget
with ``complete`` false.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from typing import Literal

from notewell.errors import InvalidArgument, not_unicode
from notewell.fold import has_upper
from notewell.records.documents import Scope
from notewell.search.literals import plain_plan, regex_plan
from notewell.search.matcher import LineHit, PlainMatcher, RegexMatcher
from notewell.search.source import DocumentSource

CaseMode = Literal["insensitive", "smart", "sensitive"]
CASE_MODES: tuple[str, ...] = ("insensitive", "smart", "sensitive")
MAX_LINE_CHARS = 400  # a longer matching line is cut to this many characters, around the match
DEFAULT_SCAN_BUDGET_S = 5.0
MAX_QUERY_CHARS = 1000  # longer queries are refused before any work: planning and RE2 stay small and fast
FIRST_PAGE = 64  # candidates asked for first; each further page is PAGE_GROWTH times larger
PAGE_GROWTH = 8
MAX_PAGE = 8192
_CONTEXT_BEFORE = MAX_LINE_CHARS // 4


@dataclass(frozen=True)
class SearchRequest:
    query: str
    scope: Scope
    regex: bool = False
    case: CaseMode = "insensitive"
    all_lines: bool = False  # every matching line (search_notes) or the first one per file
    limit: int = 40
    offset: int = 0


@dataclass(frozen=True)
class Match:
    project: str
    path: str  # project-relative
    line: int
    text: str
    shortened: bool

    @property
    def vault_path(self) -> str:
        return f"{self.project}/{self.path}"


@dataclass
class SearchResult:
    query: str
    matches: list[Match] = field(default_factory=list)
    offset: int = 0
    has_more: bool = False
    scanned: bool = False  # no trigram to narrow the candidates: every document in scope was read
    complete: bool = True  # false when a scan stopped at its time budget
    candidates: int = 0  # candidate documents the store returned (pages are fetched until the answer is full)


def _cut(hit: LineHit, width: int) -> tuple[str, bool]:
    if len(hit.text) <= width:
        return hit.text, False
    start = max(0, min(hit.column - _CONTEXT_BEFORE, len(hit.text) - width))
    if hit.end > start + width:  # a long match: as much of it as fits, from its start
        start = max(0, min(hit.column, hit.end - width))
    return hit.text[start : start + width], True


def ignores_case(query: str, regex: bool, case: CaseMode) -> bool:
    if case == "insensitive":
        return True
    if case == "sensitive":
        return False
    if regex:  # escapes such as \D or \S are not capitals the person typed
        import re

        query = re.sub(r"\\(?:[pP]\{[^}]*\}|[pP].|.)", "", query)
    return not has_upper(query)


class SearchEngine:
    def __init__(self, documents: DocumentSource, scan_budget_s: float = DEFAULT_SCAN_BUDGET_S,
                 max_line_chars: int = MAX_LINE_CHARS) -> None:
        self.documents = documents
        self.scan_budget_s = scan_budget_s
        self.max_line_chars = max_line_chars

    def search(self, req: SearchRequest) -> SearchResult:
        deadline = time.monotonic() + self.scan_budget_s  # the budget covers planning as well as scanning
        if not req.query:
            raise InvalidArgument("query", "must not be empty; give the text to look for")
        if len(req.query) > MAX_QUERY_CHARS:
            raise InvalidArgument("query", f"is {len(req.query)} characters; keep it to {MAX_QUERY_CHARS} or fewer")
        if (why := not_unicode(req.query)) is not None:  # a command line's bytes that are not UTF-8
            raise InvalidArgument("query", why)
        if req.limit < 1:
            raise InvalidArgument("limit", "must be at least 1")
        if req.offset < 0:
            raise InvalidArgument("offset", "must be 0 or more")
        if req.case not in CASE_MODES:
            raise InvalidArgument("case", f"must be one of {', '.join(CASE_MODES)}")
        ignore_case = ignores_case(req.query, req.regex, req.case)
        matcher: PlainMatcher | RegexMatcher
        if req.regex:
            matcher = RegexMatcher(req.query, ignore_case)
            plan = regex_plan(req.query)
        else:
            matcher = PlainMatcher(req.query, ignore_case)
            plan = plain_plan(req.query)
        result = SearchResult(query=req.query, offset=req.offset, scanned=plan is None)
        wanted = req.offset + req.limit
        seen = 0
        after: tuple[str, str] | None = None
        size = FIRST_PAGE
        while True:  # candidates page by page, in order: a common literal is answered by its first pages
            page = self.documents.candidates(req.scope, plan, after=after, limit=size)
            result.candidates += len(page)
            by_id = {c.id: c for c in page}
            docs = groupby(self.documents.texts(page, plan), key=itemgetter(0))  # a document's regions, in order
            for done, (doc_id, regions) in enumerate(docs, start=1):
                doc = by_id[doc_id]
                for _, first_line, text in regions:
                    hits = 0
                    for hit in matcher.hits(text):
                        if seen >= wanted:
                            result.has_more = True
                            return result
                        if seen >= req.offset:
                            line, shortened = _cut(hit, self.max_line_chars)
                            result.matches.append(Match(doc.project, doc.path, first_line + hit.line - 1, line,
                                                        shortened))
                        seen += 1
                        hits += 1
                        if not req.all_lines:
                            break
                    if hits and not req.all_lines:
                        break
                more_to_read = done < len(page) or len(page) == size
                if more_to_read and time.monotonic() > deadline:
                    result.complete = False
                    return result
            if len(page) < size:
                return result
            after = (page[-1].project, page[-1].path)
            size = min(size * PAGE_GROWTH, MAX_PAGE)
