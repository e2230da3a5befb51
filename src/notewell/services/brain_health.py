"""The loop's health: the seed's signals for one person, or for the whole team (docs/brain.md, "The loop's
health"): sessions closed per day, knowledge injected against used (the loop-health metric), rules captured
by source, KEA's extraction funnel per mode (refine, mine, cross: the seed's op=kea.funnel fields, summed over
the sessions closed in the window, and the cross-session runs of its days), rules by stage, open action items.
Action items are in no count but their own.

A person sees their own sessions and the rules they own in their projects (a project-scoped token: that
project), and the action items assigned to them there; the team's view counts everyone's, and is a
manager's (the policy's access:manage, as the audit log): counts only, never a session's content.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from notewell.access.policy import Action
from notewell.access.principal import Principal
from notewell.errors import InvalidArgument
from notewell.records.brain import FunnelCount
from notewell.services.brain_scope import USE, ScopePart
from notewell.services.brain_scoring import stage
from notewell.timestamps import iso

HEALTH_DAYS_DEFAULT = 14
HEALTH_DAYS_MAX = 90
CAPTURE_SOURCES = ("close_capture", "mined", "cross", "taught")
STAGES = ("seed", "knowledge", "wisdom")
FUNNEL_MODES = ("refine", "mine", "cross")
TEAM: Action = "access:manage"


@dataclass(frozen=True)
class DayCount:
    day: str  # YYYY-MM-DD (UTC)
    count: int


@dataclass(frozen=True)
class KeaFunnel:
    """KEA's funnel for one mode, as its log lines' (op=kea.funnel): what the closes submitted, what the
    extractor found (llmFindings), what the quality filter passed, what was persisted, over ``runs`` runs."""

    runs: int
    submitted: int
    llm_findings: int
    filter_passed: int
    persisted: int


@dataclass(frozen=True)
class LoopHealth:
    """The loop's signals over the last ``days`` days (today included, UTC)."""

    scope: str  # "me" or "team"
    days: int
    since: str  # the first day counted, YYYY-MM-DD
    sessions_closed: list[DayCount]  # every day of the window, oldest first
    injected: int  # knowledge injected into the sessions started in the window
    used: int  # of it, reported used
    use_rate: float | None  # used / injected (2 decimals); None when nothing was injected
    capture: dict[str, int]  # rules created in the window by source: close_capture, mined, cross, taught
    funnel: dict[str, KeaFunnel]  # KEA's funnel by mode: refine, mine, cross
    stages: dict[str, int]  # live rules by stage: seed, knowledge, wisdom
    open_action_items: int


class HealthPart(ScopePart):
    def health(self, p: Principal, *, days: int = HEALTH_DAYS_DEFAULT, team: bool = False,
               now: datetime | None = None) -> LoopHealth:
        """The loop's health for p (``team``: everyone's, for a manager); ``now`` for a fixed clock."""
        self.authorization.authorize(p, USE)
        if not isinstance(days, int) or not 1 <= days <= HEALTH_DAYS_MAX:
            raise InvalidArgument("days", f"must be a whole number of days from 1 to {HEALTH_DAYS_MAX}, e.g. 14")
        if team:
            self.authorization.authorize(p, TEAM)
        today = (now or datetime.now(UTC)).astimezone(UTC).date()
        first = today - timedelta(days=days - 1)
        since = iso(datetime(first.year, first.month, first.day, tzinfo=UTC))
        brain_ids = None if team else self._scope_ids(p)[0]
        counts = self.brain.health(since, None if team else p.user_id, brain_ids,
                                   None if team else f"for:{p.email.strip().lower()}")
        per_day = dict(counts.closed_per_day)
        closed = [DayCount(d.isoformat(), per_day.get(d.isoformat(), 0))
                  for d in (first + timedelta(days=i) for i in range(days))]
        captured = dict(counts.captured)
        found = dict(counts.funnel)
        nothing = FunnelCount(0, 0, 0, 0, runs=0)
        funnel = {mode: KeaFunnel(f.runs, f.submitted, f.findings, f.passed, f.persisted)
                  for mode, f in ((m, found.get(m, nothing)) for m in FUNNEL_MODES)}
        stages = {name: 0 for name in STAGES}
        for successes, failures, confidence in counts.rules:
            stages[stage(successes, failures, confidence)] += 1
        return LoopHealth(scope="team" if team else "me", days=days, since=first.isoformat(),
                          sessions_closed=closed, injected=counts.injected, used=counts.used,
                          use_rate=round(counts.used / counts.injected, 2) if counts.injected else None,
                          capture={source: captured.get(source, 0) for source in CAPTURE_SOURCES}, funnel=funnel,
                          stages=stages, open_action_items=counts.open_action_items)
