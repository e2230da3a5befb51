"""Brains: folders with a brain.md, listed, read and searched (with their parents on request)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from notewell import limits
from notewell.api.context import Caller, Services
from notewell.api.paging import Limit, Offset, page, page_model, window
from notewell.api.problems import responses
from notewell.errors import spelled
from notewell.paths import PROJECT_ID_MAX_CHARS
from notewell.records.models import record_model
from notewell.services.knowledge import BrainHitList, BrainInfo, BrainPage

router = APIRouter(tags=["brains"])
BrainList = page_model(record_model(BrainInfo), "BrainList")
BrainId = Annotated[str, Query(min_length=1, max_length=1000,
                               description="A brain id: the project, then the brain's folder "
                                           "(northwind-advisory/clients).")]


@router.get("/brains", response_model=BrainList, responses=responses(400, 401, 403, 404, 422),
            summary="The brains the caller can read (of one project)")
def brains(caller: Caller, svc: Services, request: Request, response: Response,
           project: Annotated[str | None, Query(max_length=PROJECT_ID_MAX_CHARS,
                                                description="Only this project's brains.")] = None,
           limit: Limit = 20, offset: Offset = 0) -> Any:
    items, more = window(svc.knowledge.list_brains(caller, project), offset, limit)
    return page(request, response, items, offset, limit, has_more=more)


@router.get("/brain", response_model=record_model(BrainPage), responses=responses(401, 403, 404, 422),
            summary="One brain: its brain.md, documents, sub-brains and parent")
def brain(caller: Caller, svc: Services, id: BrainId) -> Any:
    return svc.knowledge.get_brain(caller, id)


@router.get("/brain/search", response_model=record_model(BrainHitList), responses=responses(400, 401, 403, 404, 422),
            summary="Search one brain's documents (and its parents'), first match per file")
def search_brain(caller: Caller, svc: Services, id: BrainId,
                 q: Annotated[str, Query(min_length=limits.QUERY_MIN_CHARS, max_length=1000,
                                         description="The text to look for.")],
                 include_parents: Annotated[bool, Query(alias="includeParents",
                                                        description="Search the parent brains too.")] = False) -> Any:
    with spelled(query="q"):
        return svc.knowledge.search_brain(caller, id, q, include_parents)
