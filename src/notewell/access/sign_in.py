"""Browser sign-in: passwords (argon2id), one-time sign-in links, throttled and audited failures.

A sign-in link reads ``<base>/signin/link/nwl_<random>``; only the SHA-256 of the secret is stored, it
works for LINK_LIFETIME and once. Every password attempt is counted against the account (its email) and
the address it came from before the password is checked, in one transaction of the store; past a few of
either within a window (Throttle) further attempts are refused without checking the password, so
concurrent attempts never get more checks than the limit. A success takes its own count back; a failure
stays counted for the window. An unknown email fails exactly like a wrong password (same message, same
argon2 work), so the form does not tell who has an account. The clock is the service's (``clock``), so the
window can be tested without waiting.

A browser session is kept in the store by the SHA-256 of a random secret (``secrets.token_urlsafe(32)``) that
only its cookie carries, as token secrets are: whoever reads the store (a backup) holds no value that signs
anyone in. Each request finds it by that hash; it ends when its user signs out (every session of theirs), is
deactivated, gets a new password or role (their session generation moves on), or after SESSION_IDLE unused.
"""

from __future__ import annotations

import hashlib
import hmac
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
from notewell.access.bookkeeping import Bookkeeping
from notewell.access.principal import Principal
from notewell.errors import Forbidden, InvalidArgument, NotFound, Unauthenticated
from notewell.records.identity import User, WebSession, email_key
from notewell.store.base import Store
from notewell.timestamps import iso, parse_iso

PASSWORD_MIN_CHARS = 8
PASSWORD_MAX_CHARS = 1024
LINK_PREFIX = "nwl_"
LINK_PATH = "/signin/link/"
LINK_LIFETIME = timedelta(minutes=15)
BAD_CREDENTIALS = "Email or password is wrong"
SESSION_IDLE = timedelta(hours=12)  # a browser session unused this long has ended
SESSION_RENEW_AFTER = timedelta(minutes=15)  # a session in use is renewed (written) at most this often
SESSION_SWEEP = 100  # expired sessions dropped by each sign-in, at most (each sign-in adds one)
SESSION_SECRET_CHARS = 43  # secrets.token_urlsafe(32)
SESSION_ENDED = "Your session has ended (it expired, you signed out, or your password or role changed); sign in again"
ACCOUNT_DEACTIVATED = "Your account is deactivated; the session has ended"
_HASHER = PasswordHasher()  # argon2id, the library's current parameters
_DUMMY_HASH = _HASHER.hash("not a password of anyone")
UNKNOWN_EMAIL = "(no such user)"  # a failed sign-in's audit target when what was typed is no user's email
UNKNOWN_BUCKETS = 256  # the throttle's keys for what was typed for no user (see _count_attempt)
BUCKET_SECRET = "unknown-email-buckets"


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


@dataclass(frozen=True)
class BrowserSession:
    """A session begun at sign-in: ``secret`` goes into the cookie and nowhere else (never stored or logged)."""

    secret: str
    expires_at: str


@dataclass(frozen=True)
class LiveSession:
    """A cookie's session as a request finds it: who it acts as, the message waiting for the next page, and
    whether it was renewed now (the cookie is sent again, to last as long)."""

    principal: Principal
    message: str
    renewed: bool


def link_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


session_hash = link_hash  # a session secret is stored as its SHA-256, as a link's is


def _session_secret_shape(secret: str) -> bool:
    return len(secret) == SESSION_SECRET_CHARS and all(c.isascii() and (c.isalnum() or c in "-_") for c in secret)


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
        self._books = Bookkeeping()  # session renewals a store refusing writes skips
        self._bucket_key: bytes | None = None  # read from the store when first needed

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
        self.store.credentials.end_web_sessions(user.id)
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
    def _bucket(self, email: str) -> int:
        """The bucket of an email of no one: its HMAC under the store's own random secret, so no one without the
        store can tell which emails share one (and pause one to tell who has an account)."""
        if self._bucket_key is None:
            self._bucket_key = self.store.credentials.secret(BUCKET_SECRET).encode("ascii")
        digest = hmac.new(self._bucket_key, email_key(email).encode("utf-8"), hashlib.sha256).hexdigest()
        return int(digest, 16) % UNKNOWN_BUCKETS

    def _count_attempt(self, email: str, user: User | None, address: str) -> str:
        """Count this attempt against the account and the address (its id, to take back on success);
        TooManyFailures, counting nothing, when either is paused. A user's account is keyed by the user's id;
        what was typed for no user is never kept (it may be a password typed into the wrong field), only one of
        UNKNOWN_BUCKETS its keyed hash falls in (``_bucket``), too coarse to tell a password by, yet paused as an
        account is (an unknown email never paused would tell who has an account)."""
        attempt = secrets.token_hex(16)
        now = self.clock()
        account = f"user:{user.id}" if user is not None else f"unknown:{self._bucket(email)}"
        limits = [(account, self.throttle.per_account), (f"address:{address}", self.throttle.per_address)]
        if self.store.credentials.count_attempt(limits, attempt, iso(now), iso(now - self.throttle.window)):
            minutes = int(self.throttle.window.total_seconds() // 60)
            raise TooManyFailures(f"Too many failed sign-ins; wait {minutes} minutes, or ask an admin "
                                  "for a sign-in link")
        return attempt

    def _failed(self, email: str, address: str, user: User | None, reason: str) -> None:
        """Audit a refused sign-in. What was typed as the email is kept only when it is a user's: a password typed
        into the email field (or a near miss of one) never lands in the audit log, nor in an export of it."""
        self.store.audit.append(self._now(), user.id if user else "-", None, "auth.sign_in_failed",
                                email_key(user.email) if user else UNKNOWN_EMAIL,
                                {"address": address, "reason": reason})

    def _signed_in(self, user: User, method: str, address: str) -> None:
        self.store.audit.append(self._now(), user.id, None, "auth.sign_in", email_key(user.email),
                                {"method": method, "address": address})

    def sign_in_with_password(self, email: str, password: str, address: str) -> User:
        """The user whose email and password these are; Unauthenticated (the same message whatever was
        wrong) otherwise, TooManyFailures while the account or the address is paused."""
        if not email.strip() or len(email) > 320 or len(password) > PASSWORD_MAX_CHARS:
            raise Unauthenticated(BAD_CREDENTIALS)
        user = self.store.identity.user_by_email(email)
        attempt = self._count_attempt(email, user, address)
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
    def start_session(self, user_id: str) -> BrowserSession:
        """A new browser session of the user (signed in just now), carrying their session generation; up to
        SESSION_SWEEP expired sessions (anyone's) are dropped with it, so they never pile up."""
        generation = self.store.identity.session_generation(user_id)
        if generation is None:
            raise Unauthenticated("No such user")
        secret = secrets.token_urlsafe(32)
        now = self.clock()
        expires_at = iso(now + SESSION_IDLE)
        self.store.credentials.add_web_session(session_hash(secret), WebSession(user_id, generation, expires_at),
                                               iso(now), SESSION_SWEEP)
        return BrowserSession(secret, expires_at)

    def session(self, secret: str) -> LiveSession:
        """The session a cookie's secret names, read from the store on every request: an unknown or expired
        one, one of a deactivated or deleted user, or one begun before its user's generation moved on (signed
        out, a new password, a new role) gets Unauthenticated, which ends it. One in use is renewed for
        SESSION_IDLE (at most every SESSION_RENEW_AFTER)."""
        if not _session_secret_shape(secret):
            raise Unauthenticated(SESSION_ENDED)
        key, now = session_hash(secret), self.clock()
        found = self.store.credentials.web_session(key, iso(now))
        if found is None:
            raise Unauthenticated(SESSION_ENDED)
        user = self.store.identity.user(found.user_id)
        if user is None or not user.active:
            raise Unauthenticated(ACCOUNT_DEACTIVATED)
        if self.store.identity.session_generation(user.id) != found.generation:
            # dropping the row is tidying (the generation alone refuses the session), so a store refusing
            # writes skips it and the browser is still sent to sign in, not shown a 503
            self._books.kept("web.session.end", lambda: self.store.credentials.end_web_session(key))
            raise Unauthenticated(SESSION_ENDED)
        renewed = parse_iso(found.expires_at) - now < SESSION_IDLE - SESSION_RENEW_AFTER and self._books.kept(
            "web.session.renew", lambda: self.store.credentials.renew_web_session(key, iso(now + SESSION_IDLE)))
        return LiveSession(user_principal(user), found.message or "", renewed)

    def set_session_message(self, secret: str, message: str | None) -> None:
        """Keep ``message`` for the next page the session shows (None: the one shown now is done, bookkeeping a
        store refusing writes skips: the page still shows)."""
        if not _session_secret_shape(secret):
            return
        key = session_hash(secret)
        if message is None:
            self._books.kept("web.session.message", lambda: self.store.credentials.set_web_session_message(key, None))
        else:
            self.store.credentials.set_web_session_message(key, message)

    def end_session(self, secret: str) -> None:
        """End this one session (its browser signs in again, or another user signs in there)."""
        if _session_secret_shape(secret):
            self.store.credentials.end_web_session(session_hash(secret))

    def sign_out(self, p: Principal) -> None:
        """End every browser session of p's user, on every browser (a copied cookie too)."""
        self.store.identity.end_sessions(p.user_id)
        self.store.credentials.end_web_sessions(p.user_id)
