"""/settings/tokens: mint your own token (then the install wizard), list yours, revoke one; and /install.sh."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from notewell.access.administration import MintedToken
from notewell.access.principal import Principal
from notewell.errors import NotewellError
from notewell.services.idempotency import Answer, fingerprint
from notewell.web.clients import client_setups
from notewell.web.installer import CLIENTS, installer_script
from notewell.web.paging import numbered, pages
from notewell.web.render import page
from notewell.web.session import (
    PAGE_MAX,
    asked_number,
    base_url,
    call,
    checked_form,
    page_number,
    services,
    set_message,
    signed_in,
    take_message,
)

SCOPE_HELP = {
    "knowledge:read": "list, read and search documents",
    "knowledge:write": "write, edit, move and delete documents where you hold a write grant, and in your home",
    "memory:read": "search and recall memories",
    "memory:write": "remember and forget",
    "sessions": "coding sessions (External Brain)",
    "admin": "manage users, projects, grants and tokens",
}
SHOWN = 100  # a page of the list, newest first; revoked and expired tokens stay listed
EXPIRIES = (("7d", "in 7 days"), ("30d", "in 30 days"), ("90d", "in 90 days"), ("365d", "in a year"),
            ("never", "never"))


@dataclass
class MintForm:
    scopes: tuple[str, ...]  # checked: at first, the scopes the token service gives a new token by default
    name: str = ""
    project: str = ""
    expires: str = "90d"


def _fresh_form(request: Request, p: Principal) -> MintForm:
    return MintForm(scopes=services(request).own_tokens.default_scopes(p))


_ON_PAGE = numbered("/settings/tokens")


async def _render(request: Request, p: Principal, form: MintForm, *, number: int = 1,
                  minted: MintedToken | None = None, error: str = "", sent_again: str = "",
                  status: int = 200) -> Response:
    """The page, its list at page ``number`` (one more token read to know whether older follow)."""
    svc = services(request)
    # as their next call meets them (the admin's page too)
    found = await call(svc.own_tokens.newest, p, SHOWN + 1, (number - 1) * SHOWN)
    tokens = found[:SHOWN]
    projects = await call(svc.knowledge.projects, p)
    allowed = [(s, SCOPE_HELP.get(s, "")) for s in svc.own_tokens.grantable_scopes(p)]
    setups = client_setups(base_url(request), minted.secret, svc.store_url, request.app.state.notewell) \
        if minted else []
    return page(request, "tokens.html", p, title="Your tokens", tokens=tokens, projects=projects, scopes=allowed,
                expiries=EXPIRIES, form=form, minted=minted, setups=setups, error=error,
                once=secrets.token_urlsafe(18), sent_again=sent_again, message=await take_message(request),
                status=status, no_store=minted is not None,
                **pages(_ON_PAGE, number, SHOWN, len(tokens), len(found) > SHOWN))


async def tokens_page(request: Request) -> Response:
    p = await signed_in(request)
    return await _render(request, p, _fresh_form(request, p), number=page_number(request))


async def mint(request: Request) -> Response:
    p = await signed_in(request)
    data = await checked_form(request)
    name = str(data.get("name", ""))  # the service bounds it, naming its length; the form shown again keeps 200
    form = MintForm(name=name[:200], scopes=tuple(str(s) for s in data.getlist("scopes")),
                    project=str(data.get("project", "")), expires=str(data.get("expires", "90d")))
    own = services(request).own_tokens
    made: list[MintedToken] = []

    def create() -> Answer:
        made.append(own.mint(p, form.scopes, project_id=form.project or None, name=name,
                             expires=None if form.expires == "never" else form.expires))
        return Answer(201, {"token": made[0].token.id})

    once = str(data.get("once", ""))
    try:
        if once:  # the form's own key: a reload sends the same form again, and mints nothing more
            answer = await call(services(request).idempotency.once, p, f"web-mint:{once}",
                                fingerprint("POST", "/settings/tokens", None),
                                lambda: own.may_mint(p, form.scopes, project_id=form.project or None), create)
        else:
            answer = await call(create)
    except NotewellError as exc:
        return await _render(request, p, form, error=str(exc), status=400)
    if answer.repeated:
        return await _render(request, p, _fresh_form(request, p), sent_again=str(answer.body["token"]))
    return await _render(request, p, _fresh_form(request, p), minted=made[0])


async def revoke(request: Request) -> Response:
    p = await signed_in(request)
    form = await checked_form(request)
    number = asked_number(str(form.get("page", "")), "page", least=1, most=PAGE_MAX) or 1  # where it was sent from
    token = await call(services(request).own_tokens.revoke, p, request.path_params["token_id"])
    await set_message(request, f"Revoked the token {f'{token.name} ({token.id})' if token.name else token.id}.")
    return RedirectResponse(_ON_PAGE(number), status_code=303)


async def install_script(request: Request) -> Response:
    client = request.query_params.get("client", "claude-code")
    if client not in CLIENTS:
        return PlainTextResponse(f"client: {client[:40]!r} is not a client; choose one of {', '.join(CLIENTS)}\n",
                                 status_code=400)
    return PlainTextResponse(installer_script(base_url(request), client), media_type="text/x-shellscript",
                             headers={"Cache-Control": "no-store"})


ROUTES = [
    Route("/settings/tokens", tokens_page, methods=["GET"]),
    Route("/settings/tokens", mint, methods=["POST"]),
    Route("/settings/tokens/{token_id}/revoke", revoke, methods=["POST"]),
    Route("/install.sh", install_script, methods=["GET"]),
]
