"""Your coding sessions (External Brain): the newest or a search, and one session with its events and outcome."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from notewell.errors import NotewellError
from notewell.records.brain import SessionRecord
from notewell.web.render import page
from notewell.web.session import call, services, signed_in

SHOWN = 50


async def sessions_page(request: Request) -> Response:
    p = await signed_in(request)
    brain = services(request).brain
    q = request.query_params.get("q", "")[:1000]
    sessions: list[SessionRecord] = []
    error = ""
    try:
        if q:
            sessions = [found.session for found in await call(brain.search_sessions, p, q, limit=SHOWN)]
        else:
            sessions = await call(brain.recent_sessions, p, SHOWN)
    except NotewellError as exc:
        error = str(exc)
    return page(request, "sessions.html", p, title="Sessions", q=q, sessions=sessions, error=error)


async def session_page(request: Request) -> Response:
    p = await signed_in(request)
    brain = services(request).brain
    session = await call(brain.session, p, request.path_params["session_id"])
    events = await call(brain.events, p, session.id)
    return page(request, "session.html", p, title=f"Session {session.id}", s=session, events=events)


ROUTES = [
    Route("/sessions", sessions_page, methods=["GET"]),
    Route("/sessions/{session_id}", session_page, methods=["GET"]),
]
