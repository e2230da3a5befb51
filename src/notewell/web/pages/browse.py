"""Browse and search: the projects you can see, a project's documents, a document with line anchors (and its
links and backlinks), search.

Every page asks the knowledge service, so a project or document you may not see answers exactly as a
missing one (the same 404 page).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from notewell import limits
from notewell.access.principal import Principal
from notewell.errors import InvalidArgument, spelled
from notewell.services.knowledge import CaseMode, DocPart, KnowledgeService
from notewell.services.links import LINKS_LIMIT_MAX, DocLinks, Link
from notewell.web.highlight import highlight
from notewell.web.link_map import link_map, neighbours
from notewell.web.markdown import is_markdown, numbered_lines, render_markdown
from notewell.web.paging import numbered, pages
from notewell.web.render import page
from notewell.web.session import asked_number, call, page_number, searched_text, services, signed_in, whole_number
from notewell.web.wikilinks import document_page

PAGE_SIZE = 20
PROJECTS_SHOWN = 100  # projects on a page of /projects, by id
PROJECT_PAGE = limits.LIST_DOCS_MAX  # documents on one page of a project
MAX_DOC_LINES = 20_000  # a longer document shows its first lines and says so
CASES: tuple[tuple[CaseMode, str], ...] = (("smart", "Smart case"), ("insensitive", "Ignore case"),
                                           ("sensitive", "Match case"))


@dataclass(frozen=True)
class HitView:
    path: str
    line: int
    href: str
    html: Markup


def doc_href(project: str, rel: str, line: int | None = None) -> str:
    href = document_page(f"{project}/{rel}")
    return f"{href}?line={line}#L{line}" if line else href


async def projects_page(request: Request) -> Response:
    """Page ``?page=N`` of the projects p may read, by id, PROJECTS_SHOWN a page (one more read to know whether more
    follow; the document counts are read for that page alone)."""
    p = await signed_in(request)
    number = page_number(request)
    found = await call(services(request).knowledge.projects_with_counts, p, offset=(number - 1) * PROJECTS_SHOWN,
                       limit=PROJECTS_SHOWN + 1)
    projects = found[:PROJECTS_SHOWN]
    return page(request, "projects.html", p, title="Projects", projects=projects,
                **pages(numbered("/projects"), number, PROJECTS_SHOWN, len(projects), len(found) > PROJECTS_SHOWN))


async def project_page(request: Request) -> Response:
    p = await signed_in(request)
    svc = services(request)
    project_id = request.path_params["project"]
    offset = asked_number(request.query_params.get("offset"), "offset", least=0, most=limits.NOTES_OFFSET_MAX) or 0
    docs = await call(svc.knowledge.list_docs, p, project_id, offset=offset, limit=PROJECT_PAGE)
    project = await call(svc.authorization.authorize, p, "knowledge:read", project_id)
    past_end = bool(offset) and not docs.documents  # leads back to the first page, not to one more past the end
    return page(request, "project.html", p, title=project.name, project=project, docs=docs, past_end=past_end,
                previous=max(0, offset - PROJECT_PAGE) if offset and not past_end else None,
                following=offset + len(docs.documents) if docs.truncated else None)


@dataclass(frozen=True)
class LinkView:
    """A link as the document page lists it: the other document (or the target as written), where, and the line."""

    text: str
    href: str  # "" for an unresolved link
    line: int
    line_href: str
    snippet: str


DOC_LINKS_SHOWN = 50  # each list on the document page; getLinks and the REST route page through the rest


def _link_views(found: DocLinks) -> tuple[list[LinkView], list[LinkView]]:
    """(outgoing, backlinks) for the page: outgoing lead to their targets, backlinks to the linking line."""
    here = _split(found.path)

    def target(link: Link) -> LinkView:
        href = doc_href(*_split(link.path)) if link.path else ""
        return LinkView(link.path or link.target, href, link.line, doc_href(*here, link.line), link.snippet)

    def backlink(link: Link) -> LinkView:
        at = doc_href(*_split(link.source), link.line)
        return LinkView(link.source, doc_href(*_split(link.source)), link.line, at, link.snippet)

    return ([target(link) for link in found.outgoing[:DOC_LINKS_SHOWN]],
            [backlink(link) for link in found.backlinks[:DOC_LINKS_SHOWN]])


def _read_all(knowledge: KnowledgeService, p: Principal,
              vault_path: str) -> tuple[DocPart, list[str], bool, list[tuple[int, int]]]:
    """The document's first MAX_DOC_LINES lines, read part by part through the service, whether lines were left
    out, and each line shown only in part: (its number, the characters shown). A line too long for one part
    shows its first part alone (the page stays bounded; readDoc and the REST API read the rest by column)."""
    read = knowledge.read_doc
    part = read(p, vault_path, 1, limits.READ_DOC_LINES_MAX)
    first = part
    lines = part.text.split("\n") if part.last_line >= part.first_line else []
    partly: list[tuple[int, int]] = []
    while part.next_offset is not None and len(lines) < MAX_DOC_LINES:
        if part.next_column is not None:
            partly.append((part.next_offset, part.next_column - 1))
        following = part.next_offset + 1 if part.next_column is not None else part.next_offset
        if following > part.total_lines:
            break
        part = read(p, vault_path, following, limits.READ_DOC_LINES_MAX)
        lines += part.text.split("\n")
    return first, lines[:MAX_DOC_LINES], first.total_lines > MAX_DOC_LINES, partly


async def doc_page(request: Request) -> Response:
    p = await signed_in(request)
    project, rel = request.path_params["project"], request.path_params["path"]
    first, lines, cut, partly = await call(_read_all, services(request).knowledge, p, f"{project}/{rel}")
    found = await call(services(request).links.links, p, f"{project}/{rel}", limit=LINKS_LIMIT_MAX)
    about = await call(services(request).memory.about_document, p, first.path)  # as found: the URL's form may differ
    outgoing, backlinks = _link_views(found)  # the first DOC_LINKS_SHOWN of each; every wikilink fetched marks the text
    drawn = link_map(found.path, neighbours([(o.text, o.href) for o in outgoing if o.href and o.text != found.path],
                                            [(b.text, b.href) for b in backlinks if b.text != found.path]))
    line = whole_number(request.query_params.get("line", ""), 9)
    markdown = is_markdown(rel)
    rendered = markdown and request.query_params.get("view") != "source"
    title = first.title or rel
    wikilinks = {link.target: doc_href(*_split(link.path)) if link.path else None
                 for link in found.outgoing if link.kind == "wikilink"}
    unresolved = (project, rel, frozenset(link.target for link in found.outgoing
                                          if link.kind == "markdown" and not link.path))
    blocks = render_markdown("\n".join(lines), line, title, wikilinks, unresolved) if rendered else None
    heading = next((b for b in blocks or [] if b.kind == "title"), None)  # shown once: as the page's h1
    # a file that is not UTF-8 is never edited (note_vault.decode_note): no Edit link leads to that refusal
    may_write = not first.decoded and services(request).authorization.allowed(p, "note:write", project)
    return page(request, "doc.html", p, title=title, project=project, rel=rel, total=first.total_lines,
                may_write=may_write,
                shown=len(lines), cut=cut, partly=partly, heading=heading,
                blocks=None if blocks is None else [b for b in blocks if b.kind != "title"],
                lines=None if rendered else numbered_lines("\n".join(lines)), line=line, markdown=markdown,
                outgoing=outgoing, backlinks=backlinks, links=found, link_map=drawn, about=about)


def _split(vault_path: str) -> tuple[str, str]:
    project, _, rel = vault_path.partition("/")
    return project, rel


def _search_href(params: dict[str, str], page_number: int) -> str:
    return "/search?" + urlencode({**params, "page": str(page_number)})


async def search_page(request: Request) -> Response:
    p = await signed_in(request)
    svc = services(request)
    q, refused = searched_text(request)
    mode = "regex" if request.query_params.get("mode") == "regex" else "plain"
    case_param = request.query_params.get("case", "smart")
    case: CaseMode = next((c for c, _ in CASES if c == case_param), "smart")
    project = request.query_params.get("project", "")
    number = page_number(request)
    projects = await call(svc.knowledge.projects, p)
    context: dict[str, Any] = {"q": q, "mode": mode, "case": case, "project": project, "cases": CASES,
                                  "projects": projects, "result": None, "hits": [], "error": "",
                                  "past_end": False, "first_href": "", "prev_href": "", "next_href": ""}
    if refused:
        context["error"] = refused
    elif q:
        try:
            with spelled(query="q"):
                result = await call(svc.knowledge.search_notes, p, q, regex=mode == "regex", limit=PAGE_SIZE,
                                    offset=(number - 1) * PAGE_SIZE, repo=project or None, case=case)
        except InvalidArgument as exc:
            context["error"] = str(exc)
        else:
            params = {"q": q, "mode": mode, "case": case, "project": project}
            context.update(
                result=result,
                hits=[HitView(m.path, m.line, doc_href(*_split(m.path), m.line),
                              highlight(m.text, q, regex=mode == "regex", case=case)) for m in result.matches],
                **pages(lambda n: _search_href(params, n), number, PAGE_SIZE, len(result.matches), result.has_more))
    return page(request, "search.html", p, title=f"Search: {q}" if q else "Search", **context)


ROUTES = [
    Route("/projects", projects_page, methods=["GET"]),
    Route("/p/{project}", project_page, methods=["GET"]),
    Route("/p/{project}/doc/{path:path}", doc_page, methods=["GET"]),
    Route("/search", search_page, methods=["GET"]),
]
