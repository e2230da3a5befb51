"""Admin: users (add, role, deactivate, a sign-in link), projects (add, name, description, archive), grants, every
token (revoke), the audit log with filters. Only a manager gets these pages; anyone else gets the 404 page.
Each change is the access service's, which decides and audits it; the page the browser is sent to next says
in one line what was done (once: the session's message)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from notewell.access.principal import Principal
from notewell.access.token_secrets import since_from
from notewell.errors import InvalidArgument, NotewellError, NotFound
from notewell.records.identity import GRANT_LEVELS, ROLES, AuditEntry
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

AUDIT_SHOWN = 200
TOKENS_SHOWN = 200  # a page of /admin/tokens, newest first; revoked and expired tokens stay listed
USERS_SHOWN = 200  # a page of /admin/users, by email; deactivated users stay listed
GRANTS_SHOWN = 200  # a page of the grants on /admin/projects/ID, by email
PROJECTS_SHOWN = 200  # a page of /admin/projects, by id; archived projects stay listed, homes are never there
AUDIT_DEFAULT_SINCE = "7d"


async def _manager(request: Request) -> Principal:
    p = await signed_in(request)
    if not services(request).authorization.allowed(p, "access:manage"):
        raise NotFound("Not found")
    return p


async def _done(request: Request, where: str, message: str) -> Response:
    """The change is made: ``where`` shows ``message`` once (POST, redirect, GET)."""
    await set_message(request, message)
    return RedirectResponse(where, status_code=303)


def _form_page(form: Any) -> int:
    """The page of its list a form was sent from (its hidden ``page``), where the change returns the person to."""
    return asked_number(str(form.get("page", "")), "page", least=1, most=PAGE_MAX) or 1


def _choice(form: Any, field: str, allowed: Sequence[str]) -> str:
    """The form's value for ``field`` if it is one the page offers; a value no page sends is refused, never
    taken for another."""
    value = form.get(field)
    if value not in allowed:
        raise InvalidArgument(field, f"must be one of {', '.join(allowed)}")
    return str(value)


async def _users(request: Request, p: Principal, number: int, *, error: str = "", link: object = None,
                 link_email: str = "", status: int = 200) -> Response:
    """Page ``number`` of the users (one more read to know whether more follow)."""
    found = await call(services(request).administration.users_page, p, USERS_SHOWN + 1, (number - 1) * USERS_SHOWN)
    users = found[:USERS_SHOWN]
    return page(request, "admin/users.html", p, title="Users", users=users, roles=ROLES, error=error, link=link,
                link_email=link_email, message=await take_message(request), status=status,
                no_store=link is not None, **pages(numbered("/admin/users"), number, USERS_SHOWN, len(users),
                                                   len(found) > USERS_SHOWN))


async def users_page(request: Request) -> Response:
    p = await _manager(request)
    return await _users(request, p, page_number(request))


async def add_user(request: Request) -> Response:
    p = await _manager(request)
    form = await checked_form(request)
    try:
        user = await call(services(request).administration.add_user, p, str(form.get("email", "")),
                          str(form.get("role", "member")), name=str(form.get("name", "")) or None)
    except NotewellError as exc:
        return await _users(request, p, 1, error=str(exc), status=400)
    return await _done(request, "/admin/users", f"Added {user.email} as {user.role}.")


async def set_active(request: Request) -> Response:
    p = await _manager(request)
    form = await checked_form(request)
    number = _form_page(form)
    try:
        active = _choice(form, "active", ("yes", "no")) == "yes"
        user = await call(services(request).administration.set_user_active, p, str(form.get("email", "")), active)
    except NotewellError as exc:
        return await _users(request, p, number, error=str(exc), status=400)
    return await _done(request, numbered("/admin/users")(number),
                       f"{'Reactivated' if user.active else 'Deactivated'} {user.email}.")


async def set_role(request: Request) -> Response:
    p = await _manager(request)
    form = await checked_form(request)
    number = _form_page(form)
    try:
        user = await call(services(request).administration.set_role, p, str(form.get("email", "")),
                          str(form.get("role", "")))
    except NotewellError as exc:
        return await _users(request, p, number, error=str(exc), status=400)
    return await _done(request, numbered("/admin/users")(number), f"Set the role of {user.email} to {user.role}.")


async def sign_in_link(request: Request) -> Response:
    p = await _manager(request)
    form = await checked_form(request)
    number = _form_page(form)
    email = str(form.get("email", ""))
    try:
        link = await call(services(request).sign_in.make_link, p, email, base_url(request))
    except NotewellError as exc:
        return await _users(request, p, number, error=str(exc), status=400)
    return await _users(request, p, number, link=link, link_email=email)


async def _projects(request: Request, p: Principal, number: int, *, error: str = "", status: int = 200) -> Response:
    """Page ``number`` of the ordinary projects, archived ones too, by id (one more read to know whether more
    follow): the store reads that page's rows alone."""
    found = await call(services(request).administration.projects_page, p, PROJECTS_SHOWN + 1,
                       (number - 1) * PROJECTS_SHOWN)
    projects = found[:PROJECTS_SHOWN]
    return page(request, "admin/projects.html", p, title="Projects and grants", projects=projects, error=error,
                status=status, **pages(numbered("/admin/projects"), number, PROJECTS_SHOWN, len(projects),
                                       len(found) > PROJECTS_SHOWN))


async def projects_page(request: Request) -> Response:
    p = await _manager(request)
    return await _projects(request, p, page_number(request))


async def add_project(request: Request) -> Response:
    p = await _manager(request)
    form = await checked_form(request)
    number = _form_page(form)
    project_id = str(form.get("id", ""))
    try:
        project = await call(services(request).administration.add_project, p, project_id,
                             name=str(form.get("name", "")) or None, description=str(form.get("description", "")))
    except NotewellError as exc:
        return await _projects(request, p, number, error=str(exc), status=400)
    return await _done(request, f"/admin/projects/{project.id}", f"Added the project {project.id}.")


async def _project(request: Request, p: Principal, number: int, *, error: str = "", status: int = 200) -> Response:
    """The project's settings and page ``number`` of its grants, by email (one more read to know whether more
    follow): the store reads that page's grants and their users alone. A grant names its person by email."""
    access = services(request).administration
    project_id = request.path_params["project"]
    project = await call(services(request).authorization.authorize, p, "project:manage", project_id)
    found = await call(access.project_members, p, project_id, GRANTS_SHOWN + 1, (number - 1) * GRANTS_SHOWN)
    grants = [(g, u.email) for g, u in found[:GRANTS_SHOWN]]
    return page(request, "admin/project.html", p, title=project.name, project=project, error=error, status=status,
                message=await take_message(request), grants=grants, levels=GRANT_LEVELS,
                **pages(numbered(_project_path(project.id)), number, GRANTS_SHOWN, len(grants),
                        len(found) > GRANTS_SHOWN))


def _project_path(project_id: str) -> str:
    return f"/admin/projects/{quote(project_id, safe='')}"


async def project_page(request: Request) -> Response:
    return await _project(request, await _manager(request), page_number(request))


async def _project_change(request: Request, change: Callable[[Principal, str, Any], Awaitable[str]]) -> Response:
    """Make a change to the project (``change`` answers the line that says what it did) and show its page, the page
    of its grants the form was sent from."""
    p = await _manager(request)
    form = await checked_form(request)
    number = _form_page(form)
    project_id = request.path_params["project"]
    try:
        done = await change(p, project_id, form)
    except NotewellError as exc:
        if isinstance(exc, NotFound) and exc.field == "project":  # the project is hidden or gone: the 404 page
            raise
        return await _project(request, p, number, error=str(exc), status=400)
    return await _done(request, numbered(_project_path(project_id))(number), done)


async def set_project(request: Request) -> Response:
    access = services(request).administration

    async def change(p: Principal, project_id: str, form: Any) -> str:
        await call(access.set_project, p, project_id, name=str(form.get("name", "")),
                   description=str(form.get("description", "")))
        return f"Saved the name and description of {project_id}."
    return await _project_change(request, change)


async def set_status(request: Request) -> Response:
    access = services(request).administration

    async def change(p: Principal, project_id: str, form: Any) -> str:
        project = await call(access.set_project_status, p, project_id,
                             _choice(form, "status", ("archived", "active")))
        return f"{'Archived' if project.status == 'archived' else 'Unarchived'} {project_id}."
    return await _project_change(request, change)


async def grant(request: Request) -> Response:
    access = services(request).administration

    async def change(p: Principal, project_id: str, form: Any) -> str:
        level = "write" if _choice(form, "level", GRANT_LEVELS) == "write" else "read"
        email = str(form.get("email", ""))
        await call(access.grant, p, email, project_id, level)
        return f"Granted {email.strip()} {level} on {project_id}."
    return await _project_change(request, change)


async def ungrant(request: Request) -> Response:
    access = services(request).administration

    async def change(p: Principal, project_id: str, form: Any) -> str:
        email = str(form.get("email", ""))
        await call(access.ungrant, p, email, project_id)
        return f"Removed the grant of {email.strip()} on {project_id}."
    return await _project_change(request, change)


async def tokens_page(request: Request) -> Response:
    p = await _manager(request)
    number = page_number(request)
    # as the next call finds each (the CLI's token list too); one more read to know whether older follow
    found = await call(services(request).administration.newest_standings, p, TOKENS_SHOWN + 1,
                       (number - 1) * TOKENS_SHOWN)
    standings = found[:TOKENS_SHOWN]
    return page(request, "admin/tokens.html", p, title="Every token", standings=standings,
                message=await take_message(request),
                **pages(numbered("/admin/tokens"), number, TOKENS_SHOWN, len(standings), len(found) > TOKENS_SHOWN))


async def revoke_token(request: Request) -> Response:
    p = await _manager(request)
    form = await checked_form(request)
    number = _form_page(form)
    token = await call(services(request).administration.revoke_token, p, request.path_params["token_id"])
    named = f"{token.name} ({token.id})" if token.name else token.id
    return await _done(request, numbered("/admin/tokens")(number), f"Revoked the token {named}.")


async def audit_page(request: Request) -> Response:
    """A page of the audit log, newest first, AUDIT_SHOWN a page (``?page=N``, the filters kept in its links); the
    store reads that page alone (one entry more, to know whether older follow), and the users it names."""
    p = await _manager(request)
    access = services(request).administration
    action = request.query_params.get("action", "")[:100]
    user_filter = request.query_params.get("user", "")[:320]
    since = request.query_params.get("since", "")[:40] or AUDIT_DEFAULT_SINCE
    number = page_number(request)
    error = ""
    found: list[AuditEntry] = []
    try:
        found = await call(access.audit_page, p, since_from(since, field="since"), AUDIT_SHOWN + 1,
                           (number - 1) * AUDIT_SHOWN, action=action, email=user_filter)
    except NotewellError as exc:
        error = str(exc)
    entries = found[:AUDIT_SHOWN]
    users = await call(access.users_by_id, p, [e.user_id for e in entries])
    filters = {name: value for name, value in (("action", action), ("user", user_filter), ("since", since)) if value}

    def on_page(n: int) -> str:
        return "/admin/audit?" + urlencode({**filters, **({"page": n} if n > 1 else {})})

    return page(request, "admin/audit.html", p, title="Audit log", entries=entries,
                emails={i: u.email for i, u in users.items()}, action=action, user_filter=user_filter, since=since,
                error=error, limit=AUDIT_SHOWN,
                **pages(on_page, number, AUDIT_SHOWN, len(entries), len(found) > AUDIT_SHOWN))


ROUTES = [
    Route("/admin", lambda request: RedirectResponse("/admin/users", status_code=303), methods=["GET"]),
    Route("/admin/users", users_page, methods=["GET"]),
    Route("/admin/users", add_user, methods=["POST"]),
    Route("/admin/users/active", set_active, methods=["POST"]),
    Route("/admin/users/link", sign_in_link, methods=["POST"]),
    Route("/admin/users/role", set_role, methods=["POST"]),
    Route("/admin/projects", projects_page, methods=["GET"]),
    Route("/admin/projects", add_project, methods=["POST"]),
    Route("/admin/projects/{project}", project_page, methods=["GET"]),
    Route("/admin/projects/{project}", set_project, methods=["POST"]),
    Route("/admin/projects/{project}/status", set_status, methods=["POST"]),
    Route("/admin/projects/{project}/grants", grant, methods=["POST"]),
    Route("/admin/projects/{project}/ungrant", ungrant, methods=["POST"]),
    Route("/admin/tokens", tokens_page, methods=["GET"]),
    Route("/admin/tokens/{token_id}/revoke", revoke_token, methods=["POST"]),
    Route("/admin/audit", audit_page, methods=["GET"]),
]
