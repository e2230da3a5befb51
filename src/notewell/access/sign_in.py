"""Browser sign-in: passwords (argon2id), one-time sign-in links, throttled and audited failures.

A sign-in link reads ``<base>/signin/link/nwl_<random>``; only the SHA-256 of the secret is stored, it
works for LINK_LIFETIME and once. Every password attempt is counted against the account (its email) and
the address it came from before the password is checked, in one transaction of the store; past a few of
either within a window (Throttle) further attempts are refused without checking the password, so
concurrent attempts never get more checks than the limit. A success takes its own count back; a failure
stays counted for the window. An unknown email fails exactly like a wrong password (same message, same
argon2 work), so the form does not tell who has an account. The clock is the service's (``clock``), so the
window can be tested without waiting.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from notewell.access.administration import Administration
from notewell.access.audit import AuditTrail
from notewell.access.authentication import user_principal
from notewell.access.authorization import Authorization
from notewell.access.principal import Principal
from notewell.errors import Forbidden, InvalidArgument, NotFound, Unauthenticated
from notewell.records.identity import User, email_key
from notewell.store.base import Store
from notewell.timestamps import iso

PASSWORD_MIN_CHARS = 8
PASSWORD_MAX_CHARS = 1024
LINK_PREFIX = "nwl_"
LINK_PATH = "/signin/link/"
LINK_LIFETIME = timedelta(minutes=15)
BAD_CREDENTIALS = "Email or password is wrong"
_HASHER = PasswordHasher()  # argon2id, the library's current parameters
_DUMMY_HASH = _HASHER.hash("not a password of anyone")


@dataclass(frozen=True)
class Throttle:
    """How many failed sign-ins within ``window`` pause an account, and an address (an attempt counts as
    failed from its start until its password is found right)."""

    per_account: int = 5
    per_address: int = 20
    window: timedelta = timedelta(minutes=15)


class TooManyFailures(Unauthenticated):
    """Sign-ins are paused for this account or address after repeated failures."""


@dataclass(frozen=True)
class SignInLink:
    url: str  # holds the secret: shown once, never stored or logged
    expires_at: str


def link_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_password(password: str) -> str:
    if len(password) < PASSWORD_MIN_CHARS:
        raise InvalidArgument("password", f"is too short; use at least {PASSWORD_MIN_CHARS} characters")
    if len(password) > PASSWORD_MAX_CHARS:
        raise InvalidArgument("password", f"is too long; use at most {PASSWORD_MAX_CHARS} characters")
    return password


class SignInService:
    def __init__(self, store: Store, authorization: Authorization, administration: Administration, audit: AuditTrail,
                 throttle: Throttle | None = None, hasher: PasswordHasher = _HASHER,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.store = store
        self.authorization = authorization
        self.administration = administration
        self.audit = audit
        self.throttle = throttle or Throttle()
        self.hasher = hasher  # argon2id; its parameters decide when a stored hash is redone
        self.clock = clock  # now, as an aware UTC datetime

    def _now(self) -> str:
        return iso(self.clock())

    # setting credentials
    def set_password(self, p: Principal, email: str, password: str) -> User:
        """Set a user's password: their own, or anyone's for a manager (the local command line included)."""
        user = self.store.identity.user_by_email(email)
        manager = self.authorization.allowed(p, "access:manage")
        if user is None or (user.id != p.user_id and not manager):
            if manager:
                raise NotFound(f"No user with email {email.strip()}")
            raise Forbidden("Forbidden: you may set only your own password")
        self.store.credentials.set_password(user.id, self.hasher.hash(check_password(password)), self._now())
        self.store.identity.end_sessions(user.id)  # a copied cookie dies with the old password
        self.audit.record(p, "user.password", email_key(user.email), {"id": user.id})
        return user

    def make_link(self, p: Principal, email: str, base_url: str) -> SignInLink:
        """A one-time sign-in link for the user, valid LINK_LIFETIME (managers only)."""
        user = self.administration.user(p, email)
        if not user.active:
            raise InvalidArgument("email", f"{user.email} is deactivated; reactivate the user first")
        secret = f"{LINK_PREFIX}{secrets.token_urlsafe(32)}"
        now = self.clock()
        expires_at = iso(now + LINK_LIFETIME)
        self.store.credentials.add_link(link_hash(secret), user.id, iso(now), expires_at)
        self.audit.record(p, "user.sign_in_link", email_key(user.email), {"id": user.id, "expiresAt": expires_at})
        return SignInLink(url=f"{base_url.rstrip('/')}{LINK_PATH}{secret}", expires_at=expires_at)

    # signing in
    def _count_attempt(self, email: str, address: str) -> str:
        """Count this attempt against the account and the address (its id, to take back on success);
        TooManyFailures, counting nothing, when either is paused."""
        attempt = secrets.token_hex(16)
        now = self.clock()
        limits = [(f"email:{email_key(email)}", self.throttle.per_account),
                  (f"address:{address}", self.throttle.per_address)]
        if self.store.credentials.count_attempt(limits, attempt, iso(now), iso(now - self.throttle.window)):
            minutes = int(self.throttle.window.total_seconds() // 60)
            raise TooManyFailures(f"Too many failed sign-ins; wait {minutes} minutes, or ask an admin "
                                  "for a sign-in link")
        return attempt

    def _failed(self, email: str, address: str, user: User | None, reason: str) -> None:
        self.store.audit.append(self._now(), user.id if user else "-", None, "auth.sign_in_failed",
                                email_key(email)[:320], {"address": address, "reason": reason})

    def _signed_in(self, user: User, method: str, address: str) -> None:
        self.store.audit.append(self._now(), user.id, None, "auth.sign_in", email_key(user.email),
                                {"method": method, "address": address})

    def sign_in_with_password(self, email: str, password: str, address: str) -> User:
        """The user whose email and password these are; Unauthenticated (the same message whatever was
        wrong) otherwise, TooManyFailures while the account or the address is paused."""
        if not email.strip() or len(email) > 320 or len(password) > PASSWORD_MAX_CHARS:
            raise Unauthenticated(BAD_CREDENTIALS)
        attempt = self._count_attempt(email, address)
        user = self.store.identity.user_by_email(email)
        stored = self.store.credentials.password_hash(user.id) if user else None
        try:
            self.hasher.verify(stored or _DUMMY_HASH, password)
            ok = stored is not None
        except (VerificationError, InvalidHashError):
            ok = False
        if not ok or user is None:
            self._failed(email, address, user, "no such user" if user is None else
                         "no password set" if stored is None else "wrong password")
            raise Unauthenticated(BAD_CREDENTIALS)
        if not user.active:
            self._failed(email, address, user, "deactivated")
            raise Unauthenticated(BAD_CREDENTIALS)
        self.store.credentials.forgive_attempt(attempt)
        if stored is not None and self.hasher.check_needs_rehash(stored):
            self.store.credentials.set_password(user.id, self.hasher.hash(password), self._now())
        self._signed_in(user, "password", address)
        return user

    def link_user(self, secret: str) -> User | None:
        """The active user an unused, unexpired link signs in, without using the link."""
        if not secret.startswith(LINK_PREFIX) or len(secret) > 200:
            return None
        user_id = self.store.credentials.link_user(link_hash(secret), self._now())
        user = self.store.identity.user(user_id) if user_id else None
        return user if user is not None and user.active else None

    def sign_in_with_link(self, secret: str, address: str) -> User:
        """Use the link (once) and return its user; Unauthenticated for a used, expired or unknown link."""
        refused = Unauthenticated("This sign-in link is used, expired or unknown; ask an admin for a new one")
        if not secret.startswith(LINK_PREFIX) or len(secret) > 200:
            raise refused
        user_id = self.store.credentials.use_link(link_hash(secret), self._now())
        user = self.store.identity.user(user_id) if user_id else None
        if user is None or not user.active:
            self.store.audit.append(self._now(), user.id if user else "-", None, "auth.sign_in_failed", "link",
                                    {"address": address, "reason": "link used, expired or unknown"})
            raise refused
        self._signed_in(user, "link", address)
        return user

    # browser sessions
    def session_generation(self, user_id: str) -> int:
        """What a browser session begun now carries: the user's session generation."""
        generation = self.store.identity.session_generation(user_id)
        if generation is None:
            raise Unauthenticated("No such user")
        return generation

    def session_principal(self, user_id: str, generation: int) -> Principal:
        """The Principal a browser session acts as, read from the store on every request: a deactivated
        or deleted user, or a session begun before its user's generation moved on (signed out, a new
        password, a new role), gets Unauthenticated, which ends the session."""
        user = self.store.identity.user(user_id)
        if user is None or not user.active:
            raise Unauthenticated("Your account is deactivated; the session has ended")
        if self.store.identity.session_generation(user_id) != generation:
            raise Unauthenticated("Your session has ended (signed out, or your password or role changed); "
                                  "sign in again")
        return user_principal(user)

    def sign_out(self, p: Principal) -> None:
        """End every browser session of p's user, on every browser (a copied cookie too)."""
        self.store.identity.end_sessions(p.user_id)

    def cookie_key(self) -> bytes:
        return self.store.credentials.signing_key("session-cookie").encode("ascii")

