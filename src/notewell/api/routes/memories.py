"""Memories: remember (201, idempotent), get, forget with a reason, strict search, tolerant recall, a
context pack, and a list chosen by author, token, project, path, type, tags and creation time."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from notewell.api.context import Caller, Services
from notewell.api.idempotent import IdempotencyKey, create_once
from notewell.api.paging import Limit, Offset, page, page_model
from notewell.api.problems import responses
from notewell.errors import spelled
from notewell.paths import PROJECT_ID_MAX_CHARS
from notewell.records.memories import MEMORY_TYPES, Narrowing
from notewell.records.models import CAMEL, dump, record_model
from notewell.services import memory as m
from notewell.services.context_pack import ContextPack
from notewell.services.idempotency import Answer
from notewell.services.memory_checks import MAX_TAGS, narrowing

router = APIRouter(tags=["memories"])
MemoryModel = record_model(m.Memory)
RememberedModel = record_model(m.Remembered)
MemoryPage = page_model(MemoryModel, "MemoryPage")
SearchModel = record_model(m.MemorySearch)
ERRORS = responses(400, 401, 403, 404, 422)

Q = Annotated[str, Query(min_length=1, max_length=1000, description="What to look for, in words.")]
SearchLimit = Annotated[int, Query(ge=1, le=m.SEARCH_LIMIT_MAX, description="How many results.")]
PathFilter = Annotated[str | None, Query(alias="pathFilter", max_length=1000,
                                         description="A location prefix, project first: northwind-advisory/decisions.")]
MemoryType = Annotated[str | None, Query(alias="memoryType", description=f"One of {', '.join(MEMORY_TYPES)}.")]
PreferWorking = Annotated[bool, Query(alias="preferWorking", description="Rank recent working memories first.")]


def _narrowing(
    author: Annotated[str | None, Query(max_length=200, description="Written by this user (their user id).")] = None,
    token: Annotated[str | None, Query(max_length=200, description="Written with this token (its id).")] = None,
    tag: Annotated[list[str] | None, Query(max_length=MAX_TAGS, description="Has this tag (repeat: every one).")]
    = None,
    created_since: Annotated[str | None, Query(alias="createdSince", max_length=40,
                                               description="Created at or after: ISO 8601, or 7d for a week ago.")]
    = None,
    created_until: Annotated[str | None, Query(alias="createdUntil", max_length=40,
                                               description="Created before: ISO 8601 or a duration ago.")] = None,
) -> Narrowing:
    """The wider filters every memory read takes: provenance (author, token), tags and creation time."""
    return narrowing(author=author, token=token, tags=tag or (), created_since=created_since,
                       created_until=created_until)


Narrow = Annotated[Narrowing, Depends(_narrowing)]


class RememberRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", **CAMEL)
    content: str = Field(min_length=1, max_length=m.MAX_CONTENT_CHARS, description="The memory, kept verbatim.")
    path: str = Field(default="", max_length=1000, description="A logical path inside the project: decisions/pricing.")
    memory_type: str = Field(default="durable", description=f"One of {', '.join(MEMORY_TYPES)}.")
    title: str | None = Field(default=None, max_length=m.MAX_TITLE_CHARS, description="Defaults to the first line.")
    tags: list[str] = Field(default_factory=list, max_length=MAX_TAGS)
    project: str | None = Field(default=None, max_length=PROJECT_ID_MAX_CHARS,
                                description="Where it lands; default the token's project, else your home.")
    supersedes: str | None = Field(default=None, max_length=100, description="The ref this memory replaces.")
    expires_at: str | None = Field(default=None, max_length=40, description="Working memories only: ISO 8601 UTC.")
    private: StrictBool = Field(default=False, description="Only its author will see it, whatever anyone's role; by "
                                                     "default every reader of the project sees it.")
    about: str | None = Field(default=None, max_length=4096, description="A document it is about, project first: "
                                                                         "handbook/pricing.md.")


@router.post("/memories", status_code=201, response_model=RememberedModel,
             responses={**ERRORS, **responses(409), 200: {"description": "The same content was already kept at "
                                                                         "this project and path: its memory."}},
             summary="Remember: 201 with Location, or 200 with the existing memory for the same content")
def remember(caller: Caller, svc: Services, body: RememberRequest, request: Request, response: Response,
             idempotency_key: IdempotencyKey = None) -> Any:
    def create() -> Answer:
        done = svc.memory.remember(caller, body.content, path=body.path, memory_type=body.memory_type,
                                   title=body.title, tags=body.tags, project=body.project,
                                   supersedes=body.supersedes, expires_at=body.expires_at, private=body.private,
                                   about=body.about)
        return Answer(201 if done.created else 200, dump(RememberedModel, done),
                      request.url_for("memory", ref=done.memory.ref).path)

    def permit() -> None:
        svc.memory.may_remember(caller, project=body.project, supersedes=body.supersedes)

    return create_once(svc, caller, request, response, body.model_dump(), idempotency_key, permit, create)


@router.get("/memories", response_model=MemoryPage, responses=ERRORS,
            summary="Memories chosen by their fields, newest first")
def memories(caller: Caller, svc: Services, request: Request, response: Response, narrow: Narrow,
             project: Annotated[str | None, Query(max_length=PROJECT_ID_MAX_CHARS,
                                                  description="Only this project.")] = None,
             path: Annotated[str, Query(max_length=1000, description="Inside project: this path or below it.")] = "",
             memory_type: MemoryType = None,
             superseded: Annotated[bool, Query(description="Include superseded memories.")] = False,
             forgotten: Annotated[bool, Query(description="Include forgotten memories you could have forgotten "
                                                          "(yours, a project you may write, any for an admin).")]
             = False,
             limit: Limit = 20, offset: Offset = 0) -> Any:
    found, more = svc.memory.list_memories(caller, project=project, path=path, memory_type=memory_type,
                                           narrow=narrow, include_superseded=superseded,
                                           include_forgotten=forgotten, limit=limit, offset=offset)
    return page(request, response, found, offset, limit, has_more=more)


@router.get("/memories/search", response_model=SearchModel, responses=ERRORS,
            summary="Strict search: every word, whole words only")
def search_memory(caller: Caller, svc: Services, q: Q, narrow: Narrow,
                  limit: SearchLimit = m.SEARCH_LIMIT_DEFAULT,
                  path_filter: PathFilter = None, memory_type: MemoryType = None,
                  prefer_working: PreferWorking = False) -> Any:
    with spelled(query="q"):
        return svc.memory.search_memory(caller, q, limit=limit, path_filter=path_filter, memory_type=memory_type,
                                        prefer_working=prefer_working, narrow=narrow)


@router.get("/memories/recall", response_model=SearchModel, responses=ERRORS,
            summary="Tolerant recall: any word, stems and prefixes, ranked by relevance and age")
def recall(caller: Caller, svc: Services, q: Q, narrow: Narrow, limit: SearchLimit = m.RECALL_LIMIT_DEFAULT,
           path_filter: PathFilter = None, memory_type: MemoryType = None,
           prefer_working: PreferWorking = False) -> Any:
    with spelled(query="q"):
        return svc.memory.recall(caller, q, limit=limit, path_filter=path_filter, memory_type=memory_type,
                                 prefer_working=prefer_working, narrow=narrow)


@router.get("/memories/context", response_model=record_model(ContextPack), responses=ERRORS,
            summary="A context pack: the best memories (and passages) in at most maxTokens tokens")
def context(caller: Caller, svc: Services, q: Q, narrow: Narrow,
            max_tokens: Annotated[int, Query(alias="maxTokens", ge=m.CONTEXT_TOKENS_MIN, le=m.CONTEXT_TOKENS_MAX,
                                             description="The token budget.")] = m.CONTEXT_TOKENS_DEFAULT,
            include_documents: Annotated[bool, Query(alias="includeDocuments",
                                                     description="Add passages of readable documents, and the "
                                                                 "documents one link away.")] = False,
            path_filter: PathFilter = None, memory_type: MemoryType = None) -> Any:
    with spelled(query="q"):
        return svc.memory.recall_context(caller, q, max_tokens=max_tokens, include_documents=include_documents,
                                         path_filter=path_filter, memory_type=memory_type, narrow=narrow)


@router.get("/memories/{ref}", response_model=MemoryModel, responses=ERRORS,
            summary="One memory (superseded too; a forgotten one to whoever could have forgotten it)")
def memory(caller: Caller, svc: Services, ref: str) -> Any:
    return svc.memory.get(caller, ref)


@router.delete("/memories/{ref}", response_model=MemoryModel, responses={**ERRORS, **responses(409)},
               summary="Forget a memory, saying why if you will: it leaves every search; the row stays for the "
                       "audit trail (409 when it is forgotten already)")
def forget(caller: Caller, svc: Services, ref: str,
           reason: Annotated[str | None, Query(max_length=m.MAX_REASON_CHARS, description=(
               "Why (optional, as XMemo's forget: the audit entry says when none was given)."))] = None) -> Any:
    return svc.memory.forget(caller, ref, reason)
