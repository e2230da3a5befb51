"""The web application: the pages' routes, the static files, the browser's cookies (its session's secret),
security headers, and one error page per failure (the same 404 for hidden and missing)."""

from __future__ import annotations

from importlib.resources import files

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from notewell.errors import (
    Conflict,
    Forbidden,
    InvalidArgument,
    NotewellError,
    NotFound,
    Unauthenticated,
    Unavailable,
)
from notewell.runtime import Runtime
from notewell.services.driver_errors import DRIVER_ERRORS, translated
from notewell.web.clients import notewell_executable
from notewell.web.pages import admin, auth, browse, health, memories, sessions, skills, tokens, writing
from notewell.web.render import page
from notewell.web.session import (
    BrowserCookies,
    CsrfRefused,
    SignInRequired,
    StoreDown,
    current_principal,
    leave_notice,
    sign_in_url,
)

SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                 b"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),  # a sign-in link's secret never leaves in a Referer
    (b"x-frame-options", b"DENY"),
]


class SecurityHeaders:
    """Adds SECURITY_HEADERS to every response of the web door."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


async def _error(request: Request, status: int, title: str, message: str) -> Response:
    try:
        principal = await current_principal(request)
    except (SignInRequired, StoreDown, Unavailable):  # the store gone: the page is drawn for nobody, not asking again
        principal = None
    return page(request, "error.html", principal, title=title, message=message, back="", status=status)


async def _on_sign_in_required(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SignInRequired)
    if exc.message:
        leave_notice(request, exc.message)
    return RedirectResponse(sign_in_url(exc.next_path), status_code=303)


async def _on_csrf(request: Request, exc: Exception) -> Response:
    return await _error(request, 403, "Form refused",
                        str(exc) or "This form is out of date or did not come from this site (its CSRF token is "
                        "missing or wrong). Reload the page and try again.")


async def _on_notewell_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, NotFound):
        return await _error(request, 404, "Not found", "There is nothing here, or you may not see it.")
    if isinstance(exc, Forbidden):
        return await _error(request, 403, "Forbidden", str(exc))
    if isinstance(exc, Unauthenticated):
        return await _error(request, 401, "Signed out", str(exc))
    if isinstance(exc, (InvalidArgument, Conflict)):
        return await _error(request, 400, "Not accepted", str(exc))
    if isinstance(exc, Unavailable):
        answer = page(request, "error.html", None, title="Unavailable", message=str(exc), back="", status=503)
        answer.headers["Retry-After"] = str(exc.retry_after_s)  # the store is not asked again for whose page it is
        return answer
    return await _error(request, 500, "Something went wrong", str(exc))


async def _on_store_down(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StoreDown)
    return await _on_notewell_error(request, exc.cause)


async def _on_driver_error(request: Request, exc: Exception) -> Response:
    """A damaged row met as a page iterated a cursor, past the store's translation (services/driver_errors.py):
    the store's own 503 page; any other driver error stays the 500 it was."""
    found = translated(exc)
    if found is None:
        raise exc
    return await _on_notewell_error(request, found)


async def _on_http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return await _error(request, 404, "Not found", "There is nothing here, or you may not see it.")
    return await _error(request, exc.status_code, "Not accepted", str(exc.detail))


_FAVICON = files("notewell.web").joinpath("static", "favicon.ico").read_bytes()


async def _favicon(_request: Request) -> Response:
    return Response(_FAVICON, media_type="image/x-icon", headers={"Cache-Control": "public, max-age=86400"})


def build_web_app(services: Runtime, *, https_only: bool = False) -> Starlette:
    """The pages, to mount at "/"; browser sessions are kept in the store (every server sharing it finds them),
    their cookies Secure when ``https_only``."""
    app = Starlette(
        routes=[*auth.ROUTES, *tokens.ROUTES, *browse.ROUTES, *writing.ROUTES, *memories.ROUTES, *sessions.ROUTES,
                *health.ROUTES, *skills.ROUTES, *admin.ROUTES, Route("/favicon.ico", _favicon, methods=["GET"]),
                Mount("/static", StaticFiles(packages=[("notewell.web", "static")]), name="static")],
        middleware=[Middleware(SecurityHeaders),
                    Middleware(BrowserCookies, https_only=https_only)],
        exception_handlers={SignInRequired: _on_sign_in_required, CsrfRefused: _on_csrf, StoreDown: _on_store_down,
                            NotewellError: _on_notewell_error, HTTPException: _on_http,
                            **dict.fromkeys(DRIVER_ERRORS, _on_driver_error)},
    )
    app.state.services = services
    app.state.notewell = notewell_executable()  # at start: what the wizard's Claude Desktop entry runs
    return app
