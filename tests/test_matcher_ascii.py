"""The plain matcher's fast paths (an ASCII text lower-cased, and RE2's case-insensitive search over mixed texts
where only the lines RE2 cannot judge are folded) find what folding the whole text finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.fold import fold
from notewell.search.matcher import FOLDS_TO_ASCII, UNCASED_FOLD_PARTS, PlainMatcher

ASCII_TEXT = st.text(alphabet="aAbBzZ \t\r\n.*(\\[", max_size=80)
NEEDLES = st.text(alphabet="aAbBzZ .*(\\[\r", min_size=1, max_size=4)
# ASCII beside what folds apart (ß, ẞ, the ligature ﬀ, İ, a combining dot, the Kelvin sign, long s) and
# what folds one to one (é, Σ/σ/ς)
MIXED_TEXT = st.text(alphabet="aAbBfFsSiIkK \r\n.\u00df\u1e9e\ufb00\u0130\u0307\u212a\u017f\u00e9\u03a3\u03c3\u03c2",
                     max_size=60)
MIXED_NEEDLES = st.text(alphabet="aAbBfFsSiIkK .\u00df\ufb00\u0130\u212a", min_size=1, max_size=4)


def both_paths(needle: str, text: str) -> tuple[list[object], list[object]]:
    matcher = PlainMatcher(needle, ignore_case=True)
    assert matcher._mixed_search is not None
    data = text.encode()
    return list(matcher._found_hits(data, data.lower())), list(matcher._folded_hits(data))


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
    assert [h.line for h in PlainMatcher("strasse", True).hits("Die Straße\n".encode())] == [1]
    assert PlainMatcher("straße", True)._mixed_search is not None  # folds to "strasse": ASCII
    assert [h.column for h in PlainMatcher("STRASSE", True).hits("STRASSE und Straße\n".encode())] == [0]
    assert PlainMatcher("Kelvin \u212a", True)._mixed_search is not None  # the Kelvin sign folds to "k"
    assert [h.line for h in PlainMatcher("\u212a", True).hits(b"x\nk\n")] == [2]


@settings(max_examples=500, deadline=None)
@given(MIXED_NEEDLES, MIXED_TEXT)
def test_mixed_text_path_equals_folding(needle: str, text: str) -> None:
    matcher = PlainMatcher(needle, ignore_case=True)
    if matcher._mixed_search is None:  # a needle that folds to non-ASCII always folds the whole text
        return
    data = text.encode()
    mixed = list(matcher._mixed_hits(data, matcher._mixed_search))
    assert mixed == list(matcher._folded_hits(data))
    assert [h.line for h in mixed] == [n for n, line in enumerate(text.removesuffix("\n").split("\n"), 1)
                                       if text and matcher.needle in fold(line)]


def test_mixed_text_folds_only_what_it_must() -> None:
    text = "Gr\u00fc\u00dfe\nplain maximum\nthe MAXIMUM \u00e9t\u00e9\nSTRASSE\nStra\u00dfe \ufb01le\n"
    matcher = PlainMatcher("strasse", True)
    assert matcher._mixed_search is not None
    assert [(h.line, h.column, h.end) for h in matcher.hits(text.encode())] == [(4, 0, 7), (5, 0, 6)]
    assert [(h.line, h.column) for h in PlainMatcher("maximum", True).hits(text.encode())] == [(2, 6), (3, 4)]
    assert [(h.line, h.column) for h in PlainMatcher("file", True).hits(text.encode())] == [(5, 7)]


def test_folds_to_ascii_lists_every_such_character() -> None:
    """Recomputed from this Python's Unicode tables, so a newer Unicode cannot add one unnoticed."""
    computed = [c for c in map(chr, range(0x80, 0x110000)) if any(f.isascii() for f in c.casefold())]
    assert "".join(computed) == FOLDS_TO_ASCII


# Caseless needles (CJK, kana, digits) beside text that folds in every way: capitals, ß, İ with its dot,
# ŉ (folds to "ʼn"), ΐ (to ι and two combining marks) and the marks on their own
CASELESS_TEXT = st.text(alphabet="中文件設定して1 aA\r\n\u00df\u0130\u0307\u0149\u02bc\u0390\u0308\u0301\u03b9",
                        max_size=60)
CASELESS_NEEDLES = st.text(alphabet="中文件設定して1 ", min_size=1, max_size=3)


@settings(max_examples=500, deadline=None)
@given(CASELESS_NEEDLES, CASELESS_TEXT)
def test_a_caseless_needle_is_found_as_folding_finds_it(needle: str, text: str) -> None:
    if needle.isascii():  # digits and spaces alone take the ASCII path
        return
    matcher = PlainMatcher(needle, ignore_case=True)
    assert matcher._caseless
    data = text.encode()
    assert list(matcher.hits(data)) == list(matcher._folded_hits(data))


def test_a_needle_with_a_cased_or_fold_made_character_folds() -> None:
    assert not PlainMatcher("中a", True)._caseless
    assert not PlainMatcher("\u02bc", True)._caseless  # caseless, but ŉ folds to "ʼn"
    assert [h.line for h in PlainMatcher("\u02bc", True).hits("x\n\u0149\n".encode())] == [2]
    assert [(h.line, h.column, h.end) for h in PlainMatcher("文件", True).hits("Ein 文件\nZZ 文件 文件\n".encode())] \
        == [(1, 4, 6), (2, 3, 5)]


def test_uncased_fold_parts_lists_every_such_character() -> None:
    """Recomputed from this Python's Unicode tables, like FOLDS_TO_ASCII."""
    parts = {p for c in map(chr, range(0x110000)) if c.casefold() != c for p in c.casefold() if p != c}
    computed = sorted(p for p in parts if p == p.upper() == p.lower() == p.casefold())
    assert "".join(computed) == UNCASED_FOLD_PARTS


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\r\n", min_size=1, max_size=4).filter(lambda n: "\n" not in n and "\r" in n),
       st.text(alphabet="ab\r\n", max_size=60), st.booleans())
def test_a_needle_with_cr_never_finds_the_cr_of_a_crlf(needle: str, text: str, ignore_case: bool) -> None:
    """A line ends at "\n" or "\r\n" and its text leaves that end out, as the regex matcher sees it: "\r"
    finds only a lone CR, and "b\r" no line ending in "b" before a CRLF."""
    pieces = text.split("\n")  # each followed by "\n" but the last: a CR before it ends the line
    lines = [p.removesuffix("\r") for p in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    want = [n for n, line in enumerate(lines, 1) if needle in line]
    assert [h.line for h in PlainMatcher(needle, ignore_case).hits(text.encode())] == want
