"""A PostgreSQL --db value's password kept out of every message: ``redact`` shows the URL with the password as
``***``; ``scrub`` takes it out of any text that may quote it (libpq's and psycopg's errors).

Neither relies on the URL parsing well. A password holding an unencoded "@", "/", "#", "?" or "%" is read by
libpq in pieces (its user-info ends at the first "@" or "/", and the rest lands in the host, port or database
name, which its errors quote), and by urlsplit otherwise again. So the user-info is taken here as everything from
"://" to the last "@" before the query, the password as what follows its first ":", and each piece libpq may have
made of it is a secret too. ``password=`` values, in the query or in a key=value string, are secrets alike.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import psycopg
from psycopg.conninfo import conninfo_to_dict

MASK = "***"
MIN_ANYWHERE = 4  # a shorter piece of a password is replaced only where quoted ("Lk"), not inside other words

# The query starts at a "?" followed by a libpq keyword and "=": a password's own "?" rarely is.
_QUERY = re.compile(r"\?(?:host|hostaddr|port|dbname|user|password|passfile|sslmode|sslrootcert|sslcert|sslkey"
                    r"|options|application_name|connect_timeout|target_session_attrs|channel_binding|service)=")
_PASSWORD_PARAM = re.compile(r"(?i)((?:^|[?&\s])password\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]*)")
_SEPARATORS = re.compile(r"[@/?#:&=,\[\]]")  # where libpq may cut a password into pieces


def _user_info(url: str) -> tuple[str, str, str | None, str] | None:
    """(scheme and "://", user, password or None, what follows the user-info's "@"); None without user-info."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return None
    query = _QUERY.search(rest)
    at = rest.rfind("@", 0, query.start() if query else len(rest))
    if at < 0:
        at = rest.rfind("@")  # the "?user=" was the password's own
    if at < 0:
        return None
    user, colon, password = rest[:at].partition(":")
    return scheme + sep, user, password if colon else None, rest[at + 1:]


def redact(url: str) -> str:
    """The URL (or key=value string) without its password, fit for messages and logs."""
    parts = _user_info(url)
    shown = url if parts is None or parts[2] is None else f"{parts[0]}{parts[1]}:{MASK}@{parts[3]}"
    return _PASSWORD_PARAM.sub(rf"\1{MASK}", shown)


def libpq_reading(url: str) -> dict[str, str] | None:
    """The parameters libpq reads in ``url``; None when it cannot read it."""
    try:
        return {key: str(value) for key, value in conninfo_to_dict(url).items()}
    except psycopg.ProgrammingError:
        return None


def misread(url: str) -> bool:
    """Does libpq read another password in ``url`` than its text says (an unencoded "@" or "/" in it)?"""
    parts, reading = _user_info(url), libpq_reading(url)
    if parts is None or parts[2] is None or reading is None:
        return False
    return reading.get("password") != unquote(parts[2])


def _passwords(url: str) -> set[str]:
    parts = _user_info(url)
    found = {parts[2]} if parts is not None and parts[2] else set()
    found |= {match.group(2).strip("'") for match in _PASSWORD_PARAM.finditer(url) if match.group(2).strip("'")}
    reading = libpq_reading(url)
    if reading is not None and reading.get("password"):
        found.add(reading["password"])
    return found | {unquote(password) for password in found}


def _tainted(value: str, password: str) -> bool:
    """Is ``value`` (one libpq read) a piece of ``password``: the password cut at a separator, alone or with
    what followed it in the URL ("Pw9@127.0.0.1" from "Leak@Pw9"), or what preceded it?"""
    if value and value in password and _SEPARATORS.split(password).count(value):
        return True
    cuts = [match.start() for match in _SEPARATORS.finditer(password)]
    return any((password[cut + 1:] and value.startswith(password[cut + 1:]))
               or (password[:cut] and value.endswith(password[:cut])) for cut in cuts)


def secrets(url: str) -> set[str]:
    """Every text of ``url`` a message must not show: the URL itself, each password, its pieces and the values
    libpq read out of them."""
    found = {url}
    reading = libpq_reading(url) or {}
    for password in _passwords(url):
        found.add(password)
        found |= {piece for piece in _SEPARATORS.split(password) if piece}
        for value in reading.values():
            found |= {part for part in (value, *value.split(",")) if part and _tainted(part, password)}
    return found


def scrub(text: str, url: str) -> str:
    """``text`` with ``url`` shown redacted and every secret of it (``secrets``) as ``***``."""
    text = text.replace(url, redact(url))
    for secret in sorted(secrets(url) - {url}, key=len, reverse=True):
        if len(secret) >= MIN_ANYWHERE:
            text = text.replace(secret, MASK)
        else:
            for quote in "\"'":
                text = text.replace(f"{quote}{secret}{quote}", f"{quote}{MASK}{quote}")
    return text


def reason(exc: BaseException, url: str) -> str:
    """The first line of a driver's error on connecting to ``url`` (libpq's reason), scrubbed: fit to be quoted."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return scrub(lines[0], url) if lines else type(exc).__name__
