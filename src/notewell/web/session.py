"""Who is signed in, CSRF and the message for the next page, over server-side browser sessions.

Signing in begins a session kept in the store (access/sign_in.py): the ``notewell_session`` cookie (HttpOnly,
SameSite=Lax, Secure over HTTPS) carries its random secret, and the store keeps only the secret's SHA-256, so
every server sharing the store finds it and nothing in the store (a backup) signs anyone in. Every request
looks the session up and reads its user from the store again, so a deactivated user's session ends on its
next request, and so does one whose generation has moved on since (the user signed out, or their password or
role changed): a copied cookie stops working too. Signing out deletes the user's sessions.

Every form carries a CSRF token, the HMAC-SHA256 of a fixed text keyed with the browser's secret: the
session's secret once signed in, else the random secret of a ``notewell_form`` cookie (the sign-in forms).
Neither secret is stored, and the token cannot be made from the session's hash; a POST whose token does not
match is refused with 403 before anything runs. A POST that its browser says came from another site
(``Sec-Fetch-Site`` other than same-origin or none, or an ``Origin`` naming another host) is refused the same
way before its token is read: the sign-in form's token rests on a cookie, and a cookie can be planted by a
sibling host (cookie tossing), so the browser's own word on where the form came from is what stops a
forged sign-in (login CSRF). The message a page leaves for the next one is kept with the
session; a signed-out browser gets only the fixed notice of why its session ended (``notewell_notice``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import TypeVar
from urllib.parse import quote, urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from notewell.access.principal import Principal
from notewell.access.sign_in import ACCOUNT_DEACTIVATED, SESSION_ENDED, SESSION_IDLE
from notewell.errors import InvalidArgument, Unauthenticated, Unavailable
from notewell.runtime import Runtime

SESSION_COOKIE = "notewell_session"
FORM_COOKIE = "notewell_form"  # a signed-out browser's form secret (for its CSRF tokens)
NOTICE_COOKIE = "notewell_notice"  # why a session ended, for the sign-in page: a code of NOTICES
NOTICES = {"ended": SESSION_ENDED, "deactivated": ACCOUNT_DEACTIVATED}
SESSION_MAX_AGE_S = int(SESSION_IDLE.total_seconds())
NOTICE_MAX_AGE_S = 300
CSRF_FIELD = "csrf"
FROM_ANOTHER_SITE = ("This form was sent from another site's page (the browser's Origin or Sec-Fetch-Site header "
                     "says so), so it was not taken. Open this site's own page and send the form from there.")
_CSRF_PURPOSE = b"notewell web form (CSRF)"
_SECRET_CHARS = 100  # a cookie secret longer than any this server makes is not one of its own
_BROWSER = "notewell.browser"
_PRINCIPAL = "notewell.principal"
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
    """A form came without the session's CSRF token, or from another site's page (its message says so)."""


@dataclass
class Browser:
    """What a request's cookies say, and the cookies its answer sets (by name: the last word wins)."""

    session: str | None  # the session cookie's secret (None: none, or its session ended in this request)
    form: str | None  # the form cookie's secret
    notice: str  # the code of NOTICE_COOKIE ("" for none)
    https_only: bool
    message: str = ""  # the message the session held for this page
    outgoing: dict[str, str] = field(default_factory=dict)

    def set_cookie(self, name: str, value: str, max_age: int | None) -> None:
        cookie: SimpleCookie = SimpleCookie()
        cookie[name] = value
        morsel = cookie[name]
        morsel["path"] = "/"
        morsel["httponly"] = True
        morsel["samesite"] = "lax"
        if max_age is not None:
            morsel["max-age"] = max_age
        if self.https_only:
            morsel["secure"] = True
        self.outgoing[name] = morsel.OutputString()

    def drop_cookie(self, name: str) -> None:
        self.set_cookie(name, "", 0)


def _cookie_secret(value: str | None) -> str | None:
    if value and len(value) <= _SECRET_CHARS and all(c.isascii() and (c.isalnum() or c in "-_") for c in value):
        return value
    return None


class BrowserCookies:
    """Reads the request's session, form and notice cookies into a Browser, and sets the cookies its pages
    decided on in the answer (Set-Cookie)."""

    def __init__(self, app: ASGIApp, *, https_only: bool = False) -> None:
        self.app = app
        self.https_only = https_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cookies = Request(scope).cookies
        notice = cookies.get(NOTICE_COOKIE, "")
        browser = Browser(session=cookies.get(SESSION_COOKIE) or None,
                          form=_cookie_secret(cookies.get(FORM_COOKIE)),
                          notice=notice if notice in NOTICES else "", https_only=self.https_only)
        scope[_BROWSER] = browser

        async def with_cookies(message: Message) -> None:
            if message["type"] == "http.response.start" and browser.outgoing:
                message["headers"] = [*message.get("headers", []),
                                      *((b"set-cookie", v.encode("latin-1")) for v in browser.outgoing.values())]
            await send(message)

        await self.app(scope, receive, with_cookies)


def browser(request: Request) -> Browser:
    found = request.scope.get(_BROWSER)
    assert isinstance(found, Browser), "the web app runs behind BrowserCookies"
    return found


def services(request: Request) -> Runtime:
    svc: Runtime = request.app.state.services
    return svc


class StoreDown(Exception):
    """A store that could not answer a page's service call, carried past the page's own ``except NotewellError``
    (which shows a refusal beside its form, on a page of its own) to the 503 page: it is no refusal."""

    def __init__(self, cause: Unavailable) -> None:
        super().__init__(str(cause))
        self.cause = cause


async def call(fn: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Run a blocking service call in a worker thread (the store is blocking); a store that cannot answer is
    StoreDown."""
    try:
        return await run_in_threadpool(fn, *args, **kwargs)
    except Unavailable as exc:
        raise StoreDown(exc) from exc


def _form_secret(request: Request) -> str:
    """The secret this browser's CSRF tokens are made with: its session's, else its form cookie's (made now,
    for as long as the browser runs, when it has none)."""
    b = browser(request)
    if b.session is not None:
        return b.session
    if b.form is None:
        b.form = secrets.token_urlsafe(32)
        b.set_cookie(FORM_COOKIE, b.form, None)
    return b.form


def csrf_token(request: Request) -> str:
    digest = hmac.new(_form_secret(request).encode("utf-8"), _CSRF_PURPOSE, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def whole_number(given: str, digits: int) -> int | None:
    """``given`` as a whole number of at most ``digits`` ASCII digits, else None. str.isdigit alone takes a
    superscript "²", which int() refuses, and int() refuses any text past 4,300 digits: each was a 500."""
    return int(given) if given.isascii() and given.isdigit() and len(given) <= digits else None


PAGE_MAX = 999_999  # the last page number a paged page's address may ask for


def asked_number(given: str | None, field: str, *, least: int, most: int) -> int | None:
    """A paged page's number in its address (``?page=N``, ``?offset=N``), or the same field of a form that returns
    to it: None when absent or empty. Text that is no whole number from ``least`` to ``most`` (a word, a sign, a
    fraction, 1e9, a superscript digit, a number past ``most``) is refused naming the field (the 400 page): it was
    read as the first page, which looked like an answer to what was asked."""
    if not given:
        return None
    number = whole_number(given, len(str(most)))
    if number is None or not least <= number <= most:
        shown = repr(given[:20]) + ("…" if len(given) > 20 else "")
        raise InvalidArgument(field, f"{shown} is no whole number from {least:,} to {most:,}; give one (the page's "
                                     f"own links do), or leave {field} out for the first page")
    return number


def page_number(request: Request, field: str = "page") -> int:
    """``?page=N`` of a paged page (``field`` for a second list on it): 1 when absent, refused when no page."""
    return asked_number(request.query_params.get(field), field, least=1, most=PAGE_MAX) or 1


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


def from_this_site(request: Request) -> bool:
    """Whether the browser's own headers allow that the POST came from one of this server's pages.
    ``Sec-Fetch-Site`` decides when it is sent (every current browser does); else an ``Origin`` naming another
    host refuses. ``Origin: null`` tells nothing: Chromium sends it for this site's own forms, because its pages
    are sent with ``Referrer-Policy: no-referrer``. A client that sends neither (a script, an old browser) is
    judged by the token alone."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return True
    try:  # host names alone: a proxy may pass the Host without the port the browser used (nginx's $host)
        origin_host, own_host = urlsplit(origin).hostname, urlsplit("//" + request.headers.get("host", "")).hostname
    except ValueError:
        return False
    return origin_host is not None and origin_host == own_host


async def checked_form(request: Request, *, max_part_size: int = FORM_FIELD_BYTES) -> FormData:
    """The POSTed form, if it carries the browser's CSRF token; CsrfRefused otherwise. A field may hold at most
    ``max_part_size`` bytes as sent (the editor's text takes more than the other forms' fields)."""
    if not from_this_site(request):
        raise CsrfRefused(FROM_ANOTHER_SITE)
    form = await request.form(max_files=0, max_fields=MAX_FORM_FIELDS, max_part_size=max_part_size)
    sent = form.get(CSRF_FIELD)
    b = browser(request)
    if b.session is None and b.form is None:  # no secret to have made a token with
        raise CsrfRefused()
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode("utf-8"), csrf_token(request).encode()):
        raise CsrfRefused()
    return form


async def start_session(request: Request, user_id: str) -> None:
    """A fresh session for the user, in the store and in the cookie; the browser's earlier session (if any)
    ends, and its form secret goes, so nothing from before sign-in carries over."""
    svc = services(request).sign_in
    b = browser(request)
    if b.session is not None:
        await call(svc.end_session, b.session)
    begun = await call(svc.start_session, user_id)
    b.session, b.form = begun.secret, None
    b.set_cookie(SESSION_COOKIE, begun.secret, SESSION_MAX_AGE_S)
    b.drop_cookie(FORM_COOKIE)
    request.scope.pop(_PRINCIPAL, None)


async def end_session(request: Request) -> None:
    """This browser is signed out: its cookie goes (the store's sessions are the service's to end)."""
    b = browser(request)
    b.session = None
    b.drop_cookie(SESSION_COOKIE)
    request.scope.pop(_PRINCIPAL, None)


async def current_principal(request: Request) -> Principal | None:
    """The signed-in user's Principal, or None. A session that has ended (or whose user is gone or
    deactivated) ends here: its cookie goes, and SignInRequired says why."""
    cached = request.scope.get(_PRINCIPAL)
    if isinstance(cached, Principal):
        return cached
    b = browser(request)
    if b.session is None:
        return None
    try:
        live = await call(services(request).sign_in.session, b.session)
    except Unauthenticated as exc:
        await end_session(request)
        raise SignInRequired(_here(request), str(exc)) from None
    if live.renewed:
        b.set_cookie(SESSION_COOKIE, b.session, SESSION_MAX_AGE_S)
    b.message = live.message
    request.scope[_PRINCIPAL] = live.principal
    return live.principal


async def principal_if_any(request: Request) -> Principal | None:
    """``current_principal``, with a session that ended meanwhile taken as none (its cookie still goes): for a
    POST that does right by a signed-out browser itself rather than send it to the sign-in page."""
    try:
        return await current_principal(request)
    except SignInRequired:
        return None


async def set_message(request: Request, message: str) -> None:
    """Leave ``message`` for the next page of the signed-in browser (kept with its session)."""
    if await current_principal(request) is not None and browser(request).session is not None:
        await call(services(request).sign_in.set_session_message, browser(request).session, message)


async def take_message(request: Request) -> str:
    """The message left for this page (shown once): the session's, or a signed-out browser's notice."""
    b = browser(request)
    if b.notice:
        b.drop_cookie(NOTICE_COOKIE)
        return NOTICES[b.notice]
    if await current_principal(request) is None or not b.message:
        return ""
    message, b.message = b.message, ""
    if b.session is not None:
        await call(services(request).sign_in.set_session_message, b.session, None)
    return message


def leave_notice(request: Request, message: str) -> None:
    """Tell the sign-in page why this browser's session ended (only the fixed NOTICES are ever shown)."""
    for code, text in NOTICES.items():
        if text == message:
            browser(request).set_cookie(NOTICE_COOKIE, code, NOTICE_MAX_AGE_S)


async def form_from_this_site(request: Request, *, max_part_size: int) -> FormData | None:
    """A form one of this site's pages posted, read without its CSRF token, only for what harms no one: the text
    typed into an editor whose session ended meanwhile, given back; where a stale sign-in form would have gone.
    None when another site's page may have sent it."""
    if not from_this_site(request):
        return None
    return await request.form(max_files=0, max_fields=MAX_FORM_FIELDS, max_part_size=max_part_size)


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
