"""Self-service tokens: every active user mints, lists and revokes their own tokens.

The web page /settings/tokens and the REST resource /api/v1/me/tokens both come here. The rules (in
notewell.access.policy.check_own_token) keep a token from ever yielding more than its holder has: the
scopes are limited by the user's role and by the scopes of the caller's own token, and a project-bound
caller mints only tokens bound to that same project. A token sees and revokes only itself and the tokens no
wider than it (no scope it lacks, no other binding): a leaked narrow token cannot list or revoke the others,
and a token it mints ends when it does at the latest (a leaked short-lived token cannot mint a lasting one).
Another person's token, or a wider one, is answered exactly as a missing one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from itertools import islice

from notewell.access import policy
from notewell.access.administration import MintedToken, TokenStanding, token_standing
from notewell.access.audit import AuditTrail
from notewell.access.authorization import Authorization, not_found
from notewell.access.principal import Principal
from notewell.access.token_secrets import TOKEN_ID_HELP, expiry_from, is_token_id, mint_secret
from notewell.errors import Forbidden, InvalidArgument, NotFound
from notewell.records.identity import TokenRecord, User
from notewell.store.base import IdentityRepository
from notewell.timestamps import now_iso

MAX_NAME_CHARS = 100
READ_BATCH = 500  # tokens read at a time to find a page of those a narrow token reaches
TokenPages = Callable[[str | None, int, int], list[TokenRecord]]  # the store's page of a user's tokens, in an order
OWN_TOKEN_LIMIT = 100
"""At most this many active tokens per person (revoked and expired ones do not count), however many mint at once:
the store counts and adds in one transaction that serializes one person's mints (``add_token_below``)."""


class OwnTokenService:
    def __init__(self, identity: IdentityRepository, authorization: Authorization, audit: AuditTrail) -> None:
        self.identity = identity
        self.authorization = authorization
        self.audit = audit

    def _user(self, p: Principal) -> User:
        if p.local_owner:
            raise Forbidden("Forbidden: the local owner has no tokens of its own; mint one for a user instead")
        user = self.identity.user(p.user_id)
        if user is None or not user.active:
            raise Forbidden("Forbidden: only an active user has tokens")
        return user

    def _user_id(self, p: Principal) -> str:
        return self._user(p).id

    def grantable_scopes(self, p: Principal) -> tuple[str, ...]:
        """The scopes p may give a token of their own, in canonical order."""
        return policy.grantable_scopes(p)

    def default_scopes(self, p: Principal) -> tuple[str, ...]:
        """The scopes a new token of p's holds unless p chooses others: all p may grant but admin."""
        return policy.default_token_scopes(p)

    def newest(self, p: Principal, limit: int, offset: int) -> list[TokenStanding]:
        """A page of the caller's tokens that the calling token reaches (policy.reaches_own_token), newest first,
        revoked and expired ones included (never a secret), each with the state and scopes its next call meets (a
        demoted person's token keeps the scopes minted, but no call of its uses those the role lost): ``limit``
        tokens from the ``offset``-th (the web's /settings/tokens)."""
        return self._page(p, self.identity.tokens_newest, limit, offset)

    def oldest(self, p: Principal, limit: int, offset: int) -> list[TokenStanding]:
        """A page of the same, oldest first (REST's GET /me/tokens)."""
        return self._page(p, self.identity.tokens_oldest, limit, offset)

    def _page(self, p: Principal, read: TokenPages, limit: int, offset: int) -> list[TokenStanding]:
        """``limit`` of the caller's tokens that the calling token reaches, from the ``offset``-th, in ``read``'s
        order. Where it reaches every token of theirs (a signed-in person, a token of every scope of the role), the
        store reads that page's rows alone; a narrower token's page is cut from the tokens it reaches, read
        READ_BATCH at a time (never all at once: revoked and expired tokens stay, without end)."""
        user = self._user(p)
        now = now_iso()
        if policy.reaches_every_own_token(p):
            tokens = read(user.id, limit, offset)
        else:
            tokens = list(islice(self._reached(p, read, user.id), offset, offset + limit))
        return [token_standing(t, user, now) for t in tokens]

    @staticmethod
    def _reached(p: Principal, read: TokenPages, user_id: str) -> Iterator[TokenRecord]:
        """The user's tokens that p reaches, in ``read``'s order."""
        at = 0
        while True:
            batch = read(user_id, READ_BATCH, at)
            yield from (t for t in batch if policy.reaches_own_token(p, t.id, t.scopes, t.project_id))
            if len(batch) < READ_BATCH:
                return
            at += READ_BATCH

    def standing(self, p: Principal, token: TokenRecord) -> TokenStanding:
        """One of the caller's tokens, as get, mint or revoke answered it, with the state and scopes its next call
        meets; another person's is NotFound."""
        user = self._user(p)
        if token.user_id != user.id:
            raise NotFound(f"Not found: token {token.id}")
        return token_standing(token, user)

    def get(self, p: Principal, token_id: str) -> TokenRecord:
        """One of the caller's tokens that the calling token reaches; another person's, or a wider one of the
        caller's, is NotFound, as a missing one is."""
        user_id = self._user_id(p)
        given = token_id.strip()
        token = self.identity.token(given) if is_token_id(given) else None
        if (token is None or token.user_id != user_id
                or not policy.reaches_own_token(p, token.id, token.scopes, token.project_id)):
            if not is_token_id(given):  # it may hold a secret, or part of one: never repeated
                raise NotFound(f"Not found: that is not a token id ({TOKEN_ID_HELP}); the text given is not shown")
            raise NotFound(f"Not found: token {given}")
        return token

    def mint(self, p: Principal, scopes: Iterable[str], *, project_id: str | None = None, name: str = "",
             expires: str | None = None) -> MintedToken:
        """A new token for the caller; the secret is returned once and only its hash is kept."""
        user_id = self._user_id(p)
        clean_name = name.strip()
        if len(clean_name) > MAX_NAME_CHARS:
            raise InvalidArgument("name", f"is {len(clean_name)} characters; keep it to {MAX_NAME_CHARS}")
        if "\x00" in clean_name:
            raise InvalidArgument("name", "contains a NUL character (\\x00); remove it")
        checked = self._permitted(p, scopes, project_id)
        expires_at = self._within_calling_token(p, expiry_from(expires, field="expires"), expires)
        minted = mint_secret()
        token = TokenRecord(id=minted.token_id, user_id=user_id, name=clean_name, scopes=checked,
                            project_id=project_id, created_at=now_iso(), expires_at=expires_at)
        # counted and added in one transaction that the person's other mints wait on (two servers, two threads)
        active = self.identity.add_token_below(token, minted.secret_hash, OWN_TOKEN_LIMIT)
        if active >= OWN_TOKEN_LIMIT:
            raise Forbidden(f"Forbidden: you hold {active} active tokens, the most allowed; revoke one first")
        self.audit.record(p, "token.mint", token.id, {"self": True, "name": token.name, "scopes": list(checked),
                                                       "project": project_id, "expiresAt": expires_at})
        return MintedToken(secret=minted.secret, token=token)

    def _within_calling_token(self, p: Principal, expires_at: str | None, asked: str | None) -> str | None:
        """A token never outlives the token that minted it: with none asked for, the new one ends when the
        calling token does; a later end (or none) asked for is refused, naming the calling token's end. A
        browser session (no token) mints for as long as asked."""
        calling = self.identity.token(p.token_id) if p.token_id is not None else None
        ends = calling.expires_at if calling is not None else None
        if ends is None:
            return expires_at
        if asked is None:
            return ends
        if expires_at is None or expires_at > ends:
            raise InvalidArgument("expires", f"{asked!r} would outlive the token you call with, which expires at "
                                             f"{ends}; a token never outlives the one that minted it: ask for a "
                                             "shorter lifetime, leave expires out to end with it, or mint from "
                                             "the web page")
        return expires_at

    def may_mint(self, p: Principal, scopes: Iterable[str], *, project_id: str | None = None) -> None:
        """Raise what ``mint`` would refuse this caller for, minting nothing (the role, the calling token's
        scopes and project, the project's visibility): a kept answer is handed back only past this check."""
        self._user_id(p)
        self._permitted(p, scopes, project_id)

    def _permitted(self, p: Principal, scopes: Iterable[str], project_id: str | None) -> tuple[str, ...]:
        checked = policy.check_own_token(p, scopes, project_id)
        if project_id is not None and not self.authorization.allowed(p, "project:see", project_id):
            raise not_found(project_id)
        return checked

    def revoke(self, p: Principal, token_id: str) -> TokenRecord:
        """Revoke one of the caller's tokens (the one in use too): it fails on its next call."""
        token = self.get(p, token_id)
        if token.revoked_at is not None:
            return token
        at = now_iso()
        self.identity.revoke_token(token.id, at)
        self.audit.record(p, "token.revoke", token.id, {"self": True})
        return replace(token, revoked_at=at)
