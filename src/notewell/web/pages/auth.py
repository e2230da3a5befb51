"""The landing page, signing in (password or one-time link) and signing out."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from notewell.access.sign_in import TooManyFailures
from notewell.errors import Unauthenticated
from notewell.web.render import page
from notewell.web.session import (
    FORM_FIELD_BYTES,
    base_url,
    call,
    checked_form,
    current_principal,
    end_session,
    form_from_this_site,
    principal_if_any,
    safe_next,
    services,
    start_session,
    take_message,
)


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


async def landing(request: Request) -> Response:
    principal = await current_principal(request)
    return page(request, "index.html", principal, title="Notewell", mcp_url=f"{base_url(request)}/mcp")


async def signin_form(request: Request) -> Response:
    principal = await current_principal(request)
    next_path = safe_next(request.query_params.get("next"))
    if principal is not None:
        return RedirectResponse(next_path, status_code=303)
    return page(request, "signin.html", None, title="Sign in", next=next_path, email="", error="",
                message=await take_message(request))


async def signin_submit(request: Request) -> Response:
    # a second tab's sign-in form, sent after the first tab signed in: on to its page
    if await principal_if_any(request) is not None:
        stale = await form_from_this_site(request, max_part_size=FORM_FIELD_BYTES)
        if stale is not None:
            return RedirectResponse(safe_next(stale.get("next")), status_code=303)
    form = await checked_form(request)
    email, password = str(form.get("email", ""))[:320], str(form.get("password", ""))[:1024]
    next_path = safe_next(form.get("next"))
    try:
        user = await call(services(request).sign_in.sign_in_with_password, email, password, client_address(request))
    except Unauthenticated as exc:
        return page(request, "signin.html", None, title="Sign in", next=next_path, email=email, error=str(exc),
                    message="", status=429 if isinstance(exc, TooManyFailures) else 401)
    await start_session(request, user.id)
    return RedirectResponse(next_path, status_code=303)


async def link_form(request: Request) -> Response:
    secret = request.path_params["secret"]
    link_user = await call(services(request).sign_in.link_user, secret)
    return page(request, "signin_link.html", None, title="Sign in", link_user=link_user,
                status=200 if link_user else 410, no_store=True)


async def link_submit(request: Request) -> Response:
    await checked_form(request)
    try:
        user = await call(services(request).sign_in.sign_in_with_link, request.path_params["secret"],
                          client_address(request))
    except Unauthenticated:
        return page(request, "signin_link.html", None, title="Sign in", link_user=None, status=410, no_store=True)
    await start_session(request, user.id)
    return RedirectResponse("/projects", status_code=303)


async def signout(request: Request) -> Response:
    """Sign out here and everywhere: every session of the user ends, a copied cookie too."""
    await checked_form(request)
    principal = await current_principal(request)
    if principal is not None:
        await call(services(request).sign_in.sign_out, principal)
    await end_session(request)
    return RedirectResponse("/", status_code=303)



ROUTES = [
    Route("/", landing, methods=["GET"]),
    Route("/signin", signin_form, methods=["GET"]),
    Route("/signin", signin_submit, methods=["POST"]),
    Route("/signin/link/{secret}", link_form, methods=["GET"]),
    Route("/signin/link/{secret}", link_submit, methods=["POST"]),
    Route("/signout", signout, methods=["POST"]),
]
