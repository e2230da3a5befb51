"""What a REST handler gets: the caller (from the bearer token) and the runtime's services, as FastAPI
dependencies. The door builds no service: the runtime (the composition root) is given to build_api."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from notewell.access.principal import Principal
from notewell.errors import Unauthenticated
from notewell.runtime import Runtime

_bearer = HTTPBearer(auto_error=False, description="A Notewell token: Authorization: Bearer nw_…")


def services(request: Request) -> Runtime:
    found: Runtime | None = request.app.state.services
    if found is None:  # an application built only to describe itself (notewell docs)
        raise RuntimeError("the REST application was built without services")
    return found


Services = Annotated[Runtime, Depends(services)]


def principal(request: Request, svc: Services,
              credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> Principal:
    """The caller, from the bearer token; Unauthenticated (401) without a valid one. Runs in a worker
    thread: authenticating reads the store (and refreshes the token's last use at most once a minute)."""
    if credentials is None:
        raise Unauthenticated("Unauthenticated: no token given; send Authorization: Bearer <token>")
    found = svc.authentication.authenticate(credentials.credentials)
    request.state.principal = found  # named in the request's log line (notewell.api.request_log)
    return found


Caller = Annotated[Principal, Depends(principal)]
