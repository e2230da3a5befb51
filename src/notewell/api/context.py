"""What a REST handler gets: the caller (from the bearer token) and the services, as FastAPI dependencies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from notewell.access.own_tokens import OwnTokenService
from notewell.access.principal import Principal
from notewell.access.service import AccessService
from notewell.errors import Unauthenticated
from notewell.search.engine import SearchEngine
from notewell.services.brain import BrainService
from notewell.services.idempotency import IdempotencyService
from notewell.services.knowledge import KnowledgeService
from notewell.services.memory import MemoryService
from notewell.store.base import Store

_bearer = HTTPBearer(auto_error=False, description="A Notewell token: Authorization: Bearer nw_…")


@dataclass(frozen=True)
class ApiServices:
    access: AccessService
    knowledge: KnowledgeService
    memory: MemoryService
    own_tokens: OwnTokenService
    idempotency: IdempotencyService
    brain: BrainService


def api_services(store: Store, access: AccessService, engine: SearchEngine, max_file_bytes: int,
                 brain: BrainService) -> ApiServices:
    """The services the REST door asks, built once per server process."""
    return ApiServices(access=access, knowledge=KnowledgeService(store, access, engine, max_file_bytes),
                       memory=MemoryService(store, access, engine), own_tokens=OwnTokenService(access),
                       idempotency=IdempotencyService(store), brain=brain)


def services(request: Request) -> ApiServices:
    found: ApiServices | None = request.app.state.services
    if found is None:  # an application built only to describe itself (notewell docs)
        raise RuntimeError("the REST application was built without services")
    return found


Services = Annotated[ApiServices, Depends(services)]


def principal(svc: Services, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) \
        -> Principal:
    """The caller, from the bearer token; Unauthenticated (401) without a valid one. Runs in a worker
    thread: authenticating reads the store (and refreshes the token's last use at most once a minute)."""
    if credentials is None:
        raise Unauthenticated("Unauthenticated: no token given; send Authorization: Bearer <token>")
    return svc.access.authenticate(credentials.credentials)


Caller = Annotated[Principal, Depends(principal)]
