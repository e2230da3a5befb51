"""The one timestamp form stored and compared everywhere: ISO 8601 in UTC with a Z, to the microsecond.

Every timestamp has the same width, so text order is time order: stores compare and sort them as text.
"""

from __future__ import annotations

from datetime import UTC, datetime

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def iso(moment: datetime) -> str:
    """``moment`` (an aware datetime) in the stored form."""
    return moment.astimezone(UTC).strftime(_FORMAT)


def now_iso() -> str:
    """The current time in the stored form."""
    return datetime.now(UTC).strftime(_FORMAT)


def millis(text: str) -> str:
    """A stored timestamp cut (never rounded) to the millisecond, "2026-05-26T09:14:22.041Z": the form the
    External Brain's page shows. Cutting keeps the order (two times never swap; they may become equal); text
    that is no timestamp, or names no offset (which astimezone would read as the machine's local time, so the
    answer would depend on its TZ), is returned as it is."""
    try:
        parsed = parse_iso(text)
    except ValueError:
        return text
    if parsed.tzinfo is None:
        return text
    moment = parsed.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_iso(text: str) -> datetime:
    """An aware datetime from ISO 8601 text ("Z" or an offset)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
