"""KEA, the knowledge extraction of the brain's learning loop: one ``kea.extract`` job per closed session.

The close queues the job in its own transaction (brain_sessions). The job reads the session; gone (deleted
between the close and the run) it completes as ``skipped_session_gone``, never retried. Otherwise, as the
seed's: *refine* when the close carried learnings (the extractor judges each for durability and specificity,
its confidence clamped to at most 0.95; kept as knowledge tagged ``close_capture``), *mine* otherwise (the
extractor's candidate rules from the prompt, events, outcome, vote and summary; kept tagged ``mined``). Then
the quality filter (kea_filter) and the dedup every captured rule goes through: the person's same rule in the
project (trigger and rule compared word by word) is counted, not copied; a rule of the same meaning
(DEDUP_SIMILARITY, when meaning is available) reinforces the existing one. Rules are written as the session's
owner, through the knowledge service, if the policy lets that person write the project (a deactivated person's
sessions are read, and nothing is written).

The writes are the job's ``write`` step: they commit with the job's completion or not at all, and so does the
run's funnel, added to its owner's count for the session's close day (store/shared/kea_funnel.py; the loop's
health shows it), so a run that fails and is retried counts once. Log lines, as the seed's table:
``op=kea.extract outcome=ok|error|skipped_session_gone items=<persisted>`` and, after each successful run,
``op=kea.funnel mode=refine|mine submitted llmFindings filterPassed persisted``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from notewell.access.authentication import user_principal
from notewell.access.principal import Principal
from notewell.log_lines import line
from notewell.records.brain import FunnelCount, KnowledgeRecord
from notewell.records.jobs import JobRecord
from notewell.services.brain_knowledge import KnowledgePart
from notewell.services.brain_learnings import Learning
from notewell.services.brain_limits import CLOSE_CAPTURE_TAG, EVENTS_PER_SESSION_MAX, MINED_TAG
from notewell.services.brain_projects import BrainProject
from notewell.services.brain_scope import WRITE
from notewell.services.jobs import JobKind, Step
from notewell.services.kea_extractor import Extractor, RuleMiner, SessionMaterial
from notewell.services.kea_filter import quality_filter

EXTRACT = "kea.extract"
SESSION_GONE = "skipped_session_gone"

_log = logging.getLogger("notewell.kea")
Plan = list[tuple[Learning, tuple[KnowledgeRecord, float] | None]]  # a rule, and the known one of its meaning


@dataclass
class Funnel:
    """One run of KEA: the seed's funnel, and what it wrote."""

    mode: str  # refine or mine
    submitted: int  # learnings the close carried (0 when mining)
    findings: int = 0  # what the extractor produced (the seed's llmFindings)
    passed: int = 0  # what the quality filter kept
    captured: list[str] = field(default_factory=list)  # knowledge created
    duplicates: int = 0  # already known: the same rule, or one of the same meaning
    reinforced: list[str] = field(default_factory=list)  # known rules of the same meaning, reinforced
    unwritable: int = 0  # passed the filter, but the owner may not write the session's project: not written

    @property
    def persisted(self) -> int:
        return len(self.captured)

    def counts(self) -> FunnelCount:
        return FunnelCount(self.submitted, self.findings, self.passed, self.persisted)


def extract_payload(session_id: str, learnings: Sequence[Learning]) -> dict[str, object]:
    """The kea.extract job's payload: the session, and the valid learnings its close carried."""
    return {"sessionId": session_id, "learnings": [learning.payload() for learning in learnings]}


class KeaPart(KnowledgePart):
    extractor: Extractor = RuleMiner()

    def kea_kind(self) -> JobKind:
        return JobKind(prepare=lambda job: self.prepare_extract(job)[0], failed=_log_error)

    def prepare_extract(self, job: JobRecord) -> tuple[Step, Funnel | None]:
        """The job's Step (and the funnel its write fills; None when the session is gone)."""
        session = self.brain.session(str(job.payload.get("sessionId", "")))
        owner = self.store.identity.user(session.user_id) if session is not None else None
        if session is None or owner is None:
            return Step(write=lambda: SESSION_GONE, after=lambda _r: _log.info(line(
                "kea.extract", outcome=SESSION_GONE, items=0, job=job.id))), None
        p = user_principal(owner)
        given = [x for x in (Learning.parse(raw) for raw in job.payload.get("learnings") or []) if x is not None]
        material = SessionMaterial(session, self.brain.events(session.id, EVENTS_PER_SESSION_MAX))
        funnel = Funnel("refine" if given else "mine", len(given))
        found = self.extractor.refine(given, material) if given else self.extractor.mine(material)
        passed = quality_filter(found)
        bp = next((b for b in self.projects(p) if b.id == session.brain_project), None) if owner.active else None
        writable = bp is not None and self.authorization.allowed(p, WRITE, bp.store_project)
        plan: Plan = []
        if bp is not None and writable:
            plan = self.plan_rules(p, bp, passed, public_only=bool(given), job=job.id)
            passed = [rule for rule, _same in plan]
        else:
            funnel.unwritable = len(passed)
        funnel.findings, funnel.passed = len(found), len(passed)
        tag = CLOSE_CAPTURE_TAG if given else MINED_TAG

        def write() -> str:
            if bp is not None:
                self._persist(p, bp, plan, [tag, f"session:{session.id}"], funnel, private=not given)
            self.brain.count_funnel(session.user_id, session.brain_project,
                                    (session.ended_at or session.started_at)[:10], funnel.mode, funnel.counts())
            return "ok"

        def after(result: str) -> None:
            _log.info(line("kea.extract", outcome=result, items=funnel.persisted, job=job.id,
                           session=session.id[:12]))
            _log.info(line("kea.funnel", mode=funnel.mode, submitted=funnel.submitted, llmFindings=funnel.findings,
                           filterPassed=funnel.passed, persisted=funnel.persisted, job=job.id))

        return Step(write=write, after=after), funnel

    def plan_rules(self, p: Principal, bp: BrainProject, rules: Sequence[Learning], *, public_only: bool,
                   job: int) -> Plan:
        """Each rule with the known rule of its meaning, if any. A rule whose look-up raises is dropped (logged,
        ``op=kea.rule outcome=error``; the funnel counts it as not passed), never failing the job: the session's
        other rules are kept, and a retry would ask the model again for the same answer."""
        plan: Plan = []
        for rule in rules:
            try:
                plan.append((rule, self._same_meaning(p, bp, rule.type, rule.trigger, rule.rule, rule.rationale,
                                                      public_only=public_only)))
            except Exception as exc:
                _log.warning(line("kea.rule", outcome="error", job=job, error=type(exc).__name__))
        return plan

    def _persist(self, p: Principal, bp: BrainProject, plan: Plan, tags: list[str], funnel: Funnel, *,
                 private: bool) -> None:
        """Each planned rule, in the job's transaction: counted when known, reinforcing the known rule of its
        meaning, or written as knowledge. ``private``: what the brain mined by itself from p's sessions (their
        prompts, errors and fixes: the sessions are p's alone) is p's alone too; learnings an agent handed over
        at a close are taught, as brain_teach_knowledge's, to every reader of the project."""
        for rule, same in plan:
            if self.brain.find_rule(p.user_id, bp.id, rule.key, public_only=not private) is not None:
                funnel.duplicates += 1
                continue
            if same is not None:
                funnel.reinforced.append(self._reinforce(p, *same).ref)
                funnel.duplicates += 1
                continue
            item, created = self._write(p, bp, kind=rule.type, trigger=rule.trigger, rule=rule.rule,
                                        rationale=rule.rationale, source=rule.source, confidence=rule.confidence,
                                        tags=tags, private=private)
            if created:
                funnel.captured.append(item.ref)
            else:
                funnel.duplicates += 1


def _log_error(job: JobRecord, exc: Exception) -> None:
    _log.warning(line("kea.extract", outcome="error", items=0, job=job.id, attempts=job.attempts,
                      error=type(exc).__name__))
