"""Who is signed in, and CSRF, over Starlette's signed cookie session.

The session cookie (HttpOnly, SameSite=Lax, signed with a key kept in the store so every server accepts it)
holds the user id, the user's session generation when it began, and a CSRF token, nothing else. Every
request reads the user from the store again, so a deactivated user's session ends on its next request, and
so does one whose generation has moved on since (the user signed out, or their password or role changed):
a copied cookie stops working too. Every form carries the CSRF token; a POST whose token does not match
the session's is refused with 403 before anything runs.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request

from notewell.access.principal import Principal
from notewell.errors import Unauthenticated
from notewell.runtime import Runtime

SESSION_COOKIE = "notewell_session"
SESSION_MAX_AGE_S = 12 * 3600
CSRF_FIELD = "csrf"
MAX_FORM_FIELDS = 200
QUERY_MAX_CHARS = 1000  # a search page's q: the search engine's own bound
FORM_FIELD_BYTES = 1024 * 1024  # a field of any form but the editor's (Starlette's own default)
T = TypeVar("T")


class SignInRequired(Exception):
    """The page needs a signed-in user; the web app answers with a redirect to the sign-in page."""

    def __init__(self, next_path: str, message: str = "") -> None:
        super().__init__(message)
        self.next_path = next_path
        self.message = message


class CsrfRefused(Exception):
    """A form came without the session's CSRF token."""


def services(request: Request) -> Runtime:
    svc: Runtime = request.app.state.services
    return svc


async def call(fn: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Run a blocking service call in a worker thread (the store is blocking)."""
    return await run_in_threadpool(fn, *args, **kwargs)


def csrf_token(request: Request) -> str:
    token = request.session.get(CSRF_FIELD)
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        request.session[CSRF_FIELD] = token
    return token


def searched_text(request: Request) -> tuple[str, str]:
    """The page's ``q`` as it is shown back (a NUL as U+FFFD, at most the longest query) and why it cannot be
    searched ("" when it can): longer than a search takes, or holding a NUL. Never cut silently."""
    q = request.query_params.get("q", "")
    shown = q[:QUERY_MAX_CHARS].replace("\x00", "\ufffd")
    if len(q) > QUERY_MAX_CHARS:
        return shown, f"q: is {len(q)} characters; keep it to {QUERY_MAX_CHARS} or fewer"
    if "\x00" in q:
        return shown, "q: contains a NUL character (\\x00); remove it"
    return q, ""


async def checked_form(request: Request, *, max_part_size: int = FORM_FIELD_BYTES) -> FormData:
    """The POSTed form, if it carries the session's CSRF token; CsrfRefused otherwise. A field may hold at most
    ``max_part_size`` bytes as sent (the editor's text takes more than the other forms' fields)."""
    form = await request.form(max_files=0, max_fields=MAX_FORM_FIELDS, max_part_size=max_part_size)
    sent = form.get(CSRF_FIELD)
    expected = request.session.get(CSRF_FIELD)
    if not isinstance(sent, str) or not isinstance(expected, str) or not hmac.compare_digest(sent, expected):
        raise CsrfRefused()
    return form


async def start_session(request: Request, user_id: str) -> None:
    """A fresh session for the user (a new CSRF token too, so nothing from before sign-in carries over),
    carrying the user's session generation."""
    generation = await call(services(request).sign_in.session_generation, user_id)
    request.session.clear()
    request.session["uid"] = user_id
    request.session["gen"] = generation
    request.session[CSRF_FIELD] = secrets.token_urlsafe(32)


async def current_principal(request: Request) -> Principal | None:
    """The signed-in user's Principal, or None. A session whose user is gone or deactivated ends here."""
    cached = request.scope.get("notewell.principal")
    if isinstance(cached, Principal):
        return cached
    user_id = request.session.get("uid")
    if not isinstance(user_id, str):
        return None
    generation = request.session.get("gen")
    try:
        principal = await call(services(request).sign_in.session_principal, user_id,
                               generation if isinstance(generation, int) else -1)  # -1: from before generations
    except Unauthenticated as exc:
        request.session.clear()
        raise SignInRequired(_here(request), str(exc)) from None
    request.scope["notewell.principal"] = principal
    return principal


async def signed_in(request: Request) -> Principal:
    """The signed-in user's Principal; SignInRequired (a redirect to the sign-in page) when there is none."""
    principal = await current_principal(request)
    if principal is None:
        raise SignInRequired(_here(request))
    return principal


def _here(request: Request) -> str:
    path = request.url.path
    return path + ("?" + request.url.query if request.url.query else "")


def base_url(request: Request) -> str:
    """This server's address as the browser reached it (no trailing slash): what the wizard and links name."""
    return str(request.base_url).rstrip("/")


def sign_in_url(next_path: str) -> str:
    return "/signin?next=" + quote(next_path, safe="/")


def safe_next(value: object) -> str:
    """Where to go after signing in: a path on this server only (no "//host", no scheme)."""
    if isinstance(value, str) and value.startswith("/") and not value.startswith("//") and "\\" not in value \
            and len(value) <= 2000:
        return value
    return "/projects"
