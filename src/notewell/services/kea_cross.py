"""KEA's daily cross-session extraction (``kea.cross_extract``): rules that repeat across a person's sessions.

Once per UTC day the job runner, at its first idle moment, queues the day's job under a once-only key
(``kea.cross_extract:<day>``; services/daily.py), so servers that wake at once queue it once, and the queue
runs it once. The job reads, for each person, the sessions they closed since their last run
(store/shared/kea.py's mark; the newest CROSS_SESSIONS_MAX of them): with fewer than CROSS_MIN_SESSIONS it
skips them (``op=kea.cross.skip``, the mark unmoved, so they count next day); otherwise the extractor mines
each session, and a rule found in at least two of them, in the same project, becomes knowledge tagged
``cross`` (trigger: "working in this project"; confidence CROSS_CONFIDENCE: surer than one session's mined
rule, below a close-captured one), through the same filter, dedup and policy as every KEA rule. The writes and
every person's new mark commit with the job's completion, and so does each person's and project's funnel
(mode ``cross``: the rules found repeated, those the filter passed, those persisted; counted for the run's day).
Log lines, as the seed's: ``op=kea.cross.skip reason newSessionCount``, ``op=kea.cross_extract outcome users
totalPersisted durMs``, ``op=kea.cross.daily_done users processed skipped totalPersisted model``, and ours,
``op=kea.funnel mode=cross submitted llmFindings filterPassed persisted user`` per person and project.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from notewell.access.authentication import user_principal
from notewell.access.principal import Principal
from notewell.log_lines import line
from notewell.records.brain import SessionRecord
from notewell.records.jobs import JobRecord
from notewell.services.brain_learnings import Learning, rule_key
from notewell.services.brain_limits import CROSS_TAG, EVENTS_PER_SESSION_MAX
from notewell.services.brain_projects import BrainProject
from notewell.services.brain_scope import WRITE
from notewell.services.jobs import JobKind, Step
from notewell.services.kea import Funnel, KeaPart, Plan
from notewell.services.kea_extractor import SessionMaterial
from notewell.services.kea_filter import quality_filter

CROSS = "kea.cross_extract"
CROSS_MIN_SESSIONS = 2
CROSS_SESSIONS_MAX = 50  # a person's newest unread sessions a run reads
CROSS_USERS_MAX = 10_000
CROSS_CONFIDENCE = 0.75
CROSS_TRIGGER = "working in this project"

_log = logging.getLogger("notewell.kea")


@dataclass
class _Person:
    p: Principal
    plans: list[tuple[BrainProject, Plan, int]] = field(default_factory=list)  # and the rules found repeated


def repeated(found: Sequence[tuple[str, str, Learning]]) -> list[tuple[str, Learning]]:
    """(project, rule) of the rules found in CROSS_MIN_SESSIONS sessions or more: ``found`` holds (session id,
    project, rule) each; a rule is its words (its trigger, each session's own task, is left out)."""
    sessions: dict[tuple[str, str], set[str]] = defaultdict(set)
    first: dict[tuple[str, str], Learning] = {}
    for session_id, project, rule in found:
        key = (project, rule_key("", rule.rule))
        sessions[key].add(session_id)
        first.setdefault(key, rule)
    return [(project, Learning(CROSS_TRIGGER, first[(project, k)].rule, f"seen in {len(sessions[(project, k)])} "
                               "of your sessions", first[(project, k)].type, first[(project, k)].source,
                               CROSS_CONFIDENCE))
            for (project, k) in sorted(sessions) if len(sessions[(project, k)]) >= CROSS_MIN_SESSIONS]


class KeaCrossPart(KeaPart):
    def cross_kind(self) -> JobKind:
        return JobKind(prepare=self.prepare_cross, failed=lambda job, exc: _log.warning(line(
            "kea.cross_extract", outcome="error", users=0, totalPersisted=0, job=job.id, error=type(exc).__name__)))

    def prepare_cross(self, job: JobRecord) -> Step:
        started = time.monotonic()
        through = str(job.payload.get("through", ""))
        unread = self.store.kea.new_sessions(through, CROSS_SESSIONS_MAX, CROSS_USERS_MAX)
        people: dict[str, _Person] = {}
        for user_id, (count, sessions) in unread.items():
            owner = self.store.identity.user(user_id)
            if count < CROSS_MIN_SESSIONS or owner is None or not owner.active:
                reason = "owner_gone" if owner is None else "owner_inactive" if not owner.active else \
                    "fewer_than_2_new_sessions"
                _log.info(line("kea.cross.skip", reason=reason, newSessionCount=count, user=user_id, job=job.id))
                continue
            people[user_id] = self._plan_person(user_principal(owner), sessions, job.id)
        total: list[int] = []
        funnels: list[tuple[str, Funnel]] = []

        def write() -> str:
            for user_id, person in people.items():
                for bp, plan, found in person.plans:
                    funnel = Funnel("cross", 0, found, len(plan))
                    self._persist(person.p, bp, plan, [CROSS_TAG], funnel, private=True)
                    self.brain.count_funnel(user_id, bp.id, through[:10], funnel.mode, funnel.counts())
                    total.append(funnel.persisted)
                    funnels.append((user_id, funnel))
                self.store.kea.mark(user_id, through)
            return "ok"

        def after(result: str) -> None:
            _log.info(line("kea.cross_extract", outcome=result, users=len(unread), totalPersisted=sum(total),
                           durMs=round((time.monotonic() - started) * 1000, 1), job=job.id))
            _log.info(line("kea.cross.daily_done", users=len(unread), processed=len(people),
                           skipped=len(unread) - len(people), totalPersisted=sum(total), model=self.extractor.name,
                           job=job.id))
            for user_id, f in funnels:
                _log.info(line("kea.funnel", mode=f.mode, submitted=f.submitted, llmFindings=f.findings,
                               filterPassed=f.passed, persisted=f.persisted, user=user_id, job=job.id))

        return Step(write, after)

    def _plan_person(self, p: Principal, sessions: Sequence[SessionRecord], job: int) -> _Person:
        found: list[tuple[str, str, Learning]] = []
        for s in sessions:
            material = SessionMaterial(s, self.brain.events(s.id, EVENTS_PER_SESSION_MAX))
            found += [(s.id, s.brain_project, rule) for rule in quality_filter(self.extractor.mine(material))]
        projects = {b.id: b for b in self.projects(p)}
        person = _Person(p)
        by_project: dict[str, list[Learning]] = defaultdict(list)
        for project, rule in repeated(found):
            by_project[project].append(rule)
        for project, rules in sorted(by_project.items()):
            bp = projects.get(project)
            if bp is not None and self.authorization.allowed(p, WRITE, bp.store_project):
                person.plans.append((bp, self.plan_rules(p, bp, quality_filter(rules), public_only=False, job=job),
                                     len(rules)))
        return person
