"""notewell brain proposals | accept | reject: autoskill's proposed edits to a person's recipes, which change
nothing until that person accepts one (services/autoskill.py)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, console, print_json, runtime
from notewell.cli.brain_cmds import AsOpt, LimitOpt, brain_app
from notewell.cli.rows import Col, show_rows
from notewell.records.brain import PROPOSAL_STATES, ProposalRecord

IdArg = Annotated[int, typer.Argument(help="The proposal's id (`notewell brain proposals` lists them).")]


def _proposal_json(r: ProposalRecord) -> dict[str, Any]:
    q = r.proposal
    return {"id": r.id, "kind": q.kind, "knowledgeId": q.knowledge_ref, "mergedId": q.other_ref,
            "projectId": q.brain_project, "sessionId": q.session_id, "newType": q.new_kind, "newRule": q.new_rule,
            "reason": q.reason, "createdAt": q.created_at, "state": r.state, "decidedAt": r.decided_at,
            "resultId": r.result_ref}


@brain_app.command("proposals")
def brain_proposals(
    as_user: AsOpt,
    state: Annotated[str, typer.Option("--state", help=f"{', '.join(PROPOSAL_STATES)} or all.")] = "open",
    limit: LimitOpt = 50, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Autoskill's proposed edits to the user's recipes, newest first (open ones unless --state)."""
    with runtime(vault, db, arguments={"state": "--state", "limit": "--limit"}) as rt:
        found = rt.brain.proposals(rt.authentication.acting_as(as_user), None if state == "all" else state, limit)
    if json_out:
        print_json({"proposals": [_proposal_json(r) for r in found]})
        return
    show_rows([Col("id", whole=True), Col("kind"), Col("recipe", whole=True), Col("state"), Col("becomes")],
              [(str(r.id), r.proposal.kind, r.proposal.knowledge_ref, r.state,
                f"{r.proposal.new_kind}: {r.proposal.new_rule[:70]}") for r in found],
              empty=f"No {'' if state == 'all' else state + ' '}proposals for {as_user}")


def _decide(proposal_id: int, as_user: str, accept: bool, vault: str | None, db: str | None, json_out: bool) -> None:
    with runtime(vault, db, arguments={"proposal_id": "ID"}) as rt:
        decided = rt.brain.decide_proposal(rt.authentication.acting_as(as_user), proposal_id, accept)
    if json_out:
        print_json(_proposal_json(decided))
        return
    result = f": {decided.result_ref}" if decided.result_ref else ""
    console.print(f"proposal {decided.id} {decided.state}{result}", highlight=False)


@brain_app.command("accept")
def brain_accept(proposal_id: IdArg, as_user: AsOpt, vault: VaultOpt = None, db: DbOpt = None,
                 json_out: JsonOpt = False) -> None:
    """Accept a proposal: the recipe's new version supersedes it (audited)."""
    _decide(proposal_id, as_user, True, vault, db, json_out)


@brain_app.command("reject")
def brain_reject(proposal_id: IdArg, as_user: AsOpt, vault: VaultOpt = None, db: DbOpt = None,
                 json_out: JsonOpt = False) -> None:
    """Reject a proposal: nothing changes; it is not proposed again (audited)."""
    _decide(proposal_id, as_user, False, vault, db, json_out)
