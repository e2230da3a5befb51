"""Rendering pages: one Jinja2 environment over the package's templates, autoescaped, and the context
every page gets (who is signed in, the CSRF token, whether to show the admin links)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from notewell.access import policy
from notewell.access.principal import Principal
from notewell.web.markdown import inline_summary
from notewell.web.readable import readable
from notewell.web.session import csrf_token

ENV = Environment(loader=PackageLoader("notewell.web", "templates"), autoescape=select_autoescape(default=True),
                  undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def when(value: str | None, empty: str = "—") -> str:
    """An ISO 8601 UTC time as "2026-11-30 16:40 UTC" (``empty`` for None)."""
    if not value:
        return empty
    return f"{value[:10]} {value[11:16]} UTC" if len(value) >= 16 else value


def urlpath(value: str) -> str:
    """A project-relative path for a URL: each segment quoted, the slashes kept."""
    return quote(value, safe="/")


ENV.filters["when"] = when
ENV.filters["readable"] = readable
ENV.filters["summary"] = inline_summary
ENV.filters["urlpath"] = urlpath


def page(request: Request, template: str, principal: Principal | None, *, status: int = 200,
         no_store: bool = False, **context: Any) -> HTMLResponse:
    """The template rendered for the request; ``no_store`` keeps secrets out of caches and history, and so is
    every page of a signed-in person's: after signing out, Back must not show a private document again from
    the browser's cache (a shared machine)."""
    html = ENV.get_template(template).render(
        user=principal, is_admin=principal is not None and policy.allowed(principal, "access:manage"),
        csrf=csrf_token(request), path=request.url.path, **context)
    headers = {"Cache-Control": "no-store"} if no_store or principal is not None else None
    return HTMLResponse(html, status_code=status, headers=headers)
