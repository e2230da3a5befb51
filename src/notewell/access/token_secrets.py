"""Token secrets: minting, hashing, checking, and the lifetimes people type (90d, 12h, 30m).

A secret reads ``nw_<id>_<random>``: the recognizable prefix lets secret scanners spot a leaked token,
the 12-hex-digit id finds the row without using the secret, and the random part is
``secrets.token_urlsafe(32)`` (256 bits). Only the SHA-256 of the whole secret is stored; a plain hash
is enough because the secret is random and long, so there is nothing to guess. Checking compares the
hashes with ``hmac.compare_digest`` (constant time).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from notewell.errors import InvalidArgument
from notewell.timestamps import iso, parse_iso

TOKEN_PREFIX = "nw_"
TOKEN_ID_HEX_DIGITS = 12
SECRET_BYTES = 32  # 256 bits
_SECRET_SHAPE = re.compile(r"^nw_([0-9a-f]{12})_([A-Za-z0-9_-]{43,})$")
_SECRET_INSIDE = re.compile(r"(?<![A-Za-z0-9_-])nw_[0-9a-f]{12}_[A-Za-z0-9_-]{43,}(?![A-Za-z0-9_-])")
_TOKEN_ID_SHAPE = re.compile(r"^[0-9a-f]{12}$")
_DURATION = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
MAX_LIFETIME_DAYS = 3660
TOKEN_ID_HELP = "a token id is the 12 hex characters after nw_ in the secret, shown by the token list"


@dataclass(frozen=True)
class MintedSecret:
    token_id: str
    secret: str  # shown once, never stored
    secret_hash: str


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def mint_secret() -> MintedSecret:
    token_id = secrets.token_hex(TOKEN_ID_HEX_DIGITS // 2)
    secret = f"{TOKEN_PREFIX}{token_id}_{secrets.token_urlsafe(SECRET_BYTES)}"
    return MintedSecret(token_id, secret, hash_secret(secret))


def token_id_of(secret: str) -> str | None:
    """The token id inside a well-formed secret, else None."""
    match = _SECRET_SHAPE.match(secret)
    return match.group(1) if match else None


def secrets_in(text: str) -> set[str]:
    """The whole, well-formed secrets inside ``text`` as a person pastes one: alone, quoted, after ``Bearer ``
    or ``Authorization:``, as ``NOTEWELL_TOKEN=<secret>``."""
    return set(_SECRET_INSIDE.findall(text))


def is_token_id(text: str) -> bool:
    """Whether ``text`` has a token id's shape (12 lowercase hex digits): the one text naming a token that an
    answer may repeat. Anything else may hold a secret, or part of one, and is never shown back."""
    return _TOKEN_ID_SHAPE.match(text) is not None


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret).encode("ascii"), stored_hash.encode("ascii"))


def parse_duration(value: str, field: str = "--expires") -> timedelta:
    """``90d``, ``12h``, ``30m`` or ``2w`` as a timedelta."""
    match = _DURATION.match(value)
    if not match or int(match.group(1)) <= 0:
        raise InvalidArgument(field, f"{value!r} is not a duration; write a whole number and a unit, "
                                     "such as 90d, 12h, 30m or 2w")
    seconds = int(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    if seconds > MAX_LIFETIME_DAYS * 86400:  # checked before timedelta, which overflows on huge numbers
        raise InvalidArgument(field, f"{value!r} is too long; at most {MAX_LIFETIME_DAYS}d")
    return timedelta(seconds=seconds)



def expiry_from(value: str | None, now: datetime | None = None, field: str = "--expires") -> str | None:
    """The expiry time for ``--expires`` (None or "never": no expiry) as ISO 8601 UTC."""
    if value is None or value.strip().lower() == "never":
        return None
    return iso((now or datetime.now(UTC)) + parse_duration(value, field))


def since_from(value: str, now: datetime | None = None, field: str = "--since") -> str:
    """An ISO 8601 moment from ``7d``-style durations (that long ago) or an ISO date or time."""
    if _DURATION.match(value):
        return iso((now or datetime.now(UTC)) - parse_duration(value, field))
    try:
        moment = parse_iso(value.strip())
    except ValueError:
        raise InvalidArgument(field, f"{value!r} is neither a duration (7d, 12h) nor an ISO date "
                                     "(2026-01-31 or 2026-01-31T12:00:00Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return iso(moment)
    except OverflowError:  # a moment at the edge of the calendar that UTC cannot hold (9999-12-31T23:00-05:00)
        raise InvalidArgument(field, f"{value!r} is outside the years 1 to 9999 in UTC") from None
