"""Projects, their documents, a document's lines, and search over everything the caller may read."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response

from notewell import limits
from notewell.api.any_path import DOCUMENT
from notewell.api.conditional import IfMatchRead, IfNoneMatch, answered
from notewell.api.context import Caller, Services
from notewell.api.paging import Limit, Offset, keyed_page, next_link, page_model
from notewell.api.problems import responses
from notewell.errors import spelled
from notewell.paths import PATH_MAX_CHARS, PROJECT_ID_MAX_CHARS
from notewell.records.models import record_model
from notewell.services.knowledge import DocInfo, DocPart, NotePage, ProjectInfo

router = APIRouter(tags=["knowledge"])
ProjectPage = page_model(record_model(ProjectInfo), "ProjectPage", keyed=True)
DocumentPage = page_model(record_model(DocInfo), "DocumentPage", keyed=True)
DocPartModel = record_model(DocPart)
SearchPage = record_model(NotePage, "SearchPage", next=(str | None, None))
READ_ERRORS = responses(400, 401, 403, 404, 422)

PathQuery = Annotated[str, Query(max_length=PATH_MAX_CHARS, description="A folder or file inside the project, e.g. "
                                                              "pricing or pricing/policy.md.")]


@router.get("/projects", response_model=ProjectPage, responses=responses(401, 403, 422),
            summary="The projects the caller can read, by id")
def projects(caller: Caller, svc: Services, request: Request, response: Response, limit: Limit = 20,
             offset: Offset = 0, after: Annotated[str | None, Query(description=(
                 "The nextAfter of the previous page: the projects whose id sorts after it (not with offset)."))]
             = None) -> Any:
    items = svc.knowledge.projects_with_counts(caller, offset=offset, after=after, limit=limit + 1)  # one more: a next?
    shown = items[:limit]
    return keyed_page(request, response, shown, offset, limit,
                      next_after=shown[-1].id if len(items) > limit else None)


@router.get("/projects/{project}/documents", response_model=DocumentPage, responses=READ_ERRORS,
            summary="A project's documents (under a folder), by path")
def documents(caller: Caller, svc: Services, project: str, request: Request, response: Response,
              path: PathQuery = "", limit: Limit = 20, offset: Offset = 0,
              after: Annotated[str | None, Query(description=(
                  "The nextAfter of the previous page: the documents whose path sorts after it (not with offset); "
                  "unlike an offset, a rename between two pages never skips or repeats another document."))]
              = None) -> Any:
    listed = svc.knowledge.list_docs(caller, project, path, offset=offset, after=after, limit=limit)
    return keyed_page(request, response, listed.documents, offset, limit, next_after=listed.next_after)


FirstLine = Annotated[int, Query(ge=1, le=limits.NOTES_OFFSET_MAX, description="The first line, counting from 1.")]
Lines = Annotated[int, Query(ge=1, le=limits.READ_DOC_LINES_MAX, description="How many lines.")]
Column = Annotated[int, Query(ge=1, le=limits.READ_DOC_COLUMN_MAX,
                              description="The character of line offset to start at, counting from 1: a part that "
                                          "cut a line too long for one part names it as nextColumn.")]


WITH_ETAG = {**READ_ERRORS, 200: {"headers": {"ETag": {
    "description": "The document's version, quoted: what a write's If-Match names.", "schema": {"type": "string"}}}},
             304: {"description": "If-None-Match names the document's version: it is unchanged (no body; the ETag "
                                  "and Link of the 200)."},
             412: {"description": "If-Match names no version the document has (its ETag says which it has)."}}


@router.get(DOCUMENT, response_model=DocPartModel, responses=WITH_ETAG,
            summary="A document's text, a range of lines at a time")
def document(caller: Caller, svc: Services, project: str, path: str, request: Request, response: Response,
             offset: FirstLine = 1, limit: Lines = limits.READ_DOC_LINES_DEFAULT, column: Column = 1,
             if_match: IfMatchRead = None, if_none_match: IfNoneMatch = None) -> Any:
    part = svc.knowledge.read_doc(caller, f"{project}/{path}", offset, limit, column)
    if part.version:
        response.headers["ETag"] = f'"{part.version}"'
    next_link(request, response, part.next_offset, column=part.next_column)
    return answered(request, part.version, response.headers.get("Link")) or part


@router.head(DOCUMENT, response_model=DocPartModel, responses=WITH_ETAG,
             summary="A document's headers as GET answers them (ETag, Link), without its text")
def document_head(caller: Caller, svc: Services, project: str, path: str, request: Request, response: Response,
                  offset: FirstLine = 1, limit: Lines = limits.READ_DOC_LINES_DEFAULT, column: Column = 1,
                  if_match: IfMatchRead = None, if_none_match: IfNoneMatch = None) -> Any:
    return document(caller, svc, project, path, request, response, offset, limit, column, if_match, if_none_match)


@router.get("/search", response_model=SearchPage, responses=READ_ERRORS,
            summary="Every matching line: plain text or an RE2 regular expression, a page at a time")
def search(caller: Caller, svc: Services, request: Request, response: Response,
           q: Annotated[str, Query(min_length=1, max_length=1000, description="The text or pattern.")],
           regex: Annotated[bool, Query(description="Read q as an RE2 regular expression.")] = False,
           case: Annotated[Literal["smart", "insensitive", "sensitive"], Query(
               description="smart: a capital letter in q makes the search case-sensitive.")] = "smart",
           project: Annotated[str | None, Query(max_length=PROJECT_ID_MAX_CHARS,
                                                description="Search this project only.")] = None,
           path: Annotated[str, Query(max_length=1000, description="A folder or file, vault-relative, project "
                                                                   "first: northwind-advisory/pricing.")] = "",
           limit: Annotated[int, Query(ge=1, le=limits.NOTES_LIMIT_MAX, description="Matches per page.")]
           = limits.NOTES_LIMIT_DEFAULT,
           offset: Offset = 0) -> Any:
    with spelled(query="q"):
        found = svc.knowledge.search_notes(caller, q, path=path, regex=regex, limit=limit, offset=offset,
                                           repo=project, case=case)
    following = offset + len(found.matches) if found.has_more else None
    return {**record_model(NotePage).model_validate(found).model_dump(),
            "next": next_link(request, response, following)}
