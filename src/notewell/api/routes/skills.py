"""The learning loop's decisions over REST: autoskill's proposed edits to your recipes (listed, accepted,
rejected) and what nightly evolution retired (listed, restored). The same service calls as the web page
/brain/skills and `notewell brain proposals|accept|reject|retired|restore`; every operation needs the sessions
scope. Another person's proposal is 404, as a missing one is."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response

from notewell.api.context import Caller, Services
from notewell.api.paging import Limit, Offset, page, page_model
from notewell.api.problems import responses
from notewell.records.brain import KnowledgeRecord, ProposalRecord
from notewell.records.models import record_model

router = APIRouter(tags=["sessions and knowledge"])
ERRORS = responses(400, 401, 403, 404, 422)
ProposalModel = record_model(ProposalRecord)
KnowledgeModel = record_model(KnowledgeRecord)
ProposalPage = page_model(ProposalModel, "ProposalPage")
RetiredPage = page_model(KnowledgeModel, "RetiredKnowledgePage")
ProposalId = Annotated[int, Path(ge=1, le=2**63 - 1, description="The proposal's id (GET /brain/proposals).")]
KnowledgeRef = Annotated[str, Path(min_length=1, max_length=100, description="The knowledge id "
                                                                            "(GET /brain/retired).")]


@router.get("/brain/proposals", response_model=ProposalPage, responses=ERRORS,
            summary="Autoskill's proposed edits to your recipes, newest first (open ones unless state)")
def proposals(caller: Caller, svc: Services, request: Request, response: Response,
              state: Annotated[Literal["open", "accepted", "rejected", "all"],
                               Query(description="Only proposals in this state; all: every state.")] = "open",
              limit: Limit = 20, offset: Offset = 0) -> Any:
    found = svc.brain.proposals(caller, None if state == "all" else state, limit + 1, offset)  # one more: a next?
    return page(request, response, found[:limit], offset, limit, has_more=len(found) > limit)


@router.post("/brain/proposals/{proposal_id}/accept", response_model=ProposalModel,
             responses={**ERRORS, **responses(409)},
             summary="Accept an open proposal: the recipe's new version supersedes it (audited); 409 when the "
                     "recipes changed since it was made")
def accept(caller: Caller, svc: Services, proposal_id: ProposalId) -> Any:
    return svc.brain.decide_proposal(caller, proposal_id, True)


@router.post("/brain/proposals/{proposal_id}/reject", response_model=ProposalModel, responses=ERRORS,
             summary="Reject an open proposal: nothing changes, and it is not proposed again (audited)")
def reject(caller: Caller, svc: Services, proposal_id: ProposalId) -> Any:
    return svc.brain.decide_proposal(caller, proposal_id, False)


@router.get("/brain/retired", response_model=RetiredPage, responses=ERRORS,
            summary="What nightly evolution retired (unused, below the confidence floor) that you see, latest "
                    "first")
def retired(caller: Caller, svc: Services, request: Request, response: Response, limit: Limit = 20,
            offset: Offset = 0) -> Any:
    found = svc.brain.evolution_retired(caller, limit + 1, offset)  # one more: whether a next page follows
    return page(request, response, found[:limit], offset, limit, has_more=len(found) > limit)


@router.post("/brain/knowledge/{ref}/restore", response_model=KnowledgeModel, responses=ERRORS,
             summary="Undo evolution's retirement of an item: live again, at confidence 0.5 or more (audited)")
def restore(caller: Caller, svc: Services, ref: KnowledgeRef) -> Any:
    return svc.brain.restore(caller, ref)
