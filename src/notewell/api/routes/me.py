"""/me: who the token is; /me/tokens: the caller's own tokens (list, mint, revoke)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from notewell.access.administration import TokenStanding
from notewell.access.policy import TokenState
from notewell.access.principal import SCOPES, Principal
from notewell.api.context import Caller, Services
from notewell.api.idempotent import IdempotencyKey, create_once
from notewell.api.paging import Limit, Offset, page, page_model
from notewell.api.problems import responses
from notewell.paths import PROJECT_ID_MAX_CHARS
from notewell.records.identity import TokenRecord
from notewell.records.models import CAMEL, dump, record_model
from notewell.services.idempotency import Answer

router = APIRouter(tags=["me"])
Scope = Literal[SCOPES]  # type: ignore[valid-type]
PrincipalModel = record_model(Principal)
TokenModel = record_model(TokenRecord, "TokenRecord", scopes=(list[str], Field(
    description="The scopes a call with this token meets now: those minted that its user's role still allows.")),
    minted_scopes=(list[str], Field(description="The scopes it was minted with; a role lost since (a demotion) "
                                                "leaves some of them out of scopes.")),
    state=(TokenState, Field(description="What its next call meets: active; revoked or expired (for good); user "
                                         "deactivated; no usable scope (the role allows none of mintedScopes: every "
                                         "action needing a scope is refused).")))
TokenPage = page_model(TokenModel, "TokenPage")


def _token(standing: TokenStanding) -> dict[str, Any]:
    """A token as its next call meets it: ``scopes`` those it can use now, ``minted_scopes`` as minted."""
    token = standing.token
    return {**asdict(token), "scopes": standing.scopes, "minted_scopes": token.scopes, "state": standing.state}


class MintRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", **CAMEL)
    scopes: list[Scope] = Field(min_length=1, max_length=len(SCOPES),
                              description=f"Scopes of the new token, each one of: {', '.join(SCOPES)}; no more "
                                          "than the calling token holds.")
    project: str | None = Field(default=None, max_length=PROJECT_ID_MAX_CHARS,
                                description="Bind the token to this one project.")
    name: str = Field(default="", max_length=100, description="A label, such as the client it is for.")
    expires: str | None = Field(default=None, max_length=20, description="Lifetime such as 90d, 12h, 30m, 2w; "
                                "null or \"never\" for none. Never past the calling token's own end: left out, "
                                "the new token ends when the calling token does.")


class MintedTokenAnswer(BaseModel):
    """A new token. ``secret`` is in the first answer only: a repeat with the same Idempotency-Key gets
    null, because Notewell keeps nothing but the secret's hash."""

    model_config = CAMEL
    secret: str | None
    token: TokenModel  # type: ignore[valid-type]


@router.get("/me", response_model=PrincipalModel, responses=responses(401),
            summary="Who the token is: user, role, scopes, project binding")
def me(caller: Caller) -> Any:
    return caller


@router.get("/me/tokens", response_model=TokenPage, responses=responses(401, 403, 422),
            summary="The caller's own tokens, oldest first (never a secret)")
def my_tokens(caller: Caller, svc: Services, request: Request, response: Response, limit: Limit = 20,
              offset: Offset = 0) -> Any:
    found = svc.own_tokens.oldest(caller, limit + 1, offset)  # one more: whether a next page follows
    return page(request, response, [_token(s) for s in found[:limit]], offset, limit, has_more=len(found) > limit)


@router.post("/me/tokens", status_code=201, response_model=MintedTokenAnswer,
             responses=responses(400, 401, 403, 404, 409, 422),
             summary="Mint a token for yourself (scopes within your role and this token's)")
def mint_token(caller: Caller, svc: Services, body: MintRequest, request: Request, response: Response,
               idempotency_key: IdempotencyKey = None) -> Any:
    def create() -> Answer:
        minted = svc.own_tokens.mint(caller, body.scopes, project_id=body.project, name=body.name,
                                     expires=body.expires)
        return Answer(201, {"secret": minted.secret,
                            "token": dump(TokenModel, _token(svc.own_tokens.standing(caller, minted.token)))},
                      request.url_for("my_token", token_id=minted.token.id).path)

    def permit() -> None:
        svc.own_tokens.may_mint(caller, body.scopes, project_id=body.project)

    return create_once(svc, caller, request, response, body.model_dump(), idempotency_key, permit, create,
                       kept=lambda answer: {**answer, "secret": None})


@router.get("/me/tokens/{token_id}", response_model=TokenModel, responses=responses(401, 403, 404, 422),
            summary="One of the caller's tokens")
def my_token(caller: Caller, svc: Services, token_id: str) -> Any:
    return _token(svc.own_tokens.standing(caller, svc.own_tokens.get(caller, token_id)))


@router.delete("/me/tokens/{token_id}", response_model=TokenModel, responses=responses(401, 403, 404, 422),
               summary="Revoke one of the caller's tokens (this one too): it fails on its next call")
def revoke_token(caller: Caller, svc: Services, token_id: str) -> Any:
    return _token(svc.own_tokens.standing(caller, svc.own_tokens.revoke(caller, token_id)))

