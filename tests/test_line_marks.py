"""Marks on a found line (services/line_marks.py): RE2 for a regex, so no pattern backtracks on a page."""

from __future__ import annotations

from notewell.services.line_marks import match_spans
from notewell.web.highlight import highlight


def test_a_regex_that_backtracks_in_python_is_marked_at_once() -> None:
    """Python's re takes about 0.1 s for this pattern over 26 letters, and 1.6 times more for each letter
    added: over 60 it would take hours. RE2 reads the line once."""
    line = "éAc " + "a" * 60 + "x ac"
    assert list(match_spans(line, "(a|aa)+c", regex=True, case="insensitive") or []) == [(1, 3), (66, 68)]


def test_marks_follow_case_and_escape_the_line() -> None:
    assert str(highlight("<b>Max</b> max", "max", regex=False, case="smart")) == (
        "&lt;b&gt;<mark>Max</mark>&lt;/b&gt; <mark>max</mark>")
    assert str(highlight("Max max", "Max", regex=False, case="smart")) == "<mark>Max</mark> max"
    assert str(highlight("a1 b22", r"\d+", regex=True, case="sensitive")) == "a<mark>1</mark> b<mark>22</mark>"
    assert str(highlight("x (", "(", regex=True, case="sensitive")) == "x ("  # refused by the engine: unmarked
