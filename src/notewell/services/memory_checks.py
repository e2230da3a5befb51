"""A memory's fields checked once, each refusal naming its field and the fix: its type, text, tags, expiry,
the wider filters, and a limit."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from notewell.access.token_secrets import since_from
from notewell.errors import InvalidArgument, not_unicode
from notewell.records.memories import MEMORY_TYPES, Narrowing
from notewell.timestamps import iso, parse_iso

MAX_FILTER_CHARS = 200
MAX_TAGS = 20
MAX_TAG_CHARS = 64
_TITLE_FROM_CONTENT = 80


def default_title(content: str) -> str:
    line = line_of(next((ln.strip().lstrip("#").strip() for ln in content.splitlines() if ln.strip()), ""))
    if len(line) <= _TITLE_FROM_CONTENT:
        return line
    cut = line[:_TITLE_FROM_CONTENT].rsplit(" ", 1)[0]
    return (cut or line[:_TITLE_FROM_CONTENT]) + "…"


def check_limit(limit: object, field_name: str, maximum: int, minimum: int = 1) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise InvalidArgument(field_name, f"must be a whole number from {minimum} to {maximum}")
    if limit < minimum or limit > maximum:
        raise InvalidArgument(field_name, f"must be from {minimum} to {maximum} (got {limit})")
    return limit


def check_memory_type(memory_type: object, field_name: str = "memory_type", *, filtering: bool = False) -> str:
    """A memory's type; ``filtering``: a search's filter, where % (any) is taken too (and named)."""
    if memory_type not in MEMORY_TYPES:
        either = f"{', '.join(MEMORY_TYPES)}{', or % for any' if filtering else ''}"
        raise InvalidArgument(field_name, f"unknown memory_type {memory_type!r}; use one of {either}")
    return str(memory_type)


def check_unicode(field_name: str, value: str) -> None:
    why = not_unicode(value)
    if why is not None:
        raise InvalidArgument(field_name, why)


def check_text(field_name: str, value: str) -> None:
    """A NUL character has no place in a memory, and PostgreSQL cannot store one: refuse it on every backend; nor
    has a lone surrogate (not_unicode)."""
    if "\x00" in value:
        raise InvalidArgument(field_name, "contains a NUL character (\\x00); remove it")
    check_unicode(field_name, value)


# What a one-line field (a title, a path, a tag) may not hold: control characters (C0, DEL, C1: a terminal
# runs ESC sequences and rings BEL) and the bidirectional overrides and isolates (a path shown as ...exe.txt)
_NOT_IN_A_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def unprintable(value: str) -> str | None:
    """The first character ``check_line`` refuses in ``value``, if any."""
    found = _NOT_IN_A_LINE.search(value)
    return found.group() if found else None


def check_line(field_name: str, value: str) -> None:
    """A one-line field holds no control character and no bidirectional override: refused, named."""
    check_unicode(field_name, value)
    found = _NOT_IN_A_LINE.search(value)
    if found:
        raise InvalidArgument(field_name, f"contains the control character U+{ord(found.group()):04X} at "
                                          f"{found.start()}; a {field_name.rstrip('s')} is one line of text: remove it")


def line_of(text: str) -> str:
    """``text`` with a space for each character ``check_line`` refuses (a title taken from a first line)."""
    return _NOT_IN_A_LINE.sub(" ", text)


def check_tags(tags: Sequence[str] | None) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str):
        tags = [t for t in re.split(r"[,\s]+", tags) if t]
    cleaned = list(dict.fromkeys(t.strip() for t in tags if isinstance(t, str) and t.strip()))
    if len(cleaned) > MAX_TAGS:
        raise InvalidArgument("tags", f"has {len(cleaned)} tags; use at most {MAX_TAGS}")
    for tag in cleaned:
        check_line("tags", tag)
    long = [t for t in cleaned if len(t) > MAX_TAG_CHARS]
    if long:
        raise InvalidArgument("tags", f"{long[0][:20]!r}… is longer than {MAX_TAG_CHARS} characters")
    return tuple(cleaned)


def check_expiry(expires_at: str | None, memory_type: str) -> str | None:
    if expires_at is None or expires_at == "":
        return None
    if memory_type != "working":
        raise InvalidArgument("expires_at", "only a working memory expires; drop expires_at or use memory_type working")
    try:
        at = parse_iso(expires_at)
    except ValueError:
        raise InvalidArgument("expires_at", f"{expires_at!r} is not an ISO 8601 time such as 2026-12-31T18:00:00Z") \
            from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    if at <= datetime.now(UTC):
        raise InvalidArgument("expires_at", "is in the past; give a future time")
    return iso(at)


def narrowing(*, author: str | None = None, token: str | None = None, tags: Sequence[str] = (),
              created_since: str | None = None, created_until: str | None = None) -> Narrowing:
    """The wider filters (author's user id, token id, tags that must all be there, creation time from and
    until: ISO 8601 or a duration ago such as 7d), checked, each refusal naming its field."""
    for name, value in (("author", author), ("token", token), *(("tags", t) for t in tags)):
        if value is not None:
            check_text(name, value)
            if len(value) > MAX_FILTER_CHARS:
                raise InvalidArgument(name, f"is longer than {MAX_FILTER_CHARS} characters")
    return Narrowing(author_user_id=author or None, author_token_id=token or None, tags=check_tags(tags),
                     created_since=since_from(created_since, field="createdSince") if created_since else None,
                     created_until=since_from(created_until, field="createdUntil") if created_until else None)
