"""A document's links and backlinks, and the context its links reach (docs/links.md).

Registered before the knowledge routes: ``/projects/{project}/documents/{path}/links`` would otherwise be read
as a document whose path ends in ``/links``; such a document (a file named ``links``, with no ending) is
therefore not readable at that URL (docs/links.md says so).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response

from notewell.api.any_path import DOCUMENT
from notewell.api.context import Caller, Services
from notewell.api.paging import next_link
from notewell.api.problems import responses
from notewell.paths import PATH_MAX_CHARS
from notewell.records.models import record_model
from notewell.services import link_context as lc
from notewell.services import links as ls
from notewell.services.memory import CONTEXT_TOKENS_DEFAULT, CONTEXT_TOKENS_MAX, CONTEXT_TOKENS_MIN

router = APIRouter(tags=["links"])
LinksModel = record_model(ls.DocLinks, "DocumentLinks", next=(str | None, None))
ContextModel = record_model(lc.LinkContext)
READ_ERRORS = responses(400, 401, 403, 404, 422)


@router.get(DOCUMENT + "/links", response_model=LinksModel, responses=READ_ERRORS,
            summary="A document's outgoing links and its backlinks, a page of each")
def document_links(caller: Caller, svc: Services, project: str, path: str, request: Request, response: Response,
                   direction: Annotated[Literal["both", "outgoing", "backlinks"],
                                        Query(description="Which lists to answer.")] = "both",
                   limit: Annotated[int, Query(ge=1, le=ls.LINKS_LIMIT_MAX, description="Links per list.")]
                   = ls.LINKS_LIMIT_DEFAULT,
                   offset: Annotated[int, Query(ge=0, le=ls.LINKS_OFFSET_MAX,
                                                description="How many of each list to skip.")] = 0) -> Any:
    found = svc.links.links(caller, f"{project}/{path}", direction=direction, limit=limit, offset=offset)
    following = found.offset + found.limit if found.has_more else None
    return {**LinksModel.model_validate(found).model_dump(), "next": next_link(request, response, following)}


@router.get("/context", response_model=ContextModel, responses=READ_ERRORS,
            summary="The documents and memories a start's links reach, packed into a token budget")
def link_context(caller: Caller, svc: Services,
            path: Annotated[str | None, Query(max_length=PATH_MAX_CHARS,
                                              description="Start from this document, project first.")] = None,
            ref: Annotated[str | None, Query(max_length=200, description="Start from this memory.")] = None,
            query: Annotated[str | None, Query(max_length=1000,
                                               description="Start from what matches this text.")] = None,
            depth: Annotated[int, Query(ge=0, le=lc.MAX_DEPTH, description="Hops of links to follow.")]
            = lc.DEPTH_DEFAULT,
            max_tokens: Annotated[int, Query(alias="maxTokens", ge=CONTEXT_TOKENS_MIN, le=CONTEXT_TOKENS_MAX,
                                             description="The pack's budget in tokens.")]
            = CONTEXT_TOKENS_DEFAULT) -> Any:
    return svc.link_context.build_context(caller, path=path, ref=ref, query=query, depth=depth,
                                          max_tokens=max_tokens)
