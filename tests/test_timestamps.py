"""notewell.timestamps.millis on fixed inputs and as a property: the External Brain's shown times are the stored
ones cut (never rounded) to the millisecond, in UTC with a Z, in the stored order; text that is no timestamp is
returned as it is. The door's test (tests/test_brain_mcp.py) sees them on times it sets."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.timestamps import iso, millis, parse_iso


@pytest.mark.parametrize(("stored", "shown"), [
    ("2026-05-26T09:14:22.999999Z", "2026-05-26T09:14:22.999Z"),  # cut: rounding would give 22.999 -> 23.000
    ("2026-05-26T09:14:22.000999Z", "2026-05-26T09:14:22.000Z"),
    ("2026-05-26T09:14:22.041500Z", "2026-05-26T09:14:22.041Z"),
    ("2026-12-31T23:59:59.999999Z", "2026-12-31T23:59:59.999Z"),  # never the next year
    ("2026-05-26T09:14:22.000000Z", "2026-05-26T09:14:22.000Z"),
    ("2026-05-26T09:14:22Z", "2026-05-26T09:14:22.000Z"),  # no fraction: three zeros
    ("2026-05-26T09:14:22.5Z", "2026-05-26T09:14:22.500Z"),  # a short fraction is padded
    ("2026-05-26T09:14:22.123456+00:00", "2026-05-26T09:14:22.123Z"),
    ("2026-05-26T09:14:22.041999+02:00", "2026-05-26T07:14:22.041Z"),  # an offset: converted to UTC
    ("2026-05-26T01:00:00.000999-05:30", "2026-05-26T06:30:00.000Z"),
    ("2026-01-01T01:30:00.999999+02:00", "2025-12-31T23:30:00.999Z"),  # across the year, backwards
])
def test_millis_cuts_to_the_millisecond_in_utc(stored: str, shown: str) -> None:
    assert millis(stored) == shown


@pytest.mark.parametrize("text", ["", "soon", "2026-13-01T00:00:00Z", "2026-05-26T25:00:00Z", "26 May 2026",
                                  "ses_0123456789abcdef0123"])
def test_millis_returns_text_that_is_no_timestamp_as_it_is(text: str) -> None:
    assert millis(text) == text


_MOMENTS = st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9999, 12, 30),
                        timezones=st.just(UTC))
_OFFSETS = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(
    lambda minutes: timezone(timedelta(minutes=minutes)))


@settings(max_examples=300, deadline=None)
@given(_MOMENTS, _OFFSETS)
def test_millis_never_rounds_up_and_is_the_same_moment_whatever_its_offset(moment: datetime,
                                                                          offset: timezone) -> None:
    shown = millis(iso(moment))
    cut = parse_iso(shown)
    assert cut <= moment < cut + timedelta(milliseconds=1)  # the millisecond the moment is in, never the next
    assert cut.microsecond % 1000 == 0 and shown.endswith("Z") and len(shown) == len("2026-05-26T09:14:22.041Z")
    assert millis(moment.astimezone(offset).isoformat()) == shown


@settings(max_examples=300, deadline=None)
@given(_MOMENTS, _MOMENTS)
def test_millis_sorts_as_the_stored_times_sort(first: datetime, second: datetime) -> None:
    """Stores sort stored times as text; the shown ones never swap (two may become equal)."""
    earlier, later = sorted([iso(first), iso(second)])
    assert millis(earlier) <= millis(later)


@pytest.mark.parametrize("tz", ["UTC", "Asia/Tokyo", "America/New_York"])
def test_a_time_without_an_offset_is_kept_as_it_is_whatever_the_machines_zone(tz: str,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A review: "2026-05-26 09:14" (no offset) was read as the machine's local time by astimezone, so the answer
    depended on TZ; such text names no moment and is returned as it is."""
    monkeypatch.setenv("TZ", tz)
    time.tzset()
    try:
        assert millis("2026-05-26 09:14") == "2026-05-26 09:14"
        assert millis("2026-05-26T09:14:22.999999") == "2026-05-26T09:14:22.999999"
    finally:
        monkeypatch.undo()
        time.tzset()
