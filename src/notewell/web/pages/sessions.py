"""Your coding sessions (External Brain): the newest or a search, and one session with its events and outcome."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from notewell.errors import NotewellError, spelled
from notewell.records.brain import SessionRecord
from notewell.services.brain_limits import EVENTS_PAGE_MAX
from notewell.web.paging import numbered, pages
from notewell.web.render import page
from notewell.web.session import call, page_number, searched_text, services, signed_in

SHOWN = 50


async def sessions_page(request: Request) -> Response:
    """The newest SHOWN sessions, ``?page=2`` the next older ones (a search: its best SHOWN, saying when more
    match: one more is asked for to know)."""
    p = await signed_in(request)
    brain = services(request).brain
    q, error = searched_text(request)
    number = page_number(request)
    sessions: list[SessionRecord] = []
    more = False
    try:
        if q and not error:
            with spelled(query="q"):
                found = [f.session for f in await call(brain.search_sessions, p, q, limit=SHOWN + 1)]
            sessions, more = found[:SHOWN], len(found) > SHOWN
        elif not q:
            offset = (number - 1) * SHOWN
            newest = await call(brain.recent_sessions, p, SHOWN + 1, offset)  # one more: whether older follow
            sessions, more = newest[:SHOWN], len(newest) > SHOWN
    except NotewellError as exc:
        error = str(exc)
    return page(request, "sessions.html", p, title="Sessions", q=q, sessions=sessions, error=error,
                more_found=bool(q) and more,
                **pages(numbered("/sessions"), 1 if q else number, SHOWN, len(sessions), more and not q))


async def session_page(request: Request) -> Response:
    """One session and a page of its events (``?page=2`` for the next EVENTS_PAGE_MAX)."""
    p = await signed_in(request)
    brain = services(request).brain
    session = await call(brain.session, p, request.path_params["session_id"])
    number = page_number(request)
    events, more = await call(brain.events, p, session.id, limit=EVENTS_PAGE_MAX,
                              offset=(number - 1) * EVENTS_PAGE_MAX)
    return page(request, "session.html", p, title=f"Session {session.id}", s=session, events=events,
                **pages(numbered(f"/sessions/{quote(session.id, safe='')}"), number, EVENTS_PAGE_MAX, len(events),
                        more))


ROUTES = [
    Route("/sessions", sessions_page, methods=["GET"]),
    Route("/sessions/{session_id}", session_page, methods=["GET"]),
]
