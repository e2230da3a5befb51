"""Authentication: who a bearer token secret acts for, read from the store on every call."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from notewell.access.bookkeeping import Bookkeeping
from notewell.access.policy import ROLE_SCOPES, token_scopes_now
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.access.token_secrets import secret_matches, token_id_of
from notewell.access.tool_calls import ToolCalls
from notewell.errors import InvalidArgument, NotFound, Unauthenticated, not_unicode
from notewell.records.identity import User
from notewell.store.base import IdentityRepository
from notewell.timestamps import iso

TOUCH_INTERVAL = timedelta(seconds=60)  # last_used_at is refreshed at most this often per token
_log = logging.getLogger("notewell.access")


def user_principal(user: User) -> Principal:
    """The user acting with every scope their role allows and no project binding (no token): the CLI's
    --as, and a browser session."""
    return Principal(user_id=user.id, email=user.email, handle=user.handle, role=user.role,
                     scopes=ROLE_SCOPES[user.role])


class Authentication:
    def __init__(self, identity: IdentityRepository) -> None:
        self.identity = identity
        self.tool_calls = ToolCalls(identity)
        self._books = Bookkeeping()  # last-used writes a store refusing writes skips

    def record_tool_call(self, p: Principal, tool: str) -> None:
        """Keep ``tool`` as the last MCP tool ``p``'s token called (the token lists show it), written beside
        the call (access/tool_calls.py). Nothing is kept for a caller without a token (the local owner)."""
        if p.token_id is not None:
            self.tool_calls.note(p.token_id, tool, datetime.now(UTC))

    def acting_as(self, email: str | None) -> Principal:
        """Who a command at the local terminal acts for: the local owner, or (``email``, the command line's
        --as) that active user with every scope their role allows."""
        if email is None:
            return LOCAL_OWNER
        if (why := not_unicode(email)) is not None:  # the command line's bytes that are not UTF-8
            raise InvalidArgument("as", why)
        user = self.identity.user_by_email(email)
        if user is None or not user.active:
            raise NotFound(f"no active user with email {email}", field="as", remedy="list-users")
        return user_principal(user)

    def authenticate(self, secret: str) -> Principal:
        """The Principal for a token secret; Unauthenticated for a bad, revoked or expired token or a
        deactivated user. Reads the store every time: nothing is cached, so a revoke counts at once."""
        secret = secret.strip()
        if not secret:
            raise Unauthenticated("Unauthenticated: no token given; send Authorization: Bearer <token>")
        token_id = token_id_of(secret)
        found = self.identity.token_holder(token_id) if token_id else None  # token and user: one statement
        if found is None or not secret_matches(secret, found[1]):
            raise Unauthenticated("Unauthenticated: the token is not valid; use a token that is, or mint a new one")
        token, _, user = found
        now = datetime.now(UTC)
        state = token.state(iso(now))
        if state != "active":
            raise Unauthenticated(f"Unauthenticated: token {token.id} is {state}; mint a new one")
        if user is None or not user.active:
            raise Unauthenticated(f"Unauthenticated: the user of token {token.id} is deactivated")
        if token.last_used_at is None or token.last_used_at < iso(now - TOUCH_INTERVAL):
            self._touch(token.id, iso(now))
        scopes = frozenset(token_scopes_now(user.role, token.scopes))
        return Principal(user_id=user.id, email=user.email, handle=user.handle, role=user.role, scopes=scopes,
                         token_id=token.id, bound_project=token.project_id)

    def _touch(self, token_id: str, at: str) -> None:
        """Keep when the token was last used: bookkeeping, which a store refusing writes skips (bookkeeping.py)."""
        self._books.kept("token.touch", lambda: self.identity.touch_token(token_id, at), token=token_id)
