"""The plain matcher's ASCII fast path (RE2 case-insensitive literal search) finds what folding finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.search.matcher import PlainMatcher

ASCII_TEXT = st.text(alphabet="aAbBzZ \t\r\n.*(\\[", max_size=80)
NEEDLES = st.text(alphabet="aAbBzZ .*(\\[\r", min_size=1, max_size=4)


def both_paths(needle: str, text: str) -> tuple[list[object], list[object]]:
    matcher = PlainMatcher(needle, ignore_case=True)
    assert matcher._ascii_search is not None
    return list(matcher._ascii_hits(text, matcher._ascii_search)), list(matcher._folded_hits(text))


@settings(max_examples=300, deadline=None)
@given(NEEDLES, ASCII_TEXT)
def test_ascii_path_equals_folding(needle: str, text: str) -> None:
    fast, folded = both_paths(needle, text)
    assert fast == folded


def test_ascii_path_examples() -> None:
    text = "One\nMaximum DISCOUNT here, maximum discount there\r\nnone\nmaximum discount"
    fast, folded = both_paths("maximum discount", text)
    assert fast == folded
    assert [(h.line, h.column, h.text) for h in fast] == [  # type: ignore[attr-defined]
        (2, 0, "Maximum DISCOUNT here, maximum discount there"), (4, 0, "maximum discount")]


def test_non_ascii_text_or_needle_takes_the_folding_path() -> None:
    assert [h.line for h in PlainMatcher("strasse", True).hits("Die Straße\n")] == [1]
    assert PlainMatcher("straße", True)._ascii_search is not None  # folds to "strasse": ASCII
    assert [h.column for h in PlainMatcher("STRASSE", True).hits("STRASSE und Straße\n")] == [0]
    assert PlainMatcher("Kelvin \u212a", True)._ascii_search is not None  # the Kelvin sign folds to "k"
    assert [h.line for h in PlainMatcher("\u212a", True).hits("x\nk\n")] == [2]
