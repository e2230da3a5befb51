"""Creates over HTTP: 201 with Location, and the first answer again for a repeated Idempotency-Key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Header, Request, Response

from notewell.access.principal import Principal
from notewell.runtime import Runtime
from notewell.services.idempotency import KEY_MAX_CHARS, Answer, fingerprint

IdempotencyKey = Annotated[str | None, Header(
    alias="Idempotency-Key", max_length=KEY_MAX_CHARS,
    description="Any unique string (a UUID). A repeat of this request with the same key and the same token, "
                "within a day, gets the first answer back (header Idempotent-Replayed: true) and creates "
                "nothing; it is refused as the request itself would be when the token may not make it.")]
REPLAYED = "Idempotent-Replayed"


def create_once(svc: Runtime, caller: Principal, request: Request, response: Response, body: object,
                key: str | None, permit: Callable[[], None], create: Callable[[], Answer],
                kept: Callable[[dict[str, Any]], dict[str, Any]] = lambda b: b) -> dict[str, Any]:
    """Run ``create`` (or, for a repeated key, return its kept answer) and set status and Location.
    ``permit``: the service's check of the permissions ``create`` asks, run before any kept answer."""
    if key is None:
        answer = create()
    else:
        answer = svc.idempotency.once(caller, key, fingerprint(request.method, request.url.path, body), permit,
                                      create, kept=lambda first: kept(first.body))
    response.status_code = answer.status
    if answer.location:
        response.headers["Location"] = answer.location
    if answer.repeated:
        response.headers[REPLAYED] = "true"
    return answer.body
