"""The External Brain over REST: coding sessions (open, log events, report the outcome, search) and taught
knowledge (teach, list, retrieve for a prompt, retire). Every operation needs the sessions scope."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool, create_model

from notewell import limits
from notewell.api.context import Caller, Services
from notewell.api.idempotent import IdempotencyKey, create_once
from notewell.api.paging import Limit, Offset, page, page_model, window
from notewell.api.problems import responses
from notewell.errors import spelled
from notewell.json_bounds import JSON_DEPTH_MAX
from notewell.paths import PROJECT_ID_MAX_CHARS
from notewell.records.brain import KNOWLEDGE_KINDS, EventRecord, KnowledgeRecord, SessionRecord
from notewell.records.models import CAMEL, dump, record_model
from notewell.services import brain_limits as b
from notewell.services.brain_health import HEALTH_DAYS_DEFAULT, HEALTH_DAYS_MAX, LoopHealth
from notewell.services.brain_projects import MAX_LABEL_CHARS, MAX_NAME_CHARS, BrainProject
from notewell.services.brain_retrieval import Retrieval
from notewell.services.brain_scoring import AskBack
from notewell.services.brain_sessions import Outcome, SessionFound, StartedSession
from notewell.services.idempotency import Answer

router = APIRouter(tags=["sessions and knowledge"])
ERRORS = responses(400, 401, 403, 404, 422)
SessionModel = record_model(SessionRecord)
KnowledgeModel = record_model(KnowledgeRecord)
StartedModel = record_model(StartedSession)
SessionPage = page_model(SessionModel, "SessionPage")
KnowledgePage = page_model(KnowledgeModel, "KnowledgePage")
ProjectPage = page_model(record_model(BrainProject), "BrainProjectPage")
FoundPage = create_model(
    "SessionSearchPage", __base__=page_model(record_model(SessionFound), "SessionSearchItems"),
    words_only=(str | None, Field(None, description="Why the search used words alone, not meaning (meaning "
                                                     "off, its model missing, or a query the model mostly cannot "
                                                     "read); null when it used both.")))
EventPage = page_model(record_model(EventRecord), "EventPage")
OutcomeModel = record_model(Outcome, "Outcome", hint=(str | None, ...))  # the ask-back key, worded below
# The close's ask-back nudge (the service's key) in this door's words: teaching is POST /api/v1/knowledge.
REST_ASK_BACK: dict[AskBack, str] = {
    "capture-correction": "This session failed or was voted down and no learnings were captured: capture the "
                          "correction NOW with POST /api/v1/knowledge (trigger, rule, rationale) so the same "
                          "mistake is not repeated.",
    "capture-rule": "No learnings were captured. If this session taught you a durable rule about how this person "
                    "works, save it with POST /api/v1/knowledge (trigger, rule, rationale).",
    "teach-writable": "{learnings} not kept: you may not write to {project}, this session's project, so nothing "
                      "learned in it can be kept there. Teach {them} with POST /api/v1/knowledge (trigger, rule, "
                      "rationale) into a project you may write: without projectId it goes to one (your own Default "
                      "project when you may write no other); a token bound to {project} writes there only, so use "
                      "a user-scoped token. Or ask an admin for a write grant on {project}.",
}


def _hint(done: Outcome) -> str | None:
    """The close's hint (the service's key) in this door's words."""
    if done.hint is None:
        return None
    n = done.learnings.unwritable
    return REST_ASK_BACK[done.hint].format(learnings="1 learning was" if n == 1 else f"{n} learnings were",
                                           them="it" if n == 1 else "them", project=done.session.brain_project)


class SessionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", **CAMEL)
    client_type: str | None = Field(default=None, max_length=b.IDENTIFIER_MAX_CHARS,
                                     description="The client, e.g. claude_code.")
    prompt: str | None = Field(default=None, max_length=b.MAX_PROMPT_CHARS,
                               description="The task: relevant knowledge comes back with the session.")
    framework: str | None = Field(default=None, max_length=MAX_LABEL_CHARS)
    language: str | None = Field(default=None, max_length=MAX_LABEL_CHARS)
    project_id: str | None = Field(default=None, max_length=PROJECT_ID_MAX_CHARS,
                                      description="A brain project id.")
    project_name: str | None = Field(default=None, max_length=MAX_NAME_CHARS,
                                     description="A personal project, made on demand.")


class EventRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", **CAMEL)
    event_type: str = Field(min_length=1, max_length=b.IDENTIFIER_MAX_CHARS,
                            description="e.g. file_edit, test_run, decision.")
    payload: dict[str, Any] = Field(default_factory=dict, description=f"Any JSON object, at most {b.PAYLOAD_MAX_BYTES} "
                                    f"bytes, nested at most {JSON_DEPTH_MAX} levels deep.")


class EventAnswer(BaseModel):
    model_config = CAMEL
    event_id: str | None
    accepted: bool
    reason: str | None = Field(description="Why it was not accepted (a closed or full session).")


class OutcomeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", **CAMEL)
    success: StrictBool  # "yes" or 1 is refused, as MCP refuses it, not read as true
    user_feedback: str | None = Field(default=None, description="up or down.")
    knowledge_used: list[str] = Field(default_factory=list, max_length=b.USED_IDS_MAX)
    learnings: list[Any] | None = Field(default=None, max_length=50,
                                        description="Up to five are kept: {trigger, rule, rationale, type, source, "
                                                    "confidence}; one that is not such an object is dropped and "
                                                    "counted, never blocking the close (as over MCP).")
    resolved_action_item_ids: list[str] | None = Field(default=None, max_length=b.RESOLVED_IDS_MAX)
    summary: str | None = Field(default=None, max_length=b.MAX_SUMMARY_CHARS)


class TeachRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", **CAMEL)
    rule: str = Field(min_length=1, max_length=b.MAX_RULE_CHARS)
    trigger: str = Field(default="", max_length=b.MAX_TRIGGER_CHARS)
    rationale: str = Field(default="", max_length=b.MAX_RULE_CHARS)
    kind: str = Field(default="heuristic", description=f"One of {', '.join(KNOWLEDGE_KINDS)}.")
    tags: list[str] = Field(default_factory=list, max_length=b.MAX_TAGS)
    project_id: str | None = Field(default=None, max_length=PROJECT_ID_MAX_CHARS)
    supersedes: str | None = Field(default=None, max_length=100)


class TaughtAnswer(BaseModel):
    model_config = CAMEL
    knowledge: KnowledgeModel  # type: ignore[valid-type]
    created: bool
    same_meaning: float | None = Field(None, description="Set when the rule duplicated one of yours in meaning: "
                                                         "its similarity; that rule was reinforced instead")


@router.get("/brain-projects", response_model=ProjectPage, responses=ERRORS,
            summary="The projects sessions and knowledge can go to: your personal ones, then shared ones")
def brain_projects(caller: Caller, svc: Services, request: Request, response: Response, limit: Limit = 20,
                   offset: Offset = 0) -> Any:
    items, more = window(svc.brain.projects(caller), offset, limit)
    return page(request, response, items, offset, limit, has_more=more)


@router.delete("/brain-projects/{project_id:path}", response_model=record_model(BrainProject),
               responses={**ERRORS, **responses(409)},
               summary="Delete one of your personal projects that holds nothing (409 when it holds sessions, "
                       "knowledge or skill proposals: those are never lost)")
def delete_brain_project(caller: Caller, svc: Services, project_id: str) -> Any:
    return svc.brain.delete_project(caller, project_id)


@router.post("/sessions", status_code=201, response_model=StartedModel, responses={**ERRORS, **responses(409)},
             summary="Open a coding session (with the knowledge relevant to its prompt)")
def start_session(caller: Caller, svc: Services, body: SessionRequest, request: Request, response: Response,
                  idempotency_key: IdempotencyKey = None) -> Any:
    def create() -> Answer:
        started = svc.brain.start_session(caller, client_type=body.client_type, prompt=body.prompt,
                                          framework=body.framework, project_id=body.project_id,
                                          project_name=body.project_name, language=body.language)
        return Answer(201, dump(StartedModel, started),
                      request.url_for("session_events", session_id=started.session.id).path)

    def permit() -> None:
        svc.brain.may_open(caller, project_id=body.project_id, project_name=body.project_name)

    return create_once(svc, caller, request, response, body.model_dump(), idempotency_key, permit, create)


@router.get("/sessions", response_model=SessionPage, responses=ERRORS, summary="Your recent sessions, newest first")
def sessions(caller: Caller, svc: Services, request: Request, response: Response, limit: Limit = 20,
             offset: Offset = 0) -> Any:
    found = svc.brain.recent_sessions(caller, limit + 1, offset)  # one more: whether older follow
    items, more = found[:limit], len(found) > limit
    return page(request, response, items, offset, limit, has_more=more)


@router.get("/sessions/search", response_model=FoundPage, responses=ERRORS,
            summary="Your sessions sharing a word with the query, by relevance and recency")
def search_sessions(caller: Caller, svc: Services, request: Request, response: Response,
                    q: Annotated[str, Query(min_length=1, max_length=limits.QUERY_MAX_CHARS)],
                    days: Annotated[int | None, Query(ge=1, le=b.SEARCH_DAYS_MAX,
                                                      description="Only the last days.")] = None,
                    limit: Annotated[int, Query(ge=1, le=b.SEARCH_LIMIT_MAX)] = b.SEARCH_LIMIT_DEFAULT) -> Any:
    with spelled(query="q"):
        found = svc.brain.search_sessions(caller, q, limit=limit, days=days)
    return {**page(request, response, found, 0, limit, has_more=False), "words_only": svc.brain.words_only(q)}


@router.get("/sessions/{session_id}/events", response_model=EventPage, responses=ERRORS,
            summary="A session of yours: its events, oldest first")
def session_events(caller: Caller, svc: Services, session_id: str, request: Request, response: Response,
                   limit: Limit = 20, offset: Offset = 0) -> Any:
    items, more = svc.brain.events(caller, session_id, limit=limit, offset=offset)
    return page(request, response, items, offset, limit, has_more=more)


@router.post("/sessions/{session_id}/events", status_code=201, response_model=EventAnswer,
             responses={**ERRORS, **responses(409),
                        200: {"description": "Not accepted: the session is closed or full (reason says)."}},
             summary="Log what happened in a session (201 with the Location of its events)")
def log_event(caller: Caller, svc: Services, session_id: str, body: EventRequest, request: Request,
              response: Response, idempotency_key: IdempotencyKey = None) -> Any:
    def create() -> Answer:
        event_id, accepted, reason = svc.brain.log_event(caller, session_id, body.event_type, body.payload)
        events = request.url_for("session_events", session_id=session_id).path
        return Answer(201 if accepted else 200, {"eventId": event_id, "accepted": accepted, "reason": reason},
                      events if accepted else None)

    def permit() -> None:
        svc.brain.may_log(caller, session_id)

    return create_once(svc, caller, request, response, body.model_dump(), idempotency_key, permit, create)


@router.post("/sessions/{session_id}/outcome", response_model=OutcomeModel, responses=ERRORS,
             summary="Close a session with its outcome: confidence moves, learnings are kept")
def report_outcome(caller: Caller, svc: Services, session_id: str, body: OutcomeRequest) -> Any:
    done = svc.brain.report_outcome(caller, session_id, success=body.success, user_feedback=body.user_feedback,
                                    knowledge_used=body.knowledge_used, learnings=body.learnings,
                                    resolved_action_item_ids=body.resolved_action_item_ids, summary=body.summary)
    return {**OutcomeModel.model_validate(done).model_dump(), "hint": _hint(done)}


@router.get("/knowledge", response_model=KnowledgePage, responses=ERRORS,
            summary="Live taught knowledge in your projects, newest first")
def knowledge(caller: Caller, svc: Services, request: Request, response: Response,
              kind: Annotated[list[str] | None, Query(max_length=len(KNOWLEDGE_KINDS),
                                                      description="Only these kinds (repeat).")] = None,
              limit: Limit = 20, offset: Offset = 0) -> Any:
    found = svc.brain.knowledge(caller, kinds=kind or (), limit=offset + limit + 1)
    items, more = window(found, offset, limit)
    return page(request, response, items, offset, limit, has_more=more)


@router.post("/knowledge", status_code=201, response_model=TaughtAnswer,
             responses={**ERRORS, **responses(409), 200: {"description": "Known already: the existing item."}},
             summary="Teach a rule: 201 with the Location of its memory, 200 when it was known already")
def teach(caller: Caller, svc: Services, body: TeachRequest, request: Request, response: Response,
          idempotency_key: IdempotencyKey = None) -> Any:
    def create() -> Answer:
        with spelled(type="kind"):
            taught = svc.brain.teach(caller, rule=body.rule, trigger=body.trigger, rationale=body.rationale,
                                     kind=body.kind, tags=body.tags, project_id=body.project_id,
                                     supersedes=body.supersedes)
        item = taught.item
        return Answer(201 if taught.created else 200,
                      {"knowledge": dump(KnowledgeModel, item), "created": taught.created,
                       "sameMeaning": round(taught.same_meaning, 3) if taught.same_meaning is not None else None},
                      request.url_for("memory", ref=item.ref).path)

    def permit() -> None:
        svc.brain.may_teach(caller, project_id=body.project_id)

    return create_once(svc, caller, request, response, body.model_dump(), idempotency_key, permit, create)


@router.get("/knowledge/retrieve", response_model=record_model(Retrieval), responses=ERRORS,
            summary="The best knowledge for a prompt, ranked, and the block to inject")
def retrieve(caller: Caller, svc: Services,
             prompt: Annotated[str, Query(min_length=1, max_length=b.MAX_PROMPT_CHARS)],
             limit: Annotated[int, Query(ge=1, le=b.RETRIEVE_LIMIT_MAX)] = b.RETRIEVE_LIMIT_DEFAULT,
             max_tokens: Annotated[int, Query(alias="maxTokens", ge=b.INJECTION_TOKENS_MIN,
                                              le=b.INJECTION_TOKENS_MAX)] = b.INJECTION_TOKENS_DEFAULT,
             session_id: Annotated[str | None, Query(
                 alias="sessionId", max_length=100,
                 description="Record the injection against it (a closed session records nothing: notRecorded "
                             "says so).")] = None) -> Any:
    return svc.brain.retrieve(caller, prompt, limit=limit, max_tokens=max_tokens, session_id=session_id)


@router.delete("/knowledge/{knowledge_id}", response_model=KnowledgeModel, responses=ERRORS,
               summary="Retire an item, saying why: it leaves every search")
def retire(caller: Caller, svc: Services, knowledge_id: str,
           reason: Annotated[str, Query(min_length=1, max_length=b.MAX_REASON_CHARS)]) -> Any:
    return svc.brain.retire(caller, knowledge_id, reason)


@router.get("/brain/health", response_model=record_model(LoopHealth), responses=ERRORS,
            summary="The loop's health: sessions closed per day, knowledge injected against used, rules captured "
                    "by source, KEA's funnel by mode, rules by stage, open action items (scope=team: everyone's, "
                    "for an admin)")
def brain_health(caller: Caller, svc: Services,
                 days: Annotated[int, Query(ge=1, le=HEALTH_DAYS_MAX, description="The last days, today "
                                                                                   "included.")] = HEALTH_DAYS_DEFAULT,
                 scope: Annotated[Literal["me", "team"], Query(description="me: yours; team: everyone's "
                                                                           "(admin scope).")] = "me") -> Any:
    return svc.brain.health(caller, days=days, team=scope == "team")
