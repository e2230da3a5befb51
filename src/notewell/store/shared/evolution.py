"""Nightly evolution's rows, in SQL both backends run (services/brain_evolution.py decides the numbers).

An idle rule is a live one, not an action item, neither used nor learned again (its ``last_used_at``, else its
creation) since a moment. Evolution multiplies idle rules' confidence by a factor and retires the idle ones
below a floor as EVOLUTION_AUTHOR (their memories forgotten with the reason, as any retirement); ``restore``
undoes exactly such a retirement and nothing else. Action items are never touched nor counted here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from notewell.errors import Conflict
from notewell.records.brain import EVOLUTION_AUTHOR, Evolution, KnowledgeRecord
from notewell.store.base import MemoryRepository
from notewell.store.brain_rows import KNOWLEDGE_COLUMNS, KNOWLEDGE_FROM, knowledge_from_row
from notewell.store.shared.dialect import Dialect, marks

_RULES = "retired_at IS NULL AND kind <> 'action_item'"
_IDLE = f"{_RULES} AND COALESCE(last_used_at, created) < ?"
_IDLE_K = "k.retired_at IS NULL AND k.kind <> 'action_item' AND COALESCE(k.last_used_at, k.created) < ?"


class EvolutionRows(ABC):
    dialect: Dialect
    memories: MemoryRepository

    @abstractmethod
    def retire(self, refs: Sequence[str], by_user_id: str, reason: str, at: str) -> int: ...

    def evolve(self, idle_before: str, factor: float, floor: float, reason: str, at: str,
               retire_max: int) -> Evolution:
        """In one transaction (the caller's, when it holds one): decay the rules idle since ``idle_before``
        by ``factor``, then retire (at most ``retire_max``, lowest first) the idle ones now below ``floor``."""
        with self.dialect.transaction() as conn:
            live = conn.execute(f"SELECT count(*) FROM brain_knowledge WHERE {_RULES}").fetchone()
            decayed = conn.execute(f"UPDATE brain_knowledge SET confidence = confidence * ? WHERE {_IDLE}",
                                   (factor, idle_before)).rowcount
            fading = tuple(knowledge_from_row(r) for r in conn.execute(
                f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE {_IDLE_K} AND k.confidence < ?"
                " ORDER BY k.confidence, k.ref LIMIT ?", (idle_before, floor, retire_max)).fetchall())
            self.retire([k.ref for k in fading], EVOLUTION_AUTHOR, reason, at)
        return Evolution(int(live[0]) if live else 0, max(decayed, 0), fading)

    def evolution_retired(self, brain_projects: Sequence[str], viewer: str, limit: int,
                          offset: int = 0) -> list[KnowledgeRecord]:
        """The items of these projects evolution retired and nobody restored, the latest first (of the private
        ones, ``viewer``'s alone), ``limit`` of them from the ``offset``-th."""
        if not brain_projects:
            return []
        with self.dialect.reading() as conn:
            return [knowledge_from_row(r) for r in conn.execute(
                f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE k.brain_project IN"
                f" ({marks(len(brain_projects))}) AND k.retired_at IS NOT NULL AND m.deleted_by = ?"
                " AND (m.private_to IS NULL OR m.private_to = ?) ORDER BY k.retired_at DESC, k.ref LIMIT ? OFFSET ?",
                [*brain_projects, EVOLUTION_AUTHOR, viewer, limit, offset]).fetchall()]

    def restore(self, ref: str, confidence: float, at: str) -> bool:
        """Undo evolution's retirement of ``ref``: live again at ``confidence``, its memory back in every search
        (False when evolution did not retire it, or it was restored already). Conflict when a live rule of the
        same words, or a live copy of its memory, was written since."""
        with self.dialect.transaction() as conn:
            row = conn.execute(
                "SELECT k.owner_user_id, k.brain_project, k.rule_key FROM brain_knowledge k JOIN memories m"
                " ON m.ref = k.ref WHERE k.ref = ? AND k.retired_at IS NOT NULL AND m.deleted_by = ?"
                f"{self.dialect.lock}", (ref, EVOLUTION_AUTHOR)).fetchone()
            if row is None:
                return False
            twin = conn.execute(
                "SELECT ref FROM brain_knowledge WHERE owner_user_id = ? AND brain_project = ? AND rule_key = ?"
                " AND retired_at IS NULL", (row[0], row[1], row[2])).fetchone()
            if twin is not None:
                raise Conflict(f"{twin[0]} holds the same rule and is live; {ref} stays retired")
            if self.memories.restore(ref, at) is None:
                return False
            conn.execute("UPDATE brain_knowledge SET retired_at = NULL, confidence = ? WHERE ref = ?",
                         (confidence, ref))
        return True
