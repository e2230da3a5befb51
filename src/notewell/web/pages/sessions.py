"""Your coding sessions (External Brain): the newest or a search, and one session with its events and outcome."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from notewell.errors import NotewellError, spelled
from notewell.records.brain import SessionRecord
from notewell.services.brain_limits import EVENTS_PAGE_MAX
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
    paged = not q and number > 1
    return page(request, "sessions.html", p, title="Sessions", q=q, sessions=sessions, error=error,
                past_end=paged and not sessions, shown=(number - 1) * SHOWN, more_found=bool(q) and more,
                prev_href=f"/sessions?page={number - 1}" if paged and sessions else "",
                next_href=f"/sessions?page={number + 1}" if more and not q else "")


async def session_page(request: Request) -> Response:
    """One session and a page of its events (``?page=2`` for the next EVENTS_PAGE_MAX)."""
    p = await signed_in(request)
    brain = services(request).brain
    session = await call(brain.session, p, request.path_params["session_id"])
    number = page_number(request)
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
