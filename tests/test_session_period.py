"""The period a session search names, and its topic (services/session_period.py): the windows docs/brain.md
gives, and ordinary queries that name no period left whole."""

from __future__ import annotations

import pytest

from notewell.services.session_period import asked

CASES = [
    ("what did I do last week?", 14, False), ("What did I work on yesterday", 2, False), ("today", 1, False),
    ("my sessions this week", 7, False), ("the last 3 days", 3, False), ("in the past 10 days", 10, False),
    ("3 days ago", 4, False), ("last 2 weeks", 14, False), ("2 weeks ago", 21, False), ("a week ago", 14, False),
    ("this month", 31, False), ("what happened last month", 62, False),
    ("billing bug last week", 14, True), ("Stripe webhook retries", None, True),
    ("week 42 planning", None, True), ("the last day of the sprint", None, True), ("sessions", None, False),
    ("the last 2 week sprint", None, True), ("the last 1 week", 7, False),
    # a probe: "the last 10000 days" searched for the word 10000 and found nothing
    ("the last 10000 days", 10000, False), ("the last 36525 days", 36525, False),
    ("the last 999999999 weeks", 36525, False), ("123456789 days ago", 36525, False),
]


@pytest.mark.parametrize(("query", "days", "topical"), CASES)
def test_the_period_and_whether_a_topic_is_left(query: str, days: int | None, topical: bool) -> None:
    found = asked(query)
    assert (found.days, found.topical) == (days, topical), found


def test_the_topic_is_the_query_without_its_period() -> None:
    assert asked("billing bug last week").topic == "billing bug"
    assert asked("fix the flaky pricing test").topic == "fix the flaky pricing test"  # no period: the query whole
