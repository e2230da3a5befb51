"""Your coding sessions (External Brain): the newest or a search, and one session with its events and outcome."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from notewell.errors import NotewellError
from notewell.records.brain import SessionRecord
from notewell.services.brain_limits import EVENTS_PAGE_MAX
from notewell.web.render import page
from notewell.web.session import call, searched_text, services, signed_in

SHOWN = 50


async def sessions_page(request: Request) -> Response:
    p = await signed_in(request)
    brain = services(request).brain
    q, error = searched_text(request)
    sessions: list[SessionRecord] = []
    try:
        if q and not error:
            sessions = [found.session for found in await call(brain.search_sessions, p, q, limit=SHOWN)]
        elif not q:
            sessions = await call(brain.recent_sessions, p, SHOWN)
    except NotewellError as exc:
        error = str(exc)
    return page(request, "sessions.html", p, title="Sessions", q=q, sessions=sessions, error=error)


async def session_page(request: Request) -> Response:
    """One session and a page of its events (``?page=2`` for the next EVENTS_PAGE_MAX)."""
    p = await signed_in(request)
    brain = services(request).brain
    session = await call(brain.session, p, request.path_params["session_id"])
    page_param = request.query_params.get("page", "1")
    number = int(page_param) if page_param.isdigit() and len(page_param) < 7 and int(page_param) > 0 else 1
    events, more = await call(brain.events, p, session.id, limit=EVENTS_PAGE_MAX,
                              offset=(number - 1) * EVENTS_PAGE_MAX)
    here = f"/sessions/{quote(session.id, safe='')}"
    return page(request, "session.html", p, title=f"Session {session.id}", s=session, events=events,
                first_number=(number - 1) * EVENTS_PAGE_MAX + 1,
                prev_href=f"{here}?page={number - 1}" if number > 1 else "",
                next_href=f"{here}?page={number + 1}" if more else "")


ROUTES = [
    Route("/sessions", sessions_page, methods=["GET"]),
    Route("/sessions/{session_id}", session_page, methods=["GET"]),
]
