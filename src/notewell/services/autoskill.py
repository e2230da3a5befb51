"""Autoskill (``autoskill.run``): edits to a person's recipes, proposed from their sessions, applied only when
they accept them.

A close that reports a recipe used queues one job for the session, in the close's own transaction (so a
session is read once, and none is lost), carrying each recipe's counts after that use. The job reads the
session; gone, it completes as ``skipped_session_gone``. For each live recipe of the session's owner, in its
project, that the session reported used, it proposes:

- ``add_steps`` when the session succeeded (and was not voted down): the commands its events name (an event
  payload's ``command``) that the recipe does not hold yet, at most STEPS_MAX, appended as "Then: a; b.";
- ``demote`` (to a heuristic, out of the skills) when the session failed and the recipe has failed
  DEMOTE_FAILURES times or more (this time included), more often than it worked;
- ``merge`` of another live recipe of the owner in the project with the same trigger: "Also: <its rule>"
  appended, the other retired.

A proposal is made once (its key), and nothing changes until its owner decides: ``accept`` writes the edit as
a new version superseding the recipe (its confidence and tags kept, tagged ``autoskill``; the merged one
retired) and ``reject`` only records the no; both audited (``brain.autoskill.accept|reject``). Log line, as the
seed's: ``op=autoskill.run outcome=ok|error|skipped_session_gone proposals=<new>``.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence

from notewell.access.principal import Principal
from notewell.errors import Conflict, InvalidArgument
from notewell.limits import NOTES_OFFSET_MAX
from notewell.log_lines import line
from notewell.records.brain import (
    KNOWLEDGE_KINDS,
    PROPOSAL_STATES,
    KnowledgeFilter,
    KnowledgeRecord,
    ProposalInput,
    ProposalRecord,
    SessionRecord,
)
from notewell.records.jobs import JobRecord, NewJob
from notewell.services.brain_errors import BrainNotFound, ForbiddenProject
from notewell.services.brain_knowledge import KnowledgePart
from notewell.services.brain_learnings import rule_key
from notewell.services.brain_limits import EVENTS_PER_SESSION_MAX, MAX_RULE_CHARS, USED_IDS_MAX
from notewell.services.brain_scope import OWN_KNOWLEDGE, USE
from notewell.services.jobs import JobKind, Step
from notewell.services.kea import SESSION_GONE
from notewell.timestamps import now_iso

AUTOSKILL = "autoskill.run"
STEPS_MAX = 5
STEP_CHARS_MAX = 200
DEMOTE_FAILURES = 3
MERGE_CANDIDATES = 200  # the owner's recipes in the project compared for a shared trigger
LIST_MAX = 500
AUTOSKILL_TAG = "autoskill"

_log = logging.getLogger("notewell.autoskill")


def _key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def new_steps(recipe: str, commands: Sequence[str]) -> list[str]:
    """The commands (in order, each once) that ``recipe`` does not name yet, at most STEPS_MAX."""
    held = recipe.casefold()
    steps: list[str] = []
    for command in commands:
        step = " ".join(command.split())[:STEP_CHARS_MAX]
        if step and step.casefold() not in held and step not in steps:
            steps.append(step)
    return steps[:STEPS_MAX]


def _counts(used: object) -> dict[str, tuple[int, int]]:
    """The job payload's recipes: ref -> (successes, failures) after the session's use (a malformed one left out)."""
    found: dict[str, tuple[int, int]] = {}
    for entry in used if isinstance(used, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("ref"), str):
            wins, losses = entry.get("successes"), entry.get("failures")
            if isinstance(wins, int) and isinstance(losses, int):
                found[entry["ref"]] = (wins, losses)
    return dict(list(found.items())[:USED_IDS_MAX])


class AutoskillPart(KnowledgePart):
    def autoskill_kind(self) -> JobKind:
        return JobKind(prepare=self.prepare_autoskill, failed=lambda job, exc: _log.warning(line(
            AUTOSKILL, outcome="error", proposals=0, job=job.id, error=type(exc).__name__)))

    def autoskill_job(self, session: SessionRecord, used: Sequence[KnowledgeRecord], good: bool) -> NewJob | None:
        """The job a close queues with itself when it reports recipes used: each with its counts after this
        use, so the job needs nothing the close writes after it (the counts are updated just after)."""
        recipes = [{"ref": k.ref, "successes": k.success_count + int(good), "failures": k.failure_count + int(not good)}
                   for k in used if k.kind == "recipe"]
        return NewJob(AUTOSKILL, {"sessionId": session.id, "used": recipes}) if recipes else None

    def prepare_autoskill(self, job: JobRecord) -> Step:
        session = self.brain.session(str(job.payload.get("sessionId", "")))
        owner = self.store.identity.user(session.user_id) if session is not None else None
        if session is None or owner is None:
            return Step(write=lambda: SESSION_GONE, after=lambda _r: _log.info(line(
                AUTOSKILL, outcome=SESSION_GONE, proposals=0, job=job.id)))
        counts = _counts(job.payload.get("used"))
        recipes = [k for k in self.brain.knowledge(list(counts)).values() if k.live and k.kind == "recipe"
                   and k.owner_user_id == owner.id and k.brain_project == session.brain_project]
        proposals = [q for r in sorted(recipes, key=lambda k: k.ref)
                     for q in self._proposals(session, r, counts[r.ref])]
        made: list[int] = []

        def write() -> str:
            made.append(sum(self.brain.add_proposal(q) for q in proposals))
            return "ok"

        def after(result: str) -> None:
            _log.info(line(AUTOSKILL, outcome=result, proposals=made[0] if made else 0, job=job.id,
                           session=session.id[:12]))

        return Step(write, after)

    def _proposals(self, session: SessionRecord, recipe: KnowledgeRecord,
                   counts: tuple[int, int]) -> list[ProposalInput]:
        """What to propose for ``recipe``, used in ``session``; ``counts``: its (successes, failures) after it."""
        now = now_iso()

        def proposal(kind: str, new_kind: str, new_rule: str, reason: str, other: str | None = None) -> ProposalInput:
            # a pair merges once, whichever of the two a session used; another edit once per its new text
            key = _key(kind, *sorted((recipe.ref, other))) if other else _key(kind, recipe.ref, new_kind, new_rule)
            return ProposalInput(key, kind, recipe.ref, other, recipe.owner_user_id, recipe.brain_project,
                                 session.id, new_kind, new_rule, reason, now)

        found: list[ProposalInput] = []
        if session.success and session.user_feedback != "down":
            commands = [str(e.payload["command"]) for e in self.brain.events(session.id, EVENTS_PER_SESSION_MAX)
                        if isinstance(e.payload.get("command"), str)]
            steps = new_steps(recipe.rule, commands)
            while steps and len(f"{_ended(recipe.rule)} Then: {'; '.join(steps)}.") > MAX_RULE_CHARS:
                steps.pop()
            if steps:
                found.append(proposal("add_steps", "recipe", f"{_ended(recipe.rule)} Then: {'; '.join(steps)}.",
                                      f"session {session.id} succeeded with these steps"))
        elif counts[1] >= DEMOTE_FAILURES and counts[1] > counts[0]:
            found.append(proposal("demote", "heuristic", recipe.rule, f"failed {counts[1]} times, worked "
                                  f"{counts[0]}; the last in session {session.id}"))
        trigger = rule_key(recipe.trigger, "")
        for other in self.brain.list_knowledge(KnowledgeFilter([recipe.brain_project], ("recipe",),
                                                               recipe.owner_user_id, limit=MERGE_CANDIDATES)):
            merged = f"{_ended(recipe.rule)} Also: {other.rule}"
            if (trigger and other.ref != recipe.ref and rule_key(other.trigger, "") == trigger
                    and other.private_to == recipe.private_to  # a private recipe never folds in a team's, or back
                    and len(merged) <= MAX_RULE_CHARS):
                found.append(proposal("merge", "recipe", merged, f"{other.ref} has the same trigger", other.ref))
        return found

    def proposals(self, p: Principal, state: str | None = "open", limit: int = 50,
                  offset: int = 0) -> list[ProposalRecord]:
        """p's proposals in p's scope (every state when ``state`` is None), newest first, ``limit`` of them from the
        ``offset``-th (a page reads its own rows alone: the web's /brain/skills)."""
        self.authorization.authorize(p, USE)
        if state is not None and state not in PROPOSAL_STATES:
            raise InvalidArgument("state", f"unknown state {state!r}; use one of {', '.join(PROPOSAL_STATES)}, or all "
                                           "for every state")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIST_MAX:
            raise InvalidArgument("limit", f"must be a whole number from 1 to {LIST_MAX}")
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= NOTES_OFFSET_MAX:
            raise InvalidArgument("offset", f"must be a whole number from 0 to {NOTES_OFFSET_MAX}")
        brain_ids, _ = self._scope_ids(p)
        return self.brain.proposals(p.user_id, brain_ids, state, limit, offset)

    def decide_proposal(self, p: Principal, proposal_id: int, accept: bool) -> ProposalRecord:
        """Accept (apply the edit) or reject an open proposal of p's own recipe (the policy's knowledge:own)."""
        self.authorization.authorize(p, USE)
        found = self.brain.proposal(proposal_id)
        brain_ids, _ = self._scope_ids(p)
        if found is None or found.proposal.owner_user_id != p.user_id or found.proposal.brain_project not in brain_ids:
            raise BrainNotFound(f"no proposal {proposal_id} of yours", remedy="list-proposals")
        if found.state != "open":
            raise InvalidArgument("proposal_id", f"proposal {proposal_id} was {found.state} already")
        q = found.proposal
        item = self.brain.knowledge([q.knowledge_ref]).get(q.knowledge_ref)
        if item is None or not self.authorization.allowed(p, OWN_KNOWLEDGE, item):
            raise ForbiddenProject(f"only the author of {q.knowledge_ref} may decide proposal {proposal_id}")
        result = self._apply(p, found, item) if accept else None
        state = "accepted" if accept else "rejected"
        self.brain.decide(proposal_id, state, p.user_id, now_iso(), result)
        self.audit.record(p, f"brain.autoskill.{'accept' if accept else 'reject'}", q.knowledge_ref,
                          {"proposal": proposal_id, "kind": q.kind, "result": result, "merged": q.other_ref})
        decided = self.brain.proposal(proposal_id)
        assert decided is not None
        return decided

    def _apply(self, p: Principal, found: ProposalRecord, item: KnowledgeRecord) -> str:
        """The accepted edit: a new version superseding the recipe (the merged one retired); its id."""
        q = found.proposal
        other = self.brain.knowledge([q.other_ref]).get(q.other_ref) if q.other_ref else None
        if not item.live or (q.other_ref and (other is None or not other.live)):
            raise Conflict(f"the recipes of proposal {found.id} changed since it was made; reject it")
        bp = self.resolve(p, item.brain_project)
        tags = [t for t in item.tags if t not in KNOWLEDGE_KINDS and t != AUTOSKILL_TAG] + [AUTOSKILL_TAG]
        private = item.private_to is not None or (other is not None and other.private_to is not None)
        new, _ = self._write(p, bp, kind=q.new_kind, trigger=item.trigger, rule=q.new_rule, rationale=item.rationale,
                             source=item.source, confidence=item.confidence, tags=tags, supersedes=item.ref,
                             private=private)  # a private recipe's new version, or one holding its text, stays so
        if other is not None:
            self.brain.retire([other.ref], p.user_id, f"merged into {new.ref} (autoskill proposal {found.id})",
                              now_iso())
        return new.ref


def _ended(rule: str) -> str:
    """The rule as a sentence, so that what is appended to it starts a new one ("push it. Then: make migrate.")."""
    kept = rule.rstrip()
    return kept if kept.endswith((".", "!", "?", ":", ";", "…")) else f"{kept}."
