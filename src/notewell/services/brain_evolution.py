"""Nightly evolution (``evolution.run``): knowledge nobody uses fades, and what fades below the floor retires.

Once per UTC day the job runner queues the day's run (services/daily.py, key ``evolution.run:<day>``, so a
day runs once however many servers wake). The run takes the moment it was queued for as its "now": a live
rule (every kind but action_item) neither used nor learned again for IDLE_DAYS is idle, and each run
multiplies an idle rule's confidence by DECAY_FACTOR; an idle rule then below FLOOR is retired (soft: its
memory is forgotten with the reason, by EVOLUTION_AUTHOR; each retirement audited as
``brain.evolution.retire``), at most RETIRE_MAX a night, lowest first. A person who may retire an item may
bring back one evolution retired (``restore``: live again at RESTORE_CONFIDENCE or its own, if higher;
audited ``brain.restore``); it fades again unless it is used. Action items are never decayed, retired or
counted. The run logs one line: ``op=evolution.run outcome live decayed retired factor floor idleDays durMs``.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from notewell.access.policy import sees_memory
from notewell.access.principal import Principal
from notewell.errors import InvalidArgument
from notewell.limits import NOTES_OFFSET_MAX
from notewell.log_lines import line
from notewell.records.brain import EVOLUTION_AUTHOR, Evolution, KnowledgeRecord
from notewell.records.jobs import JobRecord
from notewell.services.brain_errors import BrainNotFound, ForbiddenProject
from notewell.services.brain_scope import RETIRE, USE, ScopePart
from notewell.services.jobs import JobKind, Step
from notewell.timestamps import iso, now_iso, parse_iso

EVOLUTION = "evolution.run"
IDLE_DAYS = 30  # unused (and not learned again) this long: the rule starts to fade
DECAY_FACTOR = 0.95  # an idle rule's confidence is multiplied by this each night: a taught 1.0 falls below
FLOOR = 0.2  # the floor in 32 nights (after its 30 idle days), a mined 0.6 in 22
RESTORE_CONFIDENCE = 0.5  # a restored rule is at least this sure again (18 more idle nights to the floor)
RETIRE_MAX = 10_000  # retired per night at most (the rest next night)
RETIRED_LIST_MAX = 500
REASON = f"evolution: unused for {IDLE_DAYS}+ days, confidence below the floor {FLOOR}"

_log = logging.getLogger("notewell.evolution")


class EvolutionPart(ScopePart):
    def evolution_kind(self) -> JobKind:
        return JobKind(prepare=self.prepare_evolution, failed=lambda job, exc: _log.warning(line(
            EVOLUTION, outcome="error", live=0, decayed=0, retired=0, job=job.id, error=type(exc).__name__)))

    def prepare_evolution(self, job: JobRecord) -> Step:
        started = time.monotonic()
        at = str(job.payload.get("through", ""))
        try:
            idle_before = iso(parse_iso(at) - timedelta(days=IDLE_DAYS))
        except ValueError:
            raise ValueError(f"job {job.id}: payload 'through' must be an ISO 8601 time, not {at!r}") from None
        done: list[Evolution] = []

        def write() -> str:
            run = self.brain.evolve(idle_before, DECAY_FACTOR, FLOOR, REASON, at, RETIRE_MAX)
            for k in run.retired:
                self.audit.record_system(at, EVOLUTION_AUTHOR, "brain.evolution.retire", k.ref, {
                    "project": k.brain_project, "owner": k.owner_user_id, "confidence": round(k.confidence, 6),
                    "floor": FLOOR, "idleSince": k.last_used_at or k.created})
            done.append(run)
            return "ok"

        def after(result: str) -> None:
            run = done[0]
            _log.info(line(EVOLUTION, outcome=result, live=run.live, decayed=run.decayed, retired=len(run.retired),
                           factor=DECAY_FACTOR, floor=FLOOR, idleDays=IDLE_DAYS,
                           durMs=round((time.monotonic() - started) * 1000, 1), job=job.id))

        return Step(write, after)

    def evolution_retired(self, p: Principal, limit: int = 50, offset: int = 0) -> list[KnowledgeRecord]:
        """What evolution retired in p's scope and nobody restored, the latest first, ``limit`` of them from the
        ``offset``-th (a page reads its own rows alone: the web's /brain/skills)."""
        self.authorization.authorize(p, USE)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= RETIRED_LIST_MAX:
            raise InvalidArgument("limit", f"must be a whole number from 1 to {RETIRED_LIST_MAX}")
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= NOTES_OFFSET_MAX:
            raise InvalidArgument("offset", f"must be a whole number from 0 to {NOTES_OFFSET_MAX}")
        brain_ids, _ = self._scope_ids(p)
        return self.brain.evolution_retired(brain_ids, p.user_id, limit, offset)

    def restore(self, p: Principal, knowledge_id: str) -> KnowledgeRecord:
        """Bring back an item evolution retired, for one who may retire it (the policy's knowledge:retire)."""
        self.authorization.authorize(p, USE)
        brain_ids, _ = self._scope_ids(p)
        item = self.brain.knowledge([knowledge_id]).get(knowledge_id) if isinstance(knowledge_id, str) else None
        if item is None or item.brain_project not in brain_ids or not sees_memory(p, item.private_to):
            raise BrainNotFound(f"no knowledge {knowledge_id} you can see", remedy="list-retired")
        if not self.authorization.allowed(p, RETIRE, item):
            raise ForbiddenProject(f"only the author of {knowledge_id}, a writer of {item.brain_project} or an "
                                   "admin may restore it")
        confidence = max(item.confidence, RESTORE_CONFIDENCE)
        if item.live or not self.brain.restore(item.ref, confidence, now_iso()):
            raise InvalidArgument("knowledge_id", f"{knowledge_id} was not retired by evolution; only evolution's "
                                  "retirements are undone (teach the rule again otherwise)")
        self.audit.record(p, "brain.restore", item.ref, {"project": item.brain_project, "confidence": confidence})
        self._wake()
        return self.brain.knowledge([item.ref])[item.ref]
