"""Autoskill's proposals, in SQL both backends run (services/autoskill.py decides what to propose and applies
what a person accepts): recorded once per key, listed for their owner, decided once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from notewell.records.brain import ProposalInput, ProposalRecord
from notewell.store.shared.dialect import Dialect, marks

_COLUMNS = ("id, proposal_key, kind, knowledge_ref, other_ref, owner_user_id, brain_project, session_id, new_kind,"
            " new_rule, reason, created_at, state, decided_at, decided_by, result_ref")


def _record(row: Sequence[Any]) -> ProposalRecord:
    return ProposalRecord(int(row[0]), ProposalInput(*row[1:12]), row[12], row[13], row[14], row[15])


class ProposalRows:
    dialect: Dialect

    def add_proposal(self, proposal: ProposalInput) -> bool:
        q = proposal
        with self.dialect.transaction() as conn:
            return bool(conn.execute(
                "INSERT INTO brain_skill_proposals (proposal_key, kind, knowledge_ref, other_ref, owner_user_id,"
                f" brain_project, session_id, new_kind, new_rule, reason, created_at) VALUES ({marks(11)})"
                " ON CONFLICT (proposal_key) DO NOTHING",
                (q.key, q.kind, q.knowledge_ref, q.other_ref, q.owner_user_id, q.brain_project, q.session_id,
                 q.new_kind, self.dialect.text(q.new_rule), self.dialect.text(q.reason), q.created_at)).rowcount)

    def proposal(self, proposal_id: int) -> ProposalRecord | None:
        with self.dialect.reading() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM brain_skill_proposals WHERE id = ?",
                               (proposal_id,)).fetchone()
        return _record(row) if row is not None else None

    def proposals(self, owner_user_id: str, brain_projects: Sequence[str], state: str | None,
                  limit: int, offset: int = 0) -> list[ProposalRecord]:
        if not brain_projects:
            return []
        where = f"owner_user_id = ? AND brain_project IN ({marks(len(brain_projects))})"
        params: list[Any] = [owner_user_id, *brain_projects]
        if state is not None:
            where += " AND state = ?"
            params.append(state)
        with self.dialect.reading() as conn:
            return [_record(r) for r in conn.execute(
                f"SELECT {_COLUMNS} FROM brain_skill_proposals WHERE {where} ORDER BY id DESC LIMIT ? OFFSET ?",
                [*params, limit, offset]).fetchall()]

    def decide(self, proposal_id: int, state: str, by_user_id: str, at: str, result_ref: str | None) -> bool:
        with self.dialect.transaction() as conn:
            return bool(conn.execute(
                "UPDATE brain_skill_proposals SET state = ?, decided_at = ?, decided_by = ?, result_ref = ?"
                " WHERE id = ? AND state = 'open'", (state, at, by_user_id, result_ref, proposal_id)).rowcount)
