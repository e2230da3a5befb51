"""Coding sessions: open one (with the knowledge relevant to its prompt), log its events, close it with its
outcome (the confidence loop and the close-capture of learnings), and find sessions again.

Sessions are their owner's alone (session:own, asked in brain_scope). A close moves the confidence of the
caller's own used items (brain_scoring.after_use) and keeps each valid learning as knowledge tagged
close_capture unless the person has that rule already.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from notewell.access.principal import Principal
from notewell.errors import InvalidArgument
from notewell.json_bounds import JSON_DEPTH_MAX, check_json_depth, json_depth
from notewell.records.brain import EventRecord, KnowledgeRecord, SessionClose, SessionRecord, payload_json
from notewell.records.jobs import JobRecord, NewJob
from notewell.services import brain_injection, brain_scoring, session_period
from notewell.services.autoskill import AutoskillPart
from notewell.services.brain_errors import BrainValidation
from notewell.services.brain_learnings import Learnings, LearningsReport
from notewell.services.brain_limits import (
    ACTION_ITEMS_MAX,
    EVENT_TYPE_DEFAULT,
    EVENTS_PAGE_MAX,
    EVENTS_PER_SESSION_MAX,
    FEEDBACK,
    IDENTIFIER_MAX_CHARS,
    INJECTION_TOKENS_DEFAULT,
    MAX_PROMPT_CHARS,
    MAX_SUMMARY_CHARS,
    PAYLOAD_MAX_BYTES,
    RELEVANT_INJECTION_BYTES,
    RELEVANT_LIMIT,
    RELEVANT_SIMILARITY_MIN,
    RESOLVED_IDS_MAX,
    SEARCH_DAYS_MAX,
    SEARCH_LIMIT_DEFAULT,
    SESSION_HALF_LIFE_DAYS,
    USED_IDS_MAX,
    check_text,
)
from notewell.services.brain_projects import BrainProject, check_label
from notewell.services.brain_retrieval import RetrievalPart, ScoredKnowledge, lookup_text
from notewell.services.brain_scope import OWN_KNOWLEDGE, USE
from notewell.services.hybrid import fuse, identifier
from notewell.services.jobs import LEASE_SECONDS, JobKind, Step, run_job, utc_now
from notewell.services.kea import EXTRACT, Funnel, KeaPart, extract_payload
from notewell.services.memory_rank import one_word, tolerant_query_terms
from notewell.timestamps import iso, now_iso, parse_iso

_IDENTIFIER = re.compile(rf"^[A-Za-z0-9_.:-]{{1,{IDENTIFIER_MAX_CHARS}}}$")


@dataclass(frozen=True)
class StartedSession:
    session: SessionRecord
    project: BrainProject
    relevant: brain_injection.Injection | None = None
    action_items: list[KnowledgeRecord] | None = None
    failures: list[str] = field(default_factory=list)  # "relevantKnowledge: <why>": fail-soft parts left out
    relevant_found: tuple[ScoredKnowledge, ...] = ()  # the injected items, each with how it was found
    words_only: str | None = None  # with a prompt: why meaning could not be used, None when it was


@dataclass(frozen=True)
class Outcome:
    session: SessionRecord
    sqs: float
    learnings: LearningsReport
    confidence_updates: int
    resolved_action_items: int | None
    hint: brain_scoring.AskBack | None  # the ask-back nudge, a key each door words
    queued: bool = False  # a kea.extract job was queued with the close


@dataclass(frozen=True)
class SessionFound:
    session: SessionRecord
    score: float
    found_by: tuple[str, ...] = ()  # how it was found: "words", "meaning" or both
    similarity: float | None = None  # its cosine similarity to the query, when among the nearest in meaning


def _recency(session: SessionRecord, now: datetime) -> float:
    return float(0.5 ** (_days_ago(session.started_at, now) / SESSION_HALF_LIFE_DAYS))


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


def _extract_job(session: SessionRecord, close: SessionClose, given: Learnings, runner: str) -> NewJob | None:
    """The kea.extract job a close queues: leased to the close itself when it carried learnings (it refines
    them at once), for the runner otherwise (mining); none when there is nothing to learn from."""
    if not (given.valid or session.prompt or session.event_count or close.summary or close.user_feedback):
        return None
    lease = iso(parse_iso(close.ended_at) + timedelta(seconds=LEASE_SECONDS)) if given.valid else None
    return NewJob(EXTRACT, extract_payload(session.id, given.valid), runner if given.valid else None, lease)


def _days_ago(at: str, now: datetime) -> float:
    try:
        when = parse_iso(at)
    except ValueError:
        return 365.0
    return max(0.0, (now - when).total_seconds() / 86400)


class SessionsPart(RetrievalPart, KeaPart, AutoskillPart):
    def start_session(self, p: Principal, *, client_type: str | None = None, prompt: str | None = None,
                      framework: str | None = None, project_id: str | None = None,
                      project_name: str | None = None, language: str | None = None) -> StartedSession:
        self.authorization.authorize(p, USE)
        clean_prompt = check_text("prompt", prompt, MAX_PROMPT_CHARS)
        client = (client_type or "unknown").strip() or "unknown"
        if not _IDENTIFIER.match(client):
            raise BrainValidation("clientType", f"must be 1-{IDENTIFIER_MAX_CHARS} letters, digits, '.', '_', ':' or "
                                                "'-', e.g. claude_code")
        fw = check_label(framework, "framework")
        seen = self.authorization.seen(p)  # the projects and p's grants, read once for this call
        projects = self.projects(p, seen)
        bp = self.resolve(p, project_id, project_name, fw, language, projects, seen)
        relevant: brain_injection.Injection | None = None
        relevant_found: tuple[ScoredKnowledge, ...] = ()
        items: list[KnowledgeRecord] | None = None
        failures: list[str] = []
        if clean_prompt:
            try:
                found = self._retrieve(p, clean_prompt, RELEVANT_LIMIT, INJECTION_TOKENS_DEFAULT, projects,
                                       RELEVANT_INJECTION_BYTES, RELEVANT_SIMILARITY_MIN)
                relevant = found.injection if found.injection.ids else None
                by_ref = {scored.item.ref: scored for scored in found.items}
                relevant_found = tuple(by_ref[ref] for ref in found.injection.ids if ref in by_ref)
            except Exception as exc:  # fail soft: opening a session never blocks on retrieval
                failures.append(f"relevantKnowledge: {exc}")
        session = SessionRecord(id=f"ses_{secrets.token_hex(10)}", user_id=p.user_id, token_id=p.token_id,
                                brain_project=bp.id, client_type=client, prompt=clean_prompt, framework=fw,
                                started_at=now_iso())
        self.brain.add_session(session, relevant.ids if relevant else ())
        self._wake()
        try:
            open_items = self.brain.open_action_items(bp.id, f"for:{p.email.strip().lower()}", ACTION_ITEMS_MAX)
            items = open_items or None
        except Exception as exc:
            failures.append(f"openActionItems: {exc}")
        return StartedSession(session, bp, relevant, items, failures, relevant_found,
                              self.words_only(lookup_text(clean_prompt)) if clean_prompt else None)

    def log_event(self, p: Principal, session_id: str, event_type: str | None,
                  payload: dict[str, Any] | None = None) -> tuple[str | None, bool, str | None]:
        """(event id, accepted, why not): a closed or full session does not accept events. No type (None) is
        EVENT_TYPE_DEFAULT; an empty one is refused as any other that is no identifier."""
        self.authorization.authorize(p, USE)
        session = self._own_session(p, session_id)
        event_type = EVENT_TYPE_DEFAULT if event_type is None else event_type
        if not _IDENTIFIER.match(event_type or ""):
            raise BrainValidation("eventType", f"must be 1-{IDENTIFIER_MAX_CHARS} letters, digits, '.', '_', ':' or "
                                               "'-', e.g. file_edit")
        body = payload or {}
        check_json_depth("payload", body)
        try:
            encoded = payload_json(body)
        except ValueError:
            raise BrainValidation("payload", "holds a number JSON cannot carry (NaN, or one too large such as 1e400, "
                                             "read as infinity); send it as a string") from None
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
                       knowledge_used: Sequence[str] = (), learnings: Sequence[object] | None = None,
                       resolved_action_item_ids: Sequence[str] | None = None,
                       summary: str | None = None) -> Outcome:
        """Close a session; ``learnings`` are the raw JSON objects a door was given (Learnings.parse reads them)."""
        self.authorization.authorize(p, USE)
        session = self._own_session(p, session_id)
        clean_summary = self._check_close(session, user_feedback, knowledge_used, resolved_action_item_ids,
                                          summary)
        given = Learnings.parse(learnings)
        now = now_iso()
        injected = set(self.brain.applications(session.id, "injected"))
        used = {ref: k for ref, k in self.brain.knowledge(list(dict.fromkeys(knowledge_used))).items()
                if k.live and k.kind != "action_item"}
        # the confidence loop moves the caller's own items only; reuse counts every injected item reported used
        owned = {ref: k for ref, k in used.items() if self.authorization.allowed(p, OWN_KNOWLEDGE, k)}
        sqs = brain_scoring.session_quality(success, user_feedback, len(injected), len(injected & set(used)),
                                            len(given.valid))
        texts = ["success" if success else "failure", user_feedback or "", clean_summary or "",
                 *(learning.text for learning in given.valid)]
        close = SessionClose(success=success, user_feedback=user_feedback, sqs=sqs, summary=clean_summary,
                             ended_at=now)
        runner = f"close-{secrets.token_hex(6)}"
        good = success and user_feedback != "down"
        skill = self.autoskill_job(session, list(owned.values()), good)
        ended, job_id = self.brain.close_session(session.id, close, texts,
                                                 _extract_job(session, close, given, runner),
                                                 [skill] if skill is not None else [])
        self._wake()
        if (job_id is not None and not given.valid) or skill is not None:
            self.job_work.set()  # a mine job, or autoskill's: the runner takes it
        if not ended:
            raise BrainValidation("sessionId", f"session {session.id} was closed meanwhile; start a new session")
        for ref, item in owned.items():
            self.brain.record_use(ref, good, brain_scoring.after_use(item.confidence, good), now)
        self.brain.record_applications(session.id, list(owned), "used", now)
        report = self._capture(session, given, job_id, runner)
        resolved = None
        if resolved_action_item_ids is not None:
            resolved = self._resolve_items(p, session, resolved_action_item_ids, now)
        closed = self.brain.session(session.id) or session
        return Outcome(closed, sqs, report, len(owned), resolved,
                       brain_scoring.ask_back_hint(success, user_feedback, given.submitted > 0, report.unwritable),
                       job_id is not None)

    @staticmethod
    def _check_close(session: SessionRecord, user_feedback: str | None, knowledge_used: Sequence[str],
                     resolved_action_item_ids: Sequence[str] | None, summary: str | None) -> str | None:
        """The close's arguments checked (the session still open); the summary cleaned."""
        if user_feedback not in (None, *FEEDBACK):
            raise BrainValidation("userFeedback", "must be \"up\" or \"down\" (or left out)")
        if len(knowledge_used) > USED_IDS_MAX:
            raise BrainValidation("knowledgeUsed", f"has {len(knowledge_used)} ids; pass at most {USED_IDS_MAX}")
        if resolved_action_item_ids is not None and len(resolved_action_item_ids) > RESOLVED_IDS_MAX:
            raise BrainValidation("resolvedActionItemIds", f"has {len(resolved_action_item_ids)} ids; pass at most "
                                                           f"{RESOLVED_IDS_MAX}")
        clean_summary = check_text("summary", summary, MAX_SUMMARY_CHARS) or None
        if session.ended_at is not None:
            raise BrainValidation("sessionId", f"session {session.id} was closed at {session.ended_at}; start a "
                                               "new session for new work")
        return clean_summary

    def _capture(self, session: SessionRecord, given: Learnings, job_id: int | None,
                 runner: str) -> LearningsReport:
        """Each valid learning becomes a learning_captured event; then KEA's refine runs here, as the runner of
        the job the close queued leased to it (kea.py), so the answer names what it kept. Should that run
        fail, the job is retried by the job runner and the answer names nothing captured."""
        for learning in given.valid:
            self.brain.add_event(EventRecord(id=f"evt_{secrets.token_hex(10)}", session_id=session.id,
                                             event_type="learning_captured", payload=learning.payload(),
                                             at=now_iso()),
                                 f"learning_captured {learning.text}")
        funnels: list[Funnel] = []
        job = self.store.jobs.get(job_id) if job_id is not None and given.valid else None
        if job is not None:

            def prepare(j: JobRecord) -> Step:
                step, funnel = self.prepare_extract(j)
                funnels.extend([funnel] if funnel is not None else [])
                return step

            if run_job(self.store, {EXTRACT: JobKind(prepare, self.kea_kind().failed)}, job, runner, utc_now) != "ok":
                funnels.clear()
        done = funnels[0] if funnels else None
        return LearningsReport(submitted=given.submitted, kept=len(given.valid), dropped=given.dropped,
                               truncated=given.truncated, captured=done.captured if done else [],
                               deduplicated=done.duplicates if done else 0,
                               reinforced=done.reinforced if done else [],
                               rejected=len(given.valid) - done.passed if done else 0,
                               unwritable=done.unwritable if done else 0)

    def search_sessions(self, p: Principal, query: str, *, limit: int = SEARCH_LIMIT_DEFAULT,
                        days: int | None = None) -> list[SessionFound]:
        """The caller's sessions whose prompt, events, outcome or learnings share a word (stem or prefix)
        with the query, or whose prompt and summary are close to it in meaning: score = 0.6 x relevance (of
        words and meaning fused, services/hybrid.py) + 0.4 x recency (half-life 7 days). A period the query
        names ("last week") is its window unless ``days`` gives one; a query that asks only when ("what did I do
        last week?") is answered with the window's sessions, newest first (services/session_period.py)."""
        self.authorization.authorize(p, USE)
        terms = tolerant_query_terms(query)  # refuses a query of no words, or too long, whatever it asks
        question = session_period.asked(query)
        days = days or (min(question.days, SEARCH_DAYS_MAX) if question.days else None)
        brain_ids, _ = self._scope_ids(p)
        now = datetime.now(UTC)
        since = iso(now - timedelta(days=days)) if days else None
        if not question.topical:
            return [SessionFound(s, round(0.4 * _recency(s, now), 4))
                    for s in self.brain.recent_sessions(p.user_id, brain_ids, limit, since)]
        if question.topic != query:
            query, terms = question.topic, tolerant_query_terms(question.topic)
        candidates = max(3 * limit, 30)
        hits = self.brain.search_sessions(p.user_id, brain_ids, terms, since, candidates)
        near = (self.meaning.nearest_sessions(p.user_id, brain_ids, since, query, candidates)
                if self.meaning is not None else [])
        noise = self.meaning.noise(query) if self.meaning is not None and near else None
        fused = fuse(hits, lambda h: h.relevance, lambda h: h.session, near, lambda s: s.id, lookup=one_word(query),
                     exact=query if identifier(query) else None, noise=noise)  # words: in its text or its events
        scored = [SessionFound(f.item, round(0.6 * f.relevance + 0.4 * _recency(f.item, now), 4), tuple(f.matched),
                               f.similarity) for f in fused]
        return sorted(scored, key=lambda s: (-s.score, s.session.started_at), reverse=False)[:limit]

    def recent_sessions(self, p: Principal, limit: int = 10, offset: int = 0) -> list[SessionRecord]:
        """The caller's sessions, newest first, ``limit`` of them from the ``offset``-th (a page asked for deep
        reads only its own rows, never those before it)."""
        self.authorization.authorize(p, USE)
        brain_ids, _ = self._scope_ids(p)
        return self.brain.recent_sessions(p.user_id, brain_ids, limit, offset=offset)

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
