"""The External Brain: coding sessions, taught knowledge and the confidence loop (docs/brain.md).

Every method takes a Principal and needs the ``sessions`` scope. Projects: a user-scoped token works in
the caller's personal projects (under their home) and the ordinary projects they see; a project-scoped
token in its project only. Sessions are their owner's alone: another person's session id is NOT_FOUND.
Who may do what is the policy's (session:own, brain-project:create, knowledge:retire, knowledge:own,
action-item:resolve): this service asks Authorization and words the refusal in the seed's codes.
Taught knowledge is a memory (so recall finds it, and whoever may read the memory's project sees it)
plus a knowledge row with its structure and counts; writing one needs the write right on that project.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from notewell.access.audit import AuditTrail
from notewell.access.authorization import Authorization
from notewell.access.policy import Action
from notewell.access.principal import Principal
from notewell.errors import InvalidArgument
from notewell.json_bounds import JSON_DEPTH_MAX, check_json_depth, json_depth
from notewell.records.brain import (
    KNOWLEDGE_KINDS,
    EventRecord,
    KnowledgeFilter,
    KnowledgeInput,
    KnowledgeRecord,
    SessionClose,
    SessionRecord,
    payload_json,
)
from notewell.records.memories import MemoryInput, MemoryQuery
from notewell.services import brain_injection, brain_scoring
from notewell.services.brain_errors import BrainNotFound, BrainValidation, ForbiddenProject
from notewell.services.brain_projects import (
    DEFAULT_NAME,
    BrainProject,
    check_label,
    check_name,
    ensure_named,
    ordinary,
    personal,
)
from notewell.services.memory import MAX_TAG_CHARS
from notewell.services.memory_rank import query_terms, tolerant_terms
from notewell.store.base import Store
from notewell.timestamps import iso, now_iso, parse_iso

USE: Action = "sessions:use"
WRITE: Action = "sessions:write"
OWN_SESSION: Action = "session:own"
CREATE_PROJECT: Action = "brain-project:create"
RETIRE: Action = "knowledge:retire"
OWN_KNOWLEDGE: Action = "knowledge:own"
RESOLVE: Action = "action-item:resolve"
RELEVANT_LIMIT = 5
RETRIEVE_LIMIT_DEFAULT = 10
RETRIEVE_LIMIT_MAX = 50
INJECTION_TOKENS_DEFAULT = 1200
INJECTION_TOKENS_MIN = 100
INJECTION_TOKENS_MAX = 8000
ACTION_ITEMS_MAX = 10
LEARNINGS_MAX = 5
RESOLVED_IDS_MAX = 50
USED_IDS_MAX = 100
EVENTS_PER_SESSION_MAX = 1000
EVENTS_PAGE_MAX = 100  # events per page (REST, the web page, the CLI's export pages through them all)
PAYLOAD_MAX_BYTES = 16_384
MAX_PROMPT_CHARS = 8000
MAX_RULE_CHARS = 2000
MAX_TRIGGER_CHARS = 500
MAX_SUMMARY_CHARS = 4000
MAX_TAGS = 20
SEARCH_LIMIT_DEFAULT = 10
SEARCH_LIMIT_MAX = 50
SESSION_HALF_LIFE_DAYS = 7.0
SKILL_LIMIT_DEFAULT = 5
SKILL_LIMIT_MAX = 20
FEEDBACK = ("up", "down")
LEARNING_KINDS = ("reflex", "recipe", "heuristic", "principle", "anti_principle")
LEARNING_SOURCES = ("user_correction", "decision", "discovery")
CLOSE_CAPTURE_TAG = "close_capture"
_EVENT_TYPE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_CLIENT_TYPE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


# --- results ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoredKnowledge:
    item: KnowledgeRecord
    score: float

    @property
    def stage(self) -> str:
        return brain_scoring.stage(self.item.success_count, self.item.failure_count, self.item.confidence)


@dataclass(frozen=True)
class Retrieval:
    items: list[ScoredKnowledge]
    injection: brain_injection.Injection


@dataclass(frozen=True)
class StartedSession:
    session: SessionRecord
    project: BrainProject
    relevant: brain_injection.Injection | None = None
    action_items: list[KnowledgeRecord] | None = None
    failures: list[str] = field(default_factory=list)  # "relevantKnowledge: <why>": fail-soft parts left out


@dataclass(frozen=True)
class LearningsReport:
    submitted: int
    kept: int  # valid among the first five
    dropped: int  # invalid among the first five
    truncated: int  # beyond the first five
    captured: list[str]  # knowledge ids created
    deduplicated: int  # valid but already known


@dataclass(frozen=True)
class Outcome:
    session: SessionRecord
    sqs: float
    learnings: LearningsReport
    confidence_updates: int
    resolved_action_items: int | None
    hint: str | None


@dataclass(frozen=True)
class SessionFound:
    session: SessionRecord
    score: float


@dataclass(frozen=True)
class UserStyle:
    peer_card: dict[str, Any]
    reflexes: list[KnowledgeRecord]


def _check_text(field_name: str, value: object, maximum: int, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise BrainValidation(field_name, "must be a string")
    cleaned = value.strip()
    if required and not cleaned:
        raise BrainValidation(field_name, "must not be empty")
    if len(cleaned) > maximum:
        raise BrainValidation(field_name, f"is {len(cleaned)} characters; keep it to {maximum}")
    if "\x00" in cleaned:
        raise BrainValidation(field_name, "contains a NUL character (\\x00); remove it")
    return cleaned


def _check_tags(tags: Sequence[str] | None) -> list[str]:
    cleaned = list(dict.fromkeys(t.strip() for t in (tags or []) if t.strip()))
    if len(cleaned) > MAX_TAGS:
        raise BrainValidation("tags", f"has {len(cleaned)} tags; use at most {MAX_TAGS}")
    for tag in cleaned:
        if len(tag) > MAX_TAG_CHARS or "\x00" in tag:
            raise BrainValidation("tags", f"{tag[:20]!r}… must be at most {MAX_TAG_CHARS} characters without NUL")
    return cleaned


def rule_key(trigger: str, rule: str) -> str:
    """What close-capture compares: trigger and rule, case-folded, punctuation and spacing ignored."""
    words = re.findall(r"[^\W_]+", f"{trigger} {rule}".casefold())
    return " ".join(words)


def _payload_text(value: Any) -> list[str]:
    """The words of a payload for session search: its keys and scalar values, in document order, found
    without recursion (a payload is bounded in depth, but its search text must not depend on that)."""
    texts: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                stack += [child, str(key)]  # the key's text comes first, then its value's
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif item is not None:
            texts.append(item if isinstance(item, str) else str(item))
    return texts


def _readable(event: EventRecord) -> EventRecord:
    """The event, or, for a payload stored deeper than JSON_DEPTH_MAX before that limit held, the event with a
    note in its place: no door could encode it, so the whole session would not read."""
    if json_depth(event.payload) <= JSON_DEPTH_MAX:
        return event
    return replace(event, payload={"notewell": f"this payload was nested more than {JSON_DEPTH_MAX} levels deep, "
                                                "more than any door can show; it was kept before that limit"})


def _days_ago(at: str, now: datetime) -> float:
    try:
        when = parse_iso(at)
    except ValueError:
        return 365.0
    return max(0.0, (now - when).total_seconds() / 86400)


class BrainService:
    def __init__(self, store: Store, authorization: Authorization, audit: AuditTrail) -> None:
        self.store = store
        self.brain = store.brain
        self.authorization = authorization
        self.audit = audit

    # --- projects -------------------------------------------------------------------------------------

    def projects(self, p: Principal) -> list[BrainProject]:
        """Owned first (personal projects, oldest first), then the ordinary projects p sees (by id);
        a project-scoped token: its project only."""
        self.authorization.authorize(p, USE)
        if p.bound_project is not None:
            return [ordinary(self.authorization.authorize(p, USE, p.bound_project), p)]
        own = [personal(r, p) for r in self.brain.personal_projects(p.user_id)]
        if not self.authorization.allowed(p, USE, p.home_project):
            own = []
        shared = [ordinary(project, p) for project in self.authorization.projects(p, USE) if project.kind == "ordinary"]
        return own + shared

    def active_project(self, p: Principal) -> tuple[BrainProject, str] | None:
        """Where a session would go now: (project, "token_scope" | "first_project_fallback"), None when none."""
        projects = self.projects(p)
        if not projects:
            return None
        return projects[0], "token_scope" if p.bound_project is not None else "first_project_fallback"

    def create_project(self, p: Principal, name: str, framework: str | None = None,
                       language: str | None = None) -> tuple[BrainProject, bool]:
        self.authorization.authorize(p, USE)
        self._require_home(p)
        clean = check_name(name)
        fw, lang = check_label(framework, "framework"), check_label(language, "language")
        record, created = ensure_named(self.brain, p, clean, fw, lang)
        if created:
            self.audit.record(p, "brain.project.create", record.id, {"name": record.name})
        return personal(record, p), created

    def _require_home(self, p: Principal) -> None:
        why = self.authorization.refusal(p, CREATE_PROJECT, p.home_project)
        if why == "bound":
            raise ForbiddenProject(f"this token is bound to {p.bound_project}: the token IS the project. Use a "
                                   "user-scoped token to create projects")
        if why is not None:
            raise ForbiddenProject("personal projects live in your home, which this caller has none of; act as "
                                   "a user", remedy="user-scoped")

    def _project(self, p: Principal, project_id: str, projects: list[BrainProject] | None = None) -> BrainProject:
        found = next((bp for bp in (self.projects(p) if projects is None else projects) if bp.id == project_id), None)
        if found is None:
            if p.bound_project is not None:
                raise ForbiddenProject(f"this token is bound to {p.bound_project}; {project_id!r} is outside it. "
                                       "Drop projectId or use a user-scoped token")
            raise ForbiddenProject(f"{project_id!r} is not a project you can use", remedy="list-brain-projects")
        return found

    def resolve(self, p: Principal, project_id: str | None = None, project_name: str | None = None,
                framework: str | None = None, language: str | None = None,
                projects: list[BrainProject] | None = None) -> BrainProject:
        """The seed's precedence: token scope, projectId, projectName (created on demand), the first project,
        a lazily created "Default". ``projects``: p's projects when the caller has them already."""
        projects = self.projects(p) if projects is None else projects
        if p.bound_project is not None:
            if project_id and project_id != p.bound_project:
                self._project(p, project_id, projects)  # raises FORBIDDEN_PROJECT
            return projects[0]
        if project_id:
            return self._project(p, project_id, projects)
        if project_name is not None:
            name = check_name(project_name, "projectName")
            self._require_home(p)
            record, _ = ensure_named(self.brain, p, name, check_label(framework, "framework"),
                                     check_label(language, "language"))
            return personal(record, p)
        if projects:
            return projects[0]
        self._require_home(p)
        record, _ = ensure_named(self.brain, p, DEFAULT_NAME, None, None)
        return personal(record, p)

    def may_open(self, p: Principal, *, project_id: str | None = None, project_name: str | None = None) -> None:
        """Raise what ``start_session`` would refuse this caller for, creating nothing: a kept answer to a
        repeated request (Idempotency-Key) is handed back only past this check."""
        projects = self.projects(p)
        if p.bound_project is not None or project_id:
            self.resolve(p, project_id, projects=projects)
        elif project_name is not None or not projects:
            self._require_home(p)  # the session's project is made in the caller's home

    def may_teach(self, p: Principal, *, project_id: str | None = None) -> None:
        """Raise what ``teach`` would refuse this caller for, writing nothing (as ``may_open``)."""
        projects = self.projects(p)
        if p.bound_project is None and not project_id and not projects:
            self._require_home(p)  # a first teach makes the Default project in the caller's home
            return
        self._require_write(p, self.resolve(p, project_id, projects=projects))

    def may_log(self, p: Principal, session_id: str) -> None:
        """Raise what ``log_event`` would refuse this caller for (the scope, a session of theirs)."""
        self.authorization.authorize(p, USE)
        self._own_session(p, session_id)

    def _require_write(self, p: Principal, bp: BrainProject) -> None:
        if not self.authorization.allowed(p, WRITE, bp.store_project):
            raise ForbiddenProject(f"you may read {bp.id} but not write to it; ask an admin for a write grant or "
                                   "teach into one of your own projects")

    # --- sessions -------------------------------------------------------------------------------------

    def start_session(self, p: Principal, *, client_type: str | None = None, prompt: str | None = None,
                      framework: str | None = None, project_id: str | None = None,
                      project_name: str | None = None, language: str | None = None) -> StartedSession:
        self.authorization.authorize(p, USE)
        clean_prompt = _check_text("prompt", prompt, MAX_PROMPT_CHARS)
        client = (client_type or "unknown").strip() or "unknown"
        if not _CLIENT_TYPE.match(client):
            raise BrainValidation("clientType", "must be 1-64 letters, digits, '.', '_', ':' or '-', e.g. claude_code")
        fw = check_label(framework, "framework")
        projects = self.projects(p)
        bp = self.resolve(p, project_id, project_name, fw, language, projects)
        relevant: brain_injection.Injection | None = None
        items: list[KnowledgeRecord] | None = None
        failures: list[str] = []
        if clean_prompt:
            try:
                found = self._retrieve(p, clean_prompt, RELEVANT_LIMIT, INJECTION_TOKENS_DEFAULT, projects)
                relevant = found.injection if found.injection.ids else None
            except Exception as exc:  # fail soft: opening a session never blocks on retrieval
                failures.append(f"relevantKnowledge: {exc}")
        session = SessionRecord(id=f"ses_{secrets.token_hex(10)}", user_id=p.user_id, token_id=p.token_id,
                                brain_project=bp.id, client_type=client, prompt=clean_prompt, framework=fw,
                                started_at=now_iso())
        self.brain.add_session(session, relevant.ids if relevant else ())
        try:
            open_items = self.brain.open_action_items(bp.id, f"for:{p.email.strip().lower()}", ACTION_ITEMS_MAX)
            items = open_items or None
        except Exception as exc:
            failures.append(f"openActionItems: {exc}")
        return StartedSession(session, bp, relevant, items, failures)

    def _own_session(self, p: Principal, session_id: object) -> SessionRecord:
        if not isinstance(session_id, str) or not session_id.strip():
            raise BrainValidation("sessionId", "must not be empty; pass the id your session was opened with",
                                  remedy="start-session")
        session = self.brain.session(session_id.strip())
        why = "hidden" if session is None else self.authorization.refusal(p, OWN_SESSION, session)
        if session is None or why == "hidden":
            raise BrainNotFound(f"no session {session_id.strip()} of yours", remedy="start-session")
        if why is not None:
            raise ForbiddenProject(f"session {session.id} belongs to {session.brain_project}, outside this token's "
                                   f"project {p.bound_project}; use a token for that project")
        return session

    def log_event(self, p: Principal, session_id: str, event_type: str,
                  payload: dict[str, Any] | None = None) -> tuple[str | None, bool, str | None]:
        """(event id, accepted, why not): a closed or full session does not accept events."""
        self.authorization.authorize(p, USE)
        session = self._own_session(p, session_id)
        if not _EVENT_TYPE.match(event_type or ""):
            raise BrainValidation("eventType", "must be 1-64 letters, digits, '.', '_', ':' or '-', e.g. "
                                               "file_edit")
        body = payload or {}
        check_json_depth("payload", body)
        encoded = payload_json(body)
        if len(encoded.encode("utf-8")) > PAYLOAD_MAX_BYTES:
            raise BrainValidation("payload", f"is {len(encoded.encode('utf-8'))} bytes as JSON; keep it to "
                                             f"{PAYLOAD_MAX_BYTES}")
        if session.ended_at is not None:
            return None, False, f"session {session.id} was closed at {session.ended_at}; start a new one"
        if session.event_count >= EVENTS_PER_SESSION_MAX:
            return None, False, f"session {session.id} has {EVENTS_PER_SESSION_MAX} events, the most it keeps"
        event = EventRecord(id=f"evt_{secrets.token_hex(10)}", session_id=session.id, event_type=event_type,
                            payload=json.loads(encoded), at=now_iso())
        self.brain.add_event(event, " ".join([event_type, *_payload_text(body)]).replace("\x00", " "))
        return event.id, True, None

    def report_outcome(self, p: Principal, session_id: str, *, success: bool, user_feedback: str | None = None,
                       knowledge_used: Sequence[str] = (), learnings: Sequence[Any] | None = None,
                       resolved_action_item_ids: Sequence[str] | None = None,
                       summary: str | None = None) -> Outcome:
        self.authorization.authorize(p, USE)
        session = self._own_session(p, session_id)
        if user_feedback not in (None, *FEEDBACK):
            raise BrainValidation("userFeedback", "must be \"up\" or \"down\" (or left out)")
        if len(knowledge_used) > USED_IDS_MAX:
            raise BrainValidation("knowledgeUsed", f"has {len(knowledge_used)} ids; pass at most {USED_IDS_MAX}")
        if resolved_action_item_ids is not None and len(resolved_action_item_ids) > RESOLVED_IDS_MAX:
            raise BrainValidation("resolvedActionItemIds", f"has {len(resolved_action_item_ids)} ids; pass at most "
                                                           f"{RESOLVED_IDS_MAX}")
        clean_summary = _check_text("summary", summary, MAX_SUMMARY_CHARS) or None
        if session.ended_at is not None:
            raise BrainValidation("sessionId", f"session {session.id} was closed at {session.ended_at}; start a "
                                               "new session for new work")
        valid, dropped = self._valid_learnings(learnings or [])
        now = now_iso()
        injected = set(self.brain.applications(session.id, "injected"))
        owned = {ref: k for ref, k in self.brain.knowledge(list(dict.fromkeys(knowledge_used))).items()
                 if k.live and k.kind != "action_item" and self.authorization.allowed(p, OWN_KNOWLEDGE, k)}
        sqs = brain_scoring.session_quality(success, user_feedback, len(injected), len(injected & set(owned)),
                                            len(valid))
        texts = ["success" if success else "failure", user_feedback or "", clean_summary or "",
                 *(f"{lr['trigger']} {lr['rule']} {lr['rationale']}" for lr in valid)]
        close = SessionClose(success=success, user_feedback=user_feedback, sqs=sqs, summary=clean_summary,
                             ended_at=now)
        if not self.brain.close_session(session.id, close, texts):
            raise BrainValidation("sessionId", f"session {session.id} was closed meanwhile; start a new session")
        good = success and user_feedback != "down"
        for ref, item in owned.items():
            self.brain.record_use(ref, good, brain_scoring.after_use(item.confidence, good), now)
        self.brain.record_applications(session.id, list(owned), "used", now)
        report = self._capture(p, session, valid, dropped, len(learnings or []))
        resolved = None
        if resolved_action_item_ids is not None:
            resolved = self._resolve_items(p, session, resolved_action_item_ids, now)
        closed = self.brain.session(session.id) or session
        return Outcome(closed, sqs, report, len(owned), resolved,
                       brain_scoring.ask_back_hint(success, user_feedback, bool(learnings)))

    def _valid_learnings(self, learnings: Sequence[Any]) -> tuple[list[dict[str, Any]], int]:
        valid: list[dict[str, Any]] = []
        dropped = 0
        for raw in list(learnings)[:LEARNINGS_MAX]:
            item = _learning(raw)
            if item is None:
                dropped += 1
            else:
                valid.append(item)
        return valid, dropped

    def _capture(self, p: Principal, session: SessionRecord, valid: list[dict[str, Any]], dropped: int,
                 submitted: int) -> LearningsReport:
        """Each valid learning: a learning_captured event, then knowledge tagged close_capture (its confidence
        already clamped to at most 0.95) unless the person already has that rule in the project."""
        captured: list[str] = []
        duplicates = 0
        bp = next((b for b in self.projects(p) if b.id == session.brain_project), None)
        for lr in valid:
            self.brain.add_event(EventRecord(id=f"evt_{secrets.token_hex(10)}", session_id=session.id,
                                             event_type="learning_captured", payload=lr, at=now_iso()),
                                 f"learning_captured {lr['trigger']} {lr['rule']} {lr['rationale']}")
            if bp is None or not self.authorization.allowed(p, WRITE, bp.store_project):
                continue
            if self.brain.find_rule(p.user_id, bp.id, rule_key(lr["trigger"], lr["rule"])) is not None:
                duplicates += 1
                continue
            item, created = self._write(p, bp, kind=lr["type"], trigger=lr["trigger"], rule=lr["rule"],
                                        rationale=lr["rationale"], source=lr["source"],
                                        confidence=lr["confidence"],
                                        tags=[CLOSE_CAPTURE_TAG, f"session:{session.id}"])
            if created:
                captured.append(item.ref)
            else:
                duplicates += 1
        return LearningsReport(submitted=submitted, kept=len(valid), dropped=dropped,
                               truncated=max(0, submitted - LEARNINGS_MAX), captured=captured,
                               deduplicated=duplicates)

    def _resolve_items(self, p: Principal, session: SessionRecord, ids: Sequence[str], now: str) -> int:
        """Retire the ids that are live action items of the session's project which p may resolve (the
        policy's action-item:resolve: their author, an assignee or a writer). Anything else is ignored."""
        found = self.brain.knowledge([i for i in dict.fromkeys(ids) if isinstance(i, str)])
        retire = [ref for ref, k in found.items()
                  if k.live and k.kind == "action_item" and k.brain_project == session.brain_project
                  and self.authorization.allowed(p, RESOLVE, k)]
        return self.brain.retire(retire, p.user_id, f"resolved at the close of {session.id}", now) if retire else 0

    # --- knowledge ------------------------------------------------------------------------------------

    def _write(self, p: Principal, bp: BrainProject, *, kind: str, trigger: str, rule: str, rationale: str,
               source: str, confidence: float, tags: Sequence[str],
               supersedes: str | None = None) -> tuple[KnowledgeRecord, bool]:
        action = kind == "action_item"
        path = ("brain-actions" if action else f"{bp.knowledge_path}/{kind}")
        if action and bp.personal:
            path = f"brain-actions/{bp.slug}"
        lines = [f"{brain_injection.when(trigger)}: {rule}" if trigger else rule]
        if rationale:
            lines.append(f"Why: {rationale}")
        content = "\n".join(lines)
        all_tags = tuple(dict.fromkeys([kind, *tags]))
        title = rule if len(rule) <= 200 else rule[:199] + "…"
        now = now_iso()
        memory = MemoryInput(ref=f"mem_{secrets.token_hex(10)}", project=bp.store_project, author_user_id=p.user_id,
                             author_token_id=p.token_id, memory_type="durable", path=path, title=title,
                             content=content, tags=all_tags,
                             content_hash=hashlib.sha256(content.encode("utf-8")).hexdigest(), created=now)
        knowledge = KnowledgeInput(brain_project=bp.id, owner_user_id=p.user_id, kind=kind, trigger=trigger, rule=rule,
                                   rationale=rationale, source=source, confidence=confidence,
                                   rule_key=rule_key(trigger, rule), created=now)
        item, created = self.brain.add_knowledge(memory, knowledge, supersedes)
        if created:
            self.audit.record(p, "brain.teach", item.ref, {"project": bp.id, "kind": kind, "source": source,
                                                             "supersedes": supersedes})
        return item, created

    def teach(self, p: Principal, *, rule: str, trigger: str = "", rationale: str = "", kind: str = "heuristic",
              source: str = "user_teach", tags: Sequence[str] | None = None, project_id: str | None = None,
              supersedes: str | None = None) -> tuple[KnowledgeRecord, bool]:
        """Teach an item (confidence 1.0). supersedes is honoured only for a live item of the caller in the
        same project; otherwise it is ignored and the item is still created."""
        self.authorization.authorize(p, USE)
        clean_rule = _check_text("rule", rule, MAX_RULE_CHARS, required=True)
        clean_trigger = _check_text("trigger", trigger, MAX_TRIGGER_CHARS)
        clean_rationale = _check_text("rationale", rationale, MAX_RULE_CHARS)
        if kind not in KNOWLEDGE_KINDS:
            raise BrainValidation("type", f"unknown type {kind!r}; use one of {', '.join(KNOWLEDGE_KINDS)}")
        clean_source = _check_text("source", source, 40) or "user_teach"
        clean_tags = _check_tags(tags)
        if kind == "action_item":
            if not any(t in ("action-item", "open-question") for t in clean_tags):
                clean_tags.insert(0, "action-item")
            if not any(t.startswith("for:") for t in clean_tags):
                clean_tags.append(f"for:{p.email.strip().lower()}")
            clean_tags = [t.lower() if t.startswith("for:") else t for t in clean_tags]
        bp = self.resolve(p, project_id)
        self._require_write(p, bp)
        target = None
        if supersedes:
            old = self.brain.knowledge([supersedes]).get(supersedes)
            if old is not None and old.live and old.brain_project == bp.id \
                    and self.authorization.allowed(p, OWN_KNOWLEDGE, old):
                target = old.ref
        return self._write(p, bp, kind=kind, trigger=clean_trigger, rule=clean_rule, rationale=clean_rationale,
                           source=clean_source, confidence=1.0, tags=clean_tags, supersedes=target)

    def _scope_ids(self, p: Principal, projects: list[BrainProject] | None = None) -> tuple[list[str], list[str]]:
        """(brain project ids, Notewell project ids) p's scope filter covers."""
        projects = self.projects(p) if projects is None else projects
        return [bp.id for bp in projects], list(dict.fromkeys(bp.store_project for bp in projects))

    def _retrieve(self, p: Principal, prompt: str, limit: int, max_tokens: int,
                  projects: list[BrainProject] | None = None) -> Retrieval:
        terms = tolerant_terms(query_terms(prompt, "prompt"))
        brain_ids, store_ids = self._scope_ids(p, projects)
        hits = self.store.memories.tolerant(MemoryQuery(projects=store_ids, terms=terms, now=now_iso(),
                                                        limit=max(3 * limit, 30), path_prefix="brain",
                                                        explain=False))
        found = self.brain.knowledge([h.record.ref for h in hits])
        allowed = set(brain_ids)
        kept = [(h, found[h.record.ref]) for h in hits
                if h.record.ref in found and found[h.record.ref].live and found[h.record.ref].kind != "action_item"
                and found[h.record.ref].brain_project in allowed]
        if not kept:
            return Retrieval([], brain_injection.build([], max_tokens))
        best = max(h.relevance for h, _ in kept)
        now = datetime.now(UTC)
        scored = sorted((ScoredKnowledge(k, round(brain_scoring.rank(h.relevance / best, k.confidence,
                                                                     max(k.created, k.last_used_at or ""), now), 4))
                         for h, k in kept), key=lambda s: (-s.score, s.item.ref))[:limit]
        return Retrieval(scored, brain_injection.build([s.item for s in scored], max_tokens))

    def retrieve(self, p: Principal, prompt: str, *, limit: int = RETRIEVE_LIMIT_DEFAULT,
                 max_tokens: int = INJECTION_TOKENS_DEFAULT, session_id: str | None = None) -> Retrieval:
        """The best live knowledge for a prompt (action items excluded) and its injection; with a session id
        of the caller's, the injected items are recorded against that session."""
        self.authorization.authorize(p, USE)
        session = self._own_session(p, session_id) if session_id else None
        found = self._retrieve(p, prompt, limit, max_tokens)
        if session is not None and found.injection.ids:
            self.brain.record_applications(session.id, found.injection.ids, "injected", now_iso())
        return found

    def user_style(self, p: Principal) -> UserStyle:
        self.authorization.authorize(p, USE)
        brain_ids, _ = self._scope_ids(p)
        hard = self.brain.list_knowledge(KnowledgeFilter(brain_ids, ("principle", "anti_principle"), p.user_id,
                                                         limit=10))
        reflexes = self.brain.list_knowledge(KnowledgeFilter(brain_ids, ("reflex",), p.user_id, limit=20))
        projects = self.projects(p)
        recent = self.brain.recent_sessions(p.user_id, brain_ids, 50)
        frameworks = list(dict.fromkeys([*(s.framework for s in recent if s.framework),
                                         *(bp.framework for bp in projects if bp.framework)]))[:5]
        languages = list(dict.fromkeys(bp.language for bp in projects if bp.language))[:5]
        card = {
            "email": p.email, "handle": p.handle,
            "hardRules": [{"id": k.ref, "kind": k.kind, "rule": k.rule, "confidence": k.confidence} for k in hard],
            "frameworks": frameworks, "languages": languages, "projects": len(projects),
            "recentSessions": len(recent),
        }
        return UserStyle(card, reflexes)

    def skills(self, p: Principal, query: str | None = None, limit: int = SKILL_LIMIT_DEFAULT) -> list[ScoredKnowledge]:
        """Recipes matured by successful use (stage knowledge or wisdom), best first: with a query, ranked as
        retrieval ranks; without, by confidence."""
        self.authorization.authorize(p, USE)
        brain_ids, store_ids = self._scope_ids(p)
        matured = [k for k in self.brain.list_knowledge(KnowledgeFilter(
            brain_ids, ("recipe",), min_successes=brain_scoring.KNOWLEDGE_MIN_SUCCESSES, limit=500))
            if brain_scoring.stage(k.success_count, k.failure_count, k.confidence) != "seed"]
        if not query:
            return [ScoredKnowledge(k, round(k.confidence, 4)) for k in matured[:limit]]
        terms = tolerant_terms(query_terms(query))
        hits = self.store.memories.tolerant(MemoryQuery(projects=store_ids, terms=terms, now=now_iso(), limit=200,
                                                        path_prefix="brain", explain=False))
        relevance = {h.record.ref: h.relevance for h in hits}
        best = max(relevance.values(), default=1.0)
        now = datetime.now(UTC)
        scored = [ScoredKnowledge(k, round(brain_scoring.rank(relevance[k.ref] / best, k.confidence,
                                                              max(k.created, k.last_used_at or ""), now), 4))
                  for k in matured if k.ref in relevance]
        return sorted(scored, key=lambda s: (-s.score, s.item.ref))[:limit]

    def search_sessions(self, p: Principal, query: str, *, limit: int = SEARCH_LIMIT_DEFAULT,
                        days: int | None = None) -> list[SessionFound]:
        """The caller's sessions whose prompt, events, outcome or learnings share a word (stem or prefix)
        with the query: score = 0.6 x relevance + 0.4 x recency (half-life 7 days)."""
        self.authorization.authorize(p, USE)
        terms = tolerant_terms(query_terms(query))
        brain_ids, _ = self._scope_ids(p)
        now = datetime.now(UTC)
        since = iso(now - timedelta(days=days)) if days else None
        hits = self.brain.search_sessions(p.user_id, brain_ids, terms, since, max(3 * limit, 30))
        if not hits:
            return []
        best = max(h.relevance for h in hits)
        scored = [SessionFound(h.session, round(0.6 * h.relevance / best + 0.4 * 0.5 ** (
            _days_ago(h.session.started_at, now) / SESSION_HALF_LIFE_DAYS), 4)) for h in hits]
        return sorted(scored, key=lambda s: (-s.score, s.session.started_at), reverse=False)[:limit]

    def recent_sessions(self, p: Principal, limit: int = 10) -> list[SessionRecord]:
        self.authorization.authorize(p, USE)
        brain_ids, _ = self._scope_ids(p)
        return self.brain.recent_sessions(p.user_id, brain_ids, limit)

    def session(self, p: Principal, session_id: str) -> SessionRecord:
        """One of the caller's sessions; another person's is NOT_FOUND, as a missing one is."""
        self.authorization.authorize(p, USE)
        return self._own_session(p, session_id)

    def events(self, p: Principal, session_id: str, *, limit: int = EVENTS_PAGE_MAX,
               offset: int = 0) -> tuple[list[EventRecord], bool]:
        """A page of one of the caller's sessions' events, oldest first, and whether more follow."""
        self.authorization.authorize(p, USE)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= EVENTS_PAGE_MAX:
            raise InvalidArgument("limit", f"must be a whole number from 1 to {EVENTS_PAGE_MAX}")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise InvalidArgument("offset", "must be a whole number, 0 or more")
        found = self.brain.events(self._own_session(p, session_id).id, limit + 1, offset)
        return [_readable(e) for e in found[:limit]], len(found) > limit

    def knowledge(self, p: Principal, *, kinds: Sequence[str] = (), limit: int = 50,
                  include_action_items: bool = False) -> list[KnowledgeRecord]:
        """Live knowledge in p's scope, newest first (for people: the CLI's list and export)."""
        self.authorization.authorize(p, USE)
        brain_ids, _ = self._scope_ids(p)
        chosen = list(kinds) or ([*KNOWLEDGE_KINDS] if include_action_items else [])
        return self.brain.list_knowledge(KnowledgeFilter(brain_ids, chosen, order="created", limit=limit))

    def retire(self, p: Principal, knowledge_id: str, reason: str) -> KnowledgeRecord:
        """Retire an item p may write (its memory is forgotten with the reason): it leaves every search."""
        self.authorization.authorize(p, USE)
        reason = _check_text("reason", reason, 500, required=True)
        item = self.brain.knowledge([knowledge_id]).get(knowledge_id)
        brain_ids, _ = self._scope_ids(p)
        if item is None or not item.live or item.brain_project not in brain_ids:
            raise BrainNotFound(f"no live knowledge {knowledge_id} you can see; list your knowledge for its id")
        if not self.authorization.allowed(p, RETIRE, item):
            raise ForbiddenProject(f"only the author of {knowledge_id}, a writer of {item.brain_project} or an "
                                   "admin may retire it")
        self.brain.retire([item.ref], p.user_id, reason, now_iso())
        self.audit.record(p, "brain.retire", item.ref, {"project": item.brain_project, "reason": reason})
        return self.brain.knowledge([item.ref])[item.ref]


def _learning(raw: Any) -> dict[str, Any] | None:
    """A learning in its stored shape, or None when it breaks a rule (it is then dropped and counted).

    As external-brain's close-capture: a field it does not know is ignored, and the confidence is clamped
    to at most 0.95 (3 is kept as 0.95); a negative one, or one that is not a number, makes the item invalid."""
    if not isinstance(raw, dict):
        return None
    trigger, rule, rationale = raw.get("trigger"), raw.get("rule"), raw.get("rationale", "")
    if not isinstance(trigger, str) or not isinstance(rule, str) or not isinstance(rationale, str):
        return None
    if not trigger.strip() or not rule.strip() or len(trigger) > MAX_TRIGGER_CHARS or len(rule) > MAX_RULE_CHARS \
            or len(rationale) > MAX_RULE_CHARS or "\x00" in trigger + rule + rationale:
        return None
    kind = raw.get("type", "heuristic")
    source = raw.get("source", "discovery")
    confidence = raw.get("confidence", 0.9)
    if kind not in LEARNING_KINDS or source not in LEARNING_SOURCES:
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not confidence >= 0.0:  # NaN too
        return None
    return {"trigger": trigger.strip(), "rule": rule.strip(), "rationale": rationale.strip(), "type": kind,
            "source": source, "confidence": min(float(confidence), brain_scoring.CAPTURE_CONFIDENCE_MAX)}
