"""The repositories of the brain's worker side that the brain repository also is: nightly evolution's rows
(store/shared/evolution.py), autoskill's proposals (store/shared/autoskill.py) and KEA's funnel
(store/shared/kea_funnel.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from notewell.records.brain import Evolution, FunnelCount, KnowledgeRecord, ProposalInput, ProposalRecord


class EvolutionRepository(Protocol):
    def evolve(self, idle_before: str, factor: float, floor: float, reason: str, at: str,
               retire_max: int) -> Evolution:
        """Decay the rules idle since ``idle_before``; retire the idle ones then below ``floor``."""
        ...
    def evolution_retired(self, brain_projects: Sequence[str], viewer: str, limit: int,
                          offset: int = 0) -> list[KnowledgeRecord]: ...
    def restore(self, ref: str, confidence: float, at: str) -> bool:
        """Undo evolution's retirement (and only that); False when there is none to undo."""
        ...


class ProposalRepository(Protocol):
    def add_proposal(self, proposal: ProposalInput) -> bool:
        """Record a proposal once for its key; False when it was made already (open or decided)."""
        ...
    def proposal(self, proposal_id: int) -> ProposalRecord | None: ...
    def proposals(self, owner_user_id: str, brain_projects: Sequence[str], state: str | None,
                  limit: int, offset: int = 0) -> list[ProposalRecord]:
        """The owner's proposals in these projects (every state when None), newest first, ``limit`` of them from the
        ``offset``-th."""
        ...
    def decide(self, proposal_id: int, state: str, by_user_id: str, at: str, result_ref: str | None) -> bool:
        """An open proposal accepted or rejected (in the caller's transaction, if any); False when not open."""
        ...


class FunnelRepository(Protocol):
    def count_funnel(self, user_id: str, brain_project: str, day: str, mode: str, counts: FunnelCount) -> None:
        """Add one KEA run's funnel to its person's, project's, UTC day's and mode's (in the caller's
        transaction)."""
        ...
