"""Errors as RFC 9457 problem details (``application/problem+json``).

Every refusal a service raises maps to one status: Unauthenticated 401 (with WWW-Authenticate),
Forbidden 403 (a missing scope is named in ``scope``), NotFound 404 (the same for hidden and missing),
InvalidArgument 400 (naming the ``field``), a request the schema refuses 422 (naming the field),
Conflict 409, a stale If-Match (VersionConflict) 412 with the current ETag. Anything unforeseen is a 500
whose body says nothing of the inside; the traceback goes to the server's log, never to the caller.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

from notewell.api.known_params import hint
from notewell.errors import (
    Conflict,
    Forbidden,
    InvalidArgument,
    MissingScope,
    NotewellError,
    NotFound,
    Remedy,
    Unauthenticated,
    Unavailable,
    UnknownParameter,
    VersionConflict,
    with_way_out,
)
from notewell.services.driver_errors import DRIVER_ERRORS, translated

PROBLEM_JSON = "application/problem+json"
TYPE_BASE = "https://notewell.dev/problems/"  # an identifier, never fetched
REALM = 'Bearer realm="notewell"'
TOO_LARGE = "body: is larger than the 4 MB a request may carry; send less"
log = logging.getLogger("notewell.api")

_TITLES = {400: "Bad request", 401: "Unauthenticated", 403: "Forbidden", 404: "Not found", 405: "Method not allowed",
           409: "Conflict", 412: "Precondition failed", 413: "Request too large", 422: "Unprocessable request",
           500: "Internal server error"}
_TYPES = {400: "invalid-argument", 401: "unauthenticated", 403: "forbidden", 404: "not-found",
          405: "method-not-allowed", 409: "conflict", 412: "version-conflict", 413: "too-large",
          422: "invalid-request", 500: "internal"}


class Problem(BaseModel):
    """RFC 9457 problem details."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="A URI naming the kind of problem.")
    title: str = Field(description="The kind of problem, in words.")
    status: int = Field(description="The HTTP status code.")
    detail: str = Field(description="What went wrong here and what to do about it.")
    field: str | None = Field(default=None, description="The request field at fault (400, 422).")
    scope: str | None = Field(default=None, description="The scope the token lacks (403).")


def problem(status: int, detail: str, *, field: str | None = None, scope: str | None = None,
            headers: dict[str, str] | None = None) -> JSONResponse:
    body = Problem(type=TYPE_BASE + _TYPES.get(status, "error"), title=_TITLES.get(status, "Error"),
                   status=status, detail=detail, field=field, scope=scope)
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status, headers=headers,
                        media_type=PROBLEM_JSON)


# How a script gets out of a refusal, in this door's words (a service names the way out by a remedy key).
REST_REMEDIES: dict[Remedy, str] = {
    "start-session": "open one with POST /api/v1/sessions",
    "list-brain-projects": "see GET /api/v1/brain-projects",
    "user-scoped": "use a user-scoped token",
    "create-unversioned": "send it without If-Match to create it",
    "overwrite-whole": "to replace it whole, send overwrite: true with If-Match: its ETag",
    "list-proposals": "see GET /api/v1/brain/proposals",
    "list-retired": "GET /api/v1/brain/retired lists what evolution retired",
}


def response_for(exc: NotewellError) -> JSONResponse:
    text = with_way_out(exc, REST_REMEDIES)
    if isinstance(exc, Unauthenticated):
        error = "invalid_token" if "no token" not in text else None
        header = REALM if error is None else f'{REALM}, error="{error}"'
        return problem(401, text, headers={"WWW-Authenticate": header})
    if isinstance(exc, MissingScope):
        return problem(403, text, scope=exc.scope)
    if isinstance(exc, Forbidden):
        detail, field = _as_requested(exc, text)
        return problem(403, detail, field=field)
    if isinstance(exc, NotFound):
        return problem(404, text)
    if isinstance(exc, Unavailable):
        return problem(503, text, headers={"Retry-After": str(exc.retry_after_s)})
    if isinstance(exc, InvalidArgument):
        detail, field = _as_requested(exc, text)
        return problem(400, detail, field=field)
    if isinstance(exc, VersionConflict):  # If-Match named a version the document no longer has
        detail, _ = _as_requested(exc, text)
        return problem(412, detail, field="If-Match", headers={"ETag": f'"{exc.current_version}"'}
                       if exc.current_version else None)
    if isinstance(exc, Conflict):
        return problem(409, text)
    return problem(400, text, field=getattr(exc, "field", None))


def _as_requested(exc: NotewellError, text: str) -> tuple[str, str | None]:
    """The refusal's text and field with the field spelt as the request spells it (pathFilter, not path_filter)."""
    if exc.field is None:
        return text, None
    field = exc.field if isinstance(exc, UnknownParameter) else _request_name(exc.field)
    if field != exc.field and text.startswith(f"{exc.field}:"):
        text = field + text[len(exc.field):]
    return text, field


# A service argument REST takes as a header, not a field: the version a write is meant for.
_HEADERS = {"expected_version": "If-Match"}


def _request_name(field: str) -> str:
    """The name the request spells: services name their arguments in snake_case, REST in camelCase (a header by
    its own name)."""
    if field in _HEADERS:
        return _HEADERS[field]
    return to_camel(field) if "_" in field and "-" not in field else field


def _field_of(loc: tuple[Any, ...]) -> str:
    """The field a validation error names: its location without the leading kind (a parameter or a field of
    the body may itself be called query, path or body: GET /context?query=...)."""
    parts = [str(x) for x in (loc[1:] if loc and loc[0] in ("body", "query", "path", "header") else loc)]
    return ".".join(parts) or "body"


async def _on_notewell_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, NotewellError)
    return response_for(exc)


def _body_fields(request: Request) -> tuple[str, frozenset[str]] | None:
    """The operation (``POST /knowledge``) and the fields its JSON body takes, by the names a request uses."""
    route = request.scope.get("route")
    body = route.body_field if isinstance(route, APIRoute) else None
    model = body.field_info.annotation if body is not None else None
    if not isinstance(route, APIRoute) or not isinstance(model, type) or not issubclass(model, BaseModel):
        return None
    return (f"{sorted(route.methods or ['POST'])[0]} {route.path}",
            frozenset(f.alias or name for name, f in model.model_fields.items()))


async def _on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    first = errors[0] if errors else {"loc": ("body",), "msg": "is not valid"}
    loc = tuple(first.get("loc", ()))
    fields = _body_fields(request) if first.get("type") == "extra_forbidden" and len(loc) == 2 else None
    if fields is not None and loc[0] == "body":  # a field the body does not take: name the one meant, as a query's
        operation, known = fields
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return problem(422, f"{loc[1]}: is not a field of {operation}'s body; {hint(str(loc[1]), known)}{more}",
                       field=str(loc[1]))
    if first.get("type") == "json_invalid":  # its loc is ("body", <character offset>): name the body
        context = first.get("ctx")
        error = context.get("error", "") if isinstance(context, dict) else ""
        return problem(422, f"body: is not valid JSON ({error}); send a JSON object", field="body")
    field = _field_of(tuple(first.get("loc", ())))
    message = str(first.get("msg", "is not valid"))
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return problem(422, f"{field}: {message}{more}", field=field)


async def _on_http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    detail = exc.detail if isinstance(exc.detail, str) else _TITLES.get(exc.status_code, "Error")
    if exc.status_code == 404:
        detail = "Not found: no such resource; see /api/v1/docs"
    field = None
    if exc.status_code == 400:  # FastAPI could not read the body: not UTF-8, JSON nested too deeply, a vast number
        field, detail = "body", ("body: could not be read as JSON (it is not UTF-8 text, it is nested too deeply, "
                                 "or it holds a number of more than 4,300 digits); send a flat JSON object encoded "
                                 "as UTF-8, a long number as a string")
    if exc.status_code == 413:
        field, detail = "body", TOO_LARGE
    if exc.status_code == 412:  # a write's If-Match that can match nothing (routes/notes.py: a weak tag)
        field = "If-Match"
    return problem(exc.status_code, detail, field=field, headers=dict(exc.headers) if exc.headers else None)


async def _on_driver_error(request: Request, exc: Exception) -> JSONResponse:
    """A damaged row met as a cursor was iterated (services/driver_errors.py): answered as the store's error."""
    found = translated(exc)
    return response_for(found) if found is not None else await _on_unexpected(request, exc)


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("api: unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return problem(500, "The server failed to answer this request; the error is in its log")


def install(app: FastAPI) -> None:
    app.add_exception_handler(NotewellError, _on_notewell_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(HTTPException, _on_http_error)
    for kind in DRIVER_ERRORS:  # handled here, not by the last guard (which answers, then raises again)
        app.add_exception_handler(kind, _on_driver_error)
    app.add_exception_handler(Exception, _on_unexpected)


def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` entries for these error statuses, each a Problem as problem+json."""
    return {status: {"model": Problem, "description": _TITLES[status],
                     "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}}
            for status in statuses}
