"""Taught knowledge: teach, list and retire items, and resolve action items at a session's close.

Taught knowledge is a memory (so recall finds it, and whoever may read the memory's project sees it) plus a
knowledge row with its structure and counts; writing one needs the write right on that project. Who may
retire or supersede an item, or resolve an action item, is the policy's (knowledge:retire, knowledge:own,
action-item:resolve).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from notewell.access.policy import sees_memory
from notewell.access.principal import Principal
from notewell.meaning.texts import memory_text
from notewell.records.brain import KNOWLEDGE_KINDS, KnowledgeFilter, KnowledgeInput, KnowledgeRecord, SessionRecord
from notewell.records.memories import MemoryInput, MemoryQuery, Narrowing
from notewell.services import brain_injection, brain_scoring
from notewell.services.brain_errors import BrainNotFound, BrainValidation, ForbiddenProject
from notewell.services.brain_learnings import rule_key
from notewell.services.brain_limits import (
    MAX_REASON_CHARS,
    MAX_RULE_CHARS,
    MAX_SOURCE_CHARS,
    MAX_TRIGGER_CHARS,
    check_tags,
    check_text,
)
from notewell.services.brain_projects import BrainProject
from notewell.services.brain_scope import OWN_KNOWLEDGE, RESOLVE, RETIRE, USE, ScopePart
from notewell.services.memory_checks import line_of
from notewell.services.rule_polarity import opposed
from notewell.services.text_cut import shortened
from notewell.timestamps import now_iso

MAX_TITLE_CHARS = 200
DEDUP_SIMILARITY = 0.80  # a reworded rule above it reinforces the existing one (docs/brain.md: how it was chosen)
DEDUP_CANDIDATES = 5


def _content(trigger: str, rule: str, rationale: str) -> str:
    """A knowledge item's memory text."""
    lines = [f"{brain_injection.when(trigger)}: {rule}" if trigger else rule]
    if rationale:
        lines.append(f"Why: {rationale}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Taught:
    item: KnowledgeRecord
    created: bool  # False: the item returned was there already (the same text, or the same meaning)
    same_meaning: float | None = None  # the similarity when an existing rule of the same meaning was reinforced


class KnowledgePart(ScopePart):
    def _same_meaning(self, p: Principal, bp: BrainProject, kind: str, trigger: str, rule: str,
                      rationale: str, *, public_only: bool = False) -> tuple[KnowledgeRecord, float] | None:
        """p's live rule of the same ``kind`` in ``bp`` whose meaning duplicates this one (cosine >=
        DEDUP_SIMILARITY) and which does not say the opposite (rule_polarity.py), if any. ``public_only``: for a
        rule every reader is to have, p's private rules (what the brain mined) are no duplicate of it. The
        nearest are looked for among the rules it could merge into alone: p's own of that kind (their folder,
        written by p), and for ``public_only`` none private (the query's viewer is nobody). Among the whole
        project's, teammates' rules, p's of other kinds and p's private ones saying the same took the
        DEDUP_CANDIDATES places, and were dropped only afterwards."""
        if self.meaning is None:
            return None
        text = memory_text(rule, _content(trigger, rule, rationale), ())
        query = MemoryQuery(projects=[bp.store_project], terms=[], now=now_iso(), limit=DEDUP_CANDIDATES,
                            path_prefix=f"{bp.knowledge_path}/{kind}", viewer="" if public_only else p.user_id,
                            explain=False, narrowing=Narrowing(author_user_id=p.user_id))
        near = self.meaning.nearest_memories(query, text)  # none when either rule is one the model cannot read
        known = self.brain.knowledge([n.item.ref for n in near])
        for n in near:
            k = known.get(n.item.ref)
            if (k is not None and k.live and k.kind == kind and k.kind != "action_item" and k.brain_project == bp.id
                    and k.owner_user_id == p.user_id and n.similarity >= DEDUP_SIMILARITY
                    and not opposed(rule, k.rule, trigger, k.trigger, model=self.meaning)):
                return k, n.similarity
        return None

    def _taught_already(self, p: Principal, bp: BrainProject, kind: str, trigger: str, rule: str,
                        rationale: str) -> bool:
        """Whether p has this very item live in ``bp``: it is returned as it is (created false), as without a
        model, rather than reinforced as a rewording of itself (similarity 1.0)."""
        held = self.brain.find_rule(p.user_id, bp.id, rule_key(trigger, rule), public_only=True)
        return (held is not None and held.kind == kind and held.trigger == trigger and held.rule == rule
                and held.rationale == rationale)

    def _reinforce(self, p: Principal, existing: KnowledgeRecord, similarity: float) -> KnowledgeRecord:
        """The same rule learned again: the existing one's confidence takes a success step (no use counted)."""
        self.brain.reinforce(existing.ref, brain_scoring.after_use(existing.confidence, True), now_iso())
        self.audit.record(p, "brain.reinforce", existing.ref, {"project": existing.brain_project,
                                                                "similarity": round(similarity, 3)})
        return self.brain.knowledge([existing.ref])[existing.ref]

    def _write(self, p: Principal, bp: BrainProject, *, kind: str, trigger: str, rule: str, rationale: str,
               source: str, confidence: float, tags: Sequence[str], supersedes: str | None = None,
               private: bool = False) -> tuple[KnowledgeRecord, bool]:
        action = kind == "action_item"
        path = ("brain-actions" if action else f"{bp.knowledge_path}/{kind}")
        if action and bp.personal:
            path = f"brain-actions/{bp.slug}"
        elif not bp.personal:
            # each person's rules and action items in a shared project at a place of their own: the memories'
            # one-live-copy rule (same place, same text) gave a second person's item to the first (an action item
            # owned by and for the first), and the second had none
            path = f"{path}/{p.user_id}"
        content = _content(trigger, rule, rationale)
        all_tags = tuple(dict.fromkeys([kind, *tags]))
        line = " ".join(line_of(rule).split())  # a title is one line, as a memory's (memory_checks.check_line)
        title = shortened(line, MAX_TITLE_CHARS)  # at a word boundary, never inside a character
        now = now_iso()
        memory = MemoryInput(ref=f"mem_{secrets.token_hex(10)}", project=bp.store_project, author_user_id=p.user_id,
                             author_token_id=p.token_id, memory_type="durable", path=path, title=title,
                             content=content, tags=all_tags,
                             content_hash=_identity(content, all_tags if action else ()), created=now,
                             private_to=p.user_id if private else None)
        knowledge = KnowledgeInput(brain_project=bp.id, owner_user_id=p.user_id, kind=kind, trigger=trigger, rule=rule,
                                   rationale=rationale, source=source, confidence=confidence,
                                   rule_key=rule_key(trigger, rule), created=now)
        item, created = self.brain.add_knowledge(memory, knowledge, supersedes)
        self._wake()
        if created:
            self.audit.record(p, "brain.teach", item.ref, {"project": bp.id, "kind": kind, "source": source,
                                                             "supersedes": supersedes})
        return item, created

    def may_teach(self, p: Principal, *, project_id: str | None = None) -> None:
        """Raise what ``teach`` would refuse this caller for, writing nothing (as ``may_open``)."""
        projects = self.projects(p)
        if p.bound_project is None and not project_id:
            found = self._fallback(p, projects)
            if found is None:
                self._require_home(p)  # the teach makes the Default project in the caller's home
            else:
                self._require_write(p, found)
            return
        self._require_write(p, self.resolve(p, project_id, projects=projects))

    def teach(self, p: Principal, *, rule: str, trigger: str = "", rationale: str = "", kind: str = "heuristic",
              source: str = "user_teach", tags: Sequence[str] | None = None, project_id: str | None = None,
              supersedes: str | None = None) -> Taught:
        """Teach an item (confidence 1.0). supersedes is honoured only for a live item of the caller in the
        same project; otherwise it is ignored and the item is still created. A rule (not an action item) whose
        meaning duplicates one of the caller's in the project reinforces that one instead (Taught.same_meaning)."""
        self.authorization.authorize(p, USE)
        clean_rule = check_text("rule", rule, MAX_RULE_CHARS, required=True)
        clean_trigger = check_text("trigger", trigger, MAX_TRIGGER_CHARS)
        clean_rationale = check_text("rationale", rationale, MAX_RULE_CHARS)
        if kind not in KNOWLEDGE_KINDS:
            raise BrainValidation("type", f"unknown type {kind!r}; use one of {', '.join(KNOWLEDGE_KINDS)}")
        clean_source = check_text("source", source, MAX_SOURCE_CHARS) or "user_teach"
        if not clean_source.isprintable():  # a label kept and shown on one line (user_teach, import, a tool's name)
            raise BrainValidation("source", "must be one line of printable characters, such as user_teach")
        clean_tags = check_tags(tags)
        if kind == "action_item":
            clean_tags = _action_tags(clean_tags, p.email)
        bp = self.resolve(p, project_id)
        self._require_write(p, bp)
        target = None
        if supersedes:
            old = self.brain.knowledge([supersedes]).get(supersedes)
            if old is not None and old.live and old.brain_project == bp.id \
                    and self.authorization.allowed(p, OWN_KNOWLEDGE, old):
                target = old.ref
        if kind != "action_item" and target is None and not self._taught_already(p, bp, kind, clean_trigger,
                                                                                  clean_rule, clean_rationale):
            same = self._same_meaning(p, bp, kind, clean_trigger, clean_rule, clean_rationale, public_only=True)
            if same is not None:
                return Taught(self._reinforce(p, *same), False, same[1])
        item, created = self._write(p, bp, kind=kind, trigger=clean_trigger, rule=clean_rule,
                                    rationale=clean_rationale, source=clean_source, confidence=1.0, tags=clean_tags,
                                    supersedes=target)
        return Taught(item, created)

    def knowledge(self, p: Principal, *, kinds: Sequence[str] = (), limit: int = 50, offset: int = 0,
                  include_action_items: bool = False) -> list[KnowledgeRecord]:
        """Live knowledge in p's scope, newest first, ``limit`` items from the ``offset``-th (for people: the CLI's
        list and export, the web's /memories)."""
        self.authorization.authorize(p, USE)
        unknown = next((k for k in kinds if k not in KNOWLEDGE_KINDS), None)
        if unknown is not None:  # (it listed nothing, as if there were no such items)
            raise BrainValidation("kind", f"unknown kind {unknown!r}; use one of {', '.join(KNOWLEDGE_KINDS)}")
        brain_ids, _ = self._scope_ids(p)
        chosen = list(kinds) or ([*KNOWLEDGE_KINDS] if include_action_items else [])
        return self.brain.list_knowledge(KnowledgeFilter(brain_ids, chosen, viewer=p.user_id, order="created",
                                                         limit=limit, offset=offset))

    def retire(self, p: Principal, knowledge_id: str, reason: str) -> KnowledgeRecord:
        """Retire an item p may write (its memory is forgotten with the reason): it leaves every search."""
        self.authorization.authorize(p, USE)
        reason = check_text("reason", reason, MAX_REASON_CHARS, required=True)
        item = self.brain.knowledge([knowledge_id]).get(knowledge_id)
        brain_ids, _ = self._scope_ids(p)
        if item is None or not item.live or item.brain_project not in brain_ids or not sees_memory(p, item.private_to):
            raise BrainNotFound(f"no live knowledge {knowledge_id} you can see; list your knowledge for its id")
        if not self.authorization.allowed(p, RETIRE, item):
            raise ForbiddenProject(f"only the author of {knowledge_id}, a writer of {item.brain_project} or an "
                                   "admin may retire it")
        self.brain.retire([item.ref], p.user_id, reason, now_iso())
        self.audit.record(p, "brain.retire", item.ref, {"project": item.brain_project, "reason": reason})
        return self.brain.knowledge([item.ref])[item.ref]

    def _resolve_items(self, p: Principal, session: SessionRecord, ids: Sequence[str], now: str) -> int:
        """Retire the ids that are live action items of the session's project which p may resolve (the
        policy's action-item:resolve: their author, an assignee or a writer). Anything else is ignored."""
        found = self.brain.knowledge([i for i in dict.fromkeys(ids) if isinstance(i, str)])
        retire = [ref for ref, k in found.items()
                  if k.live and k.kind == "action_item" and k.brain_project == session.brain_project
                  and self.authorization.allowed(p, RESOLVE, k)]
        return self.brain.retire(retire, p.user_id, f"resolved at the close of {session.id}", now) if retire else 0


def _action_tags(tags: list[str], email: str) -> list[str]:
    """An action item's tags: action-item unless it is an open question, and for:<the teacher> unless assigned. An
    assignee's tag is kept in lower case, whatever case it is typed in (``For:Bob@Example.com`` too): the sessions
    find a person's items by ``for:<their email, lower-case>``."""
    if not any(t in ("action-item", "open-question") for t in tags):
        tags.insert(0, "action-item")
    assigned = list(dict.fromkeys(t.lower() if t[:4].lower() == "for:" else t for t in tags))
    if not any(t.startswith("for:") for t in assigned):
        assigned.append(f"for:{email.strip().lower()}")
    return assigned


def _identity(content: str, tags: Sequence[str]) -> str:
    """What the store's one-live-copy rule tells two items apart by: the sha256 of the content, and of an action
    item's tags with it (its assignees, blocker, open-question), so that one person's same words for bob and for
    carol are two to-dos, where the second was answered the first (created false) and carol's never written. The
    tags are those the item is stored with (its type among them once), so its type given among them too is the
    same item, not a second live copy of it."""
    told = "\n".join([content, *sorted(set(tags))])
    return hashlib.sha256(told.encode("utf-8")).hexdigest()
