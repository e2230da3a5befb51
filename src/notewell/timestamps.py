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


def parse_iso(text: str) -> datetime:
    """An aware datetime from ISO 8601 text ("Z" or an offset)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
