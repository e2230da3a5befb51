"""A session search that asks *when* as well as, or instead of, *what*.

The External Brain's page gives brain_session_search's example as "what did I do last week?": its words
are a period and words any question about one's own work holds, so searching them as words found nothing. The
period named ("today", "yesterday", "this week", "last week", "the last 3 days", "last month") becomes a window
of days, and what is left is the topic: with none, the answer is the period's sessions, newest first.

"last week" and "last month" reach back two weeks and two months, so that the previous calendar week or month
is inside the window whatever day it is asked on; "this week" and "the past week" are the last 7 days.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from notewell.services.memory_rank import STOP_WORDS, folded

_NUMBER = r"(\d+)"  # any count a person writes ("the last 10000 days"); the window stops at MAX_DAYS
MAX_DAYS = 36_525  # a hundred years: every session there is, and no date arithmetic past the calendar
_LAST = r"\b(?:in\s+)?(?:the\s+)?(?:last|past)\s+"
# (pattern, days): the first that matches names the period; a pattern with groups (the number N, its unit)
# gives its days from N: "N days ago" and "N weeks ago" reach one day or week further, so that that day or
# week is inside
_PERIODS: tuple[tuple[re.Pattern[str], Callable[[int], int]], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), days) for pattern, days in (
        (rf"{_LAST}{_NUMBER}\s+(days?)\b", lambda n: n),
        (rf"\b{_NUMBER}\s+(days?)\s+ago\b", lambda n: n + 1),
        (rf"{_LAST}{_NUMBER}\s+(weeks?)\b", lambda n: 7 * n),
        (rf"\b{_NUMBER}\s+(weeks?)\s+ago\b", lambda n: 7 * n + 7),
        (r"\ba\s+week\s+ago\b", lambda _n: 14),
        (r"\btoday\b", lambda _n: 1),
        (r"\byesterday\b", lambda _n: 2),
        (r"\b(?:this|the\s+past)\s+week\b", lambda _n: 7),
        (r"\b(?:last|previous)\s+week\b", lambda _n: 14),
        (r"\b(?:this|the\s+past)\s+month\b", lambda _n: 31),
        (r"\b(?:last|previous)\s+month\b", lambda _n: 62),
    ))
# Words a question about one's own sessions holds whatever it is about ("what did I work on", "my sessions")
_ANY_QUESTION = frozenset((
    "work", "worked", "working", "session", "sessions", "happen", "happened", "done", "recent", "recently", "lately",
    "ago", "day", "days", "week", "weeks", "month", "months"))
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Asked:
    days: int | None  # the window the query names, None when it names none
    topic: str  # the query without the period
    topical: bool  # whether the topic holds a word to look for (not only a question's words)


def asked(query: str) -> Asked:
    """The period ``query`` names, and its topic."""
    text = query
    days: int | None = None
    for pattern, days_of in _PERIODS:
        found = pattern.search(text)
        if found is not None and found.groups() and found.group(1) != "1" and not found.group(2).endswith("s"):
            continue  # "the last 2 week sprint": a number of a singular unit names a thing, not a period
        if found is not None:
            digits = found.group(1).lstrip("0") if found.groups() else ""
            count = MAX_DAYS if len(digits) > len(str(MAX_DAYS)) else int(digits or "0")  # never a vast int
            days = min(MAX_DAYS, days_of(max(1, count)))
            text = (text[:found.start()] + " " + text[found.end():]).strip()
            break
    words = _WORD.findall(folded(text))
    topical = any(w not in STOP_WORDS and w not in _ANY_QUESTION for w in words)
    return Asked(days, text if words else "", topical)
