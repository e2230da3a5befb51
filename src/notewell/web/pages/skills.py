"""/brain/skills: what the learning loop proposes and what it retired, for the signed-in person to decide.

Autoskill's open proposals for the person's recipes, each accepted (the edit applied: a new version supersedes
the recipe) or rejected; and what nightly evolution retired in their projects, each restorable. Nothing here
changes a rule but the person's own click (services/autoskill.py, services/brain_evolution.py)."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from notewell.access.principal import Principal
from notewell.errors import Forbidden, NotewellError, NotFound
from notewell.web.paging import pages
from notewell.web.refusals import refusal
from notewell.web.render import page
from notewell.web.session import (
    PAGE_MAX,
    asked_number,
    call,
    checked_form,
    page_number,
    services,
    set_message,
    signed_in,
    take_message,
    whole_number,
)

SHOWN = 50  # each list, newest first: ?page=N the proposals, ?retired=N what evolution retired


def _on_pages(number: int, retired: int) -> str:
    """/brain/skills at page ``number`` of its proposals and ``retired`` of what evolution retired."""
    asked = [f"{name}={n}" for name, n in (("page", number), ("retired", retired)) if n > 1]
    return "/brain/skills" + ("?" + "&".join(asked) if asked else "")


async def _render(request: Request, p: Principal, *, error: str = "", status: int = 200) -> Response:
    """The page; its two lists page apart, each page read alone (one more item read to know whether more follow)."""
    brain = services(request).brain
    number, retired_number = page_number(request), page_number(request, "retired")
    proposals = await call(brain.proposals, p, "open", SHOWN + 1, (number - 1) * SHOWN)
    retired = await call(brain.evolution_retired, p, SHOWN + 1, (retired_number - 1) * SHOWN)
    return page(request, "skills.html", p, title="Skill proposals", proposals=proposals[:SHOWN],
                retired=retired[:SHOWN], error=error, message=await take_message(request), status=status,
                proposal_pages=pages(lambda n: _on_pages(n, retired_number), number, SHOWN,
                                     len(proposals[:SHOWN]), len(proposals) > SHOWN),
                retired_pages=pages(lambda n: _on_pages(number, n), retired_number, SHOWN, len(retired[:SHOWN]),
                                    len(retired) > SHOWN))


async def skills_page(request: Request) -> Response:
    p = await signed_in(request)
    return await _render(request, p)


async def _done(request: Request, form: FormData, message: str) -> Response:
    """The decision is made: the page the form was sent from (its hidden ``page`` and ``retired``) shows
    ``message`` once (kept with the session, never read from the address: a link to the page can put no words on
    it)."""
    number, retired = (asked_number(str(form.get(field, "")), field, least=1, most=PAGE_MAX) or 1
                       for field in ("page", "retired"))
    await set_message(request, message)
    return RedirectResponse(_on_pages(number, retired), status_code=303)


def _status(exc: NotewellError) -> int:
    return 404 if isinstance(exc, NotFound) else 403 if isinstance(exc, Forbidden) else 400


async def decide(request: Request) -> Response:
    p = await signed_in(request)
    form = await checked_form(request)
    decision = request.path_params["decision"]
    if decision not in ("accept", "reject"):
        return await _render(request, p, error=f"{decision[:20]!r} is no decision; accept or reject", status=404)
    accept = decision == "accept"
    given = str(request.path_params["proposal_id"])
    proposal_id = whole_number(given, 18)
    if proposal_id is None:
        return await _render(request, p, error=f"{given[:20]!r} is no proposal id; the ids are whole numbers, as "
                                              "this page lists them", status=404)
    try:
        decided = await call(services(request).brain.decide_proposal, p, proposal_id, accept)
    except NotewellError as exc:
        return await _render(request, p, error=refusal(exc), status=_status(exc))
    return await _done(request, form, f"Proposal {decided.id} {decided.state}.")


async def restore(request: Request) -> Response:
    p = await signed_in(request)
    form = await checked_form(request)
    try:
        item = await call(services(request).brain.restore, p, str(request.path_params["ref"]))
    except NotewellError as exc:
        return await _render(request, p, error=refusal(exc), status=_status(exc))
    return await _done(request, form, f"Restored {item.ref}.")


ROUTES = [
    Route("/brain/skills", skills_page, methods=["GET"]),
    Route("/brain/skills/proposals/{proposal_id}/{decision}", decide, methods=["POST"]),
    Route("/brain/skills/restore/{ref}", restore, methods=["POST"]),
]
