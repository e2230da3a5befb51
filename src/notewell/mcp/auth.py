"""Bearer tokens for the HTTP door: the SDK's TokenVerifier, answered by notewell.access.authentication.

The verified AccessToken carries the Principal, so a handler finds the caller with the SDK's
``get_access_token()``. The token's client_id is the token id: the SDK's own session ownership check
compares it, and Notewell's session binding (notewell.mcp.http) does too.
"""

from __future__ import annotations

import anyio.to_thread
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, TokenVerifier
from pydantic import ConfigDict

from notewell.access.authentication import Authentication
from notewell.access.principal import Principal
from notewell.errors import Unauthenticated


class PrincipalAccessToken(AccessToken):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    principal: Principal


class AccessTokenVerifier(TokenVerifier):
    """Verifies a bearer secret with Authentication.authenticate (in a worker thread: it reads the store,
    and refreshes the token's last-used time at most once a minute, which may wait for a write lock)."""

    def __init__(self, authentication: Authentication) -> None:
        self.authentication = authentication

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            principal: Principal = await anyio.to_thread.run_sync(self.authentication.authenticate, token)
        except Unauthenticated:
            return None
        return PrincipalAccessToken(token=token, client_id=principal.token_id or principal.user_id,
                                    scopes=sorted(principal.scopes), subject=principal.user_id, principal=principal)


def current_principal(_ctx: object = None) -> Principal | None:
    """The caller of the request being handled (HTTP), from the SDK's auth context."""
    token = get_access_token()
    return token.principal if isinstance(token, PrincipalAccessToken) else None
