"""Retrieval: the best live knowledge for a prompt and its injection, matured skills, the user's style.

Ranking is brain_scoring.rank over the fused relevance of words and meaning (services/hybrid.py,
docs/brain.md); action items are never retrieved. Only knowledge of the caller's projects is seen.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from notewell.access.principal import Principal
from notewell.errors import InvalidArgument
from notewell.records.brain import KnowledgeFilter, KnowledgeRecord
from notewell.records.memories import MemoryQuery, Narrowing
from notewell.search.engine import MAX_QUERY_CHARS
from notewell.services import brain_injection, brain_scoring
from notewell.services.brain_limits import (
    INJECTION_TOKENS_DEFAULT,
    MAX_PROMPT_CHARS,
    RETRIEVE_LIMIT_DEFAULT,
    SKILL_LIMIT_DEFAULT,
    STYLE_HARD_RULES,
    STYLE_REFLEXES,
    STYLE_SESSIONS,
    check_text,
)
from notewell.services.brain_projects import BrainProject
from notewell.services.brain_scope import USE, ScopePart
from notewell.services.hybrid import Fused, fuse, identifier
from notewell.services.memory_rank import one_word, record_text, tolerant_query_terms
from notewell.timestamps import now_iso

STYLE_LABELS = 5  # frameworks and languages on the peer card
SKILL_CANDIDATES = 500
SKILL_HITS = 200


def lookup_text(prompt: str) -> str:
    """What a prompt is looked up by: all of it up to a query's bound (MAX_QUERY_CHARS), else its beginning
    cut at a space. A session's prompt may be 8,000 characters; looking it up whole was refused, and the
    session opened without its knowledge, silently."""
    if len(prompt) <= MAX_QUERY_CHARS:
        return prompt
    head = prompt[:MAX_QUERY_CHARS]
    if prompt[MAX_QUERY_CHARS].isspace() or head[-1].isspace():  # the cut falls between words already
        return head
    words = head.rsplit(None, 1)
    return words[0] if len(words) == 2 else head


@dataclass(frozen=True)
class ScoredKnowledge:
    item: KnowledgeRecord
    score: float
    found_by: tuple[str, ...] = ()  # how a search found it: "words", "meaning" or both (empty: listed)
    similarity: float | None = None  # its cosine similarity to the query, when among the nearest in meaning

    @property
    def stage(self) -> str:
        return brain_scoring.knowledge_stage(self.item)


@dataclass(frozen=True)
class Retrieval:
    items: list[ScoredKnowledge]
    injection: brain_injection.Injection
    words_only: str | None = None  # why meaning could not be used (services/meaning.py), None when it was
    not_recorded: str | None = None  # why the injection was not recorded against the session named (it is closed)


@dataclass(frozen=True)
class UserStyle:
    peer_card: dict[str, Any]
    reflexes: list[KnowledgeRecord]


def _ranked(item: KnowledgeRecord, found: Fused[Any, Any], now: datetime) -> ScoredKnowledge:
    """``found.relevance`` already normalised to (0, 1]."""
    return ScoredKnowledge(item, round(brain_scoring.rank(found.relevance, item.confidence,
                                                          max(item.created, item.last_used_at or ""), now), 4),
                           tuple(found.matched), found.similarity)


class RetrievalPart(ScopePart):
    def _knowledge_found(self, p: Principal, text: str, brain_ids: list[str], store_ids: list[str], candidates: int,
                         field: str = "query",
                         kind: str | None = None) -> list[tuple[KnowledgeRecord, Fused[Any, Any]]]:
        """Live rules (action items never: they are matched by their for: tag, not by text) of these brain
        projects found by words or by meaning, with their fused relevance (services/hybrid.py); p's own private
        items among them (what the brain learned from p's sessions), never another person's. A rule whose meaning
        is unrelated to a text of words (hybrid.WORDS_UNRELATED) is left out, whatever word found it; a
        single word or identifier looked up is found by its words alone, as hybrid.fuse says. ``kind``: only rules
        of that kind are searched (each rule's memory carries its kind as a tag), so that the ``candidates``
        places of both searches are not taken by rules of other kinds (skills: recipes behind 200 heuristics)."""
        query = MemoryQuery(projects=store_ids, terms=tolerant_query_terms(text, field), now=now_iso(),
                            limit=candidates, path_prefix="brain", viewer=p.user_id, explain=False,
                            narrowing=Narrowing(tags=(kind,) if kind else ()))
        near = self.meaning.nearest_memories_ahead(query, text) if self.meaning is not None else list
        hits = self.store.memories.tolerant(query)  # while the nearest are found
        lookup, exact = one_word(text), identifier(text)
        nearest = near()
        similar, noise = self.meaning.beyond([h.record.ref for h in hits], nearest, text) \
            if self.meaning is not None else ({}, None)
        fused = fuse(hits, lambda h: h.relevance, lambda h: h.record, nearest, lambda r: r.ref,
                     lookup=lookup, exact=text if exact else None, text_of=lambda h: record_text(h.record),
                     similar=similar, noise=noise)
        known = self.brain.knowledge([f.item.ref for f in fused])
        allowed = set(brain_ids)
        return [(known[f.item.ref], f) for f in fused
                if f.item.ref in known and known[f.item.ref].live and known[f.item.ref].kind != "action_item"
                and known[f.item.ref].brain_project in allowed]

    def _retrieve(self, p: Principal, prompt: str, limit: int, max_tokens: int,
                  projects: list[BrainProject] | None = None, max_bytes: int | None = None,
                  least_similar: float | None = None) -> Retrieval:
        """The best ``limit`` items for ``prompt`` and their injection. ``least_similar``: an item whose similarity to
        the prompt is known and below it is left out (a session's opening injection: RELEVANT_SIMILARITY_MIN),
        unless the prompt is one word or one identifier, which its words alone answer."""
        brain_ids, store_ids = self._scope_ids(p, projects)
        text = lookup_text(prompt)
        found = self._knowledge_found(p, text, brain_ids, store_ids, max(3 * limit, 30), "prompt")
        if least_similar is not None and not (one_word(text) or identifier(text)):
            found = [(k, f) for k, f in found if f.similarity is None or f.similarity >= least_similar]
        if not found:
            return Retrieval([], brain_injection.build([], max_tokens), self.words_only(text))
        now = datetime.now(UTC)
        scored = sorted((_ranked(k, f, now) for k, f in found), key=lambda s: (-s.score, s.item.ref))[:limit]
        return Retrieval(scored, brain_injection.build([s.item for s in scored], max_tokens, max_bytes),
                         self.words_only(text))

    def retrieve(self, p: Principal, prompt: str, *, limit: int = RETRIEVE_LIMIT_DEFAULT,
                 max_tokens: int = INJECTION_TOKENS_DEFAULT, session_id: str | None = None) -> Retrieval:
        """The best live knowledge for a prompt (action items excluded) and its injection; with a session id
        of the caller's, the injected items are recorded against that session."""
        self.authorization.authorize(p, USE)
        if not prompt.strip():  # as the other tolerant tools' blank query ("" too), not a VALIDATION error
            raise InvalidArgument("prompt", "must not be empty; give what you are about to do, e.g. \"add a "
                                            "release checklist\"")
        prompt = check_text("prompt", prompt, MAX_PROMPT_CHARS, required=True)  # as a session's (every door)
        session = self._own_session(p, session_id) if session_id else None
        found = self._retrieve(p, prompt, limit, max_tokens)
        if session is None:
            return found
        if session.ended_at is None and (  # a close settles its counts: one racing this waits, or goes first
                not found.injection.ids or self.brain.record_injection(session.id, found.injection.ids, now_iso())):
            return found
        return replace(found, not_recorded=f"session {session.id} is closed: the injection was not recorded "
                                           "against it; open a new session to record one")

    def user_style(self, p: Principal) -> UserStyle:
        self.authorization.authorize(p, USE)
        brain_ids, _ = self._scope_ids(p)
        hard = self.brain.list_knowledge(KnowledgeFilter(brain_ids, ("principle", "anti_principle"), p.user_id,
                                                         limit=STYLE_HARD_RULES))
        reflexes = self.brain.list_knowledge(KnowledgeFilter(brain_ids, ("reflex",), p.user_id,
                                                             limit=STYLE_REFLEXES))
        projects = self.projects(p)
        recent = self.brain.recent_sessions(p.user_id, brain_ids, STYLE_SESSIONS)
        frameworks = list(dict.fromkeys([*(s.framework for s in recent if s.framework),
                                         *(bp.framework for bp in projects if bp.framework)]))[:STYLE_LABELS]
        languages = list(dict.fromkeys(bp.language for bp in projects if bp.language))[:STYLE_LABELS]
        card = {
            "email": p.email, "handle": p.handle,
            "hardRules": [{"id": k.ref, "kind": k.kind, "rule": k.rule, "confidence": k.confidence} for k in hard],
            "frameworks": frameworks, "languages": languages, "projects": len(projects),
            "recentSessions": len(recent),
        }
        return UserStyle(card, reflexes)

    def skills(self, p: Principal, query: str | None = None, limit: int = SKILL_LIMIT_DEFAULT) -> list[ScoredKnowledge]:
        """Recipes matured by successful use (stage knowledge or wisdom), best first: with a query, ranked as
        retrieval ranks; without (None), by confidence. A query given empty or blank is refused, as by every
        tolerant tool: it is not taken for "no query"."""
        self.authorization.authorize(p, USE)
        if query is not None and not query.strip():
            raise InvalidArgument("query", "must not be empty; give what the recipe is for, or leave query out to "
                                           "list the skills by confidence")
        brain_ids, store_ids = self._scope_ids(p)
        matured = [k for k in self.brain.list_knowledge(KnowledgeFilter(
            brain_ids, ("recipe",), viewer=p.user_id, min_successes=brain_scoring.KNOWLEDGE_MIN_SUCCESSES,
            limit=SKILL_CANDIDATES))
            if brain_scoring.knowledge_stage(k) != "seed"]
        if query is None:
            return [ScoredKnowledge(k, round(k.confidence, 4)) for k in matured[:limit]]
        found = {k.ref: f for k, f in self._knowledge_found(p, query, brain_ids, store_ids, SKILL_HITS,
                                                            kind="recipe")}
        now = datetime.now(UTC)
        scored = [_ranked(k, found[k.ref], now) for k in matured if k.ref in found]
        return sorted(scored, key=lambda s: (-s.score, s.item.ref))[:limit]
