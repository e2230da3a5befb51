"""Folding's ASCII fast path (``str.lower``) folds as full case folding does, and so the index words too."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.fold import fold
from notewell.store.index_words import indexed_text


def casefolded(text: str) -> str:
    """What fold gives by definition: full case folding, the dot of a folded İ dropped."""
    return text.casefold().replace("i\u0307", "i")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_text_folds_as_casefold_does(text: str) -> None:
    assert fold(text) == casefolded(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("aAzZ iI\t\n\x00\x1f.\u00df\u0130\u0307\u03a3\u03c2\u212a\u2028")))
def test_any_text_folds_as_casefold_does(text: str) -> None:
    assert fold(text) == casefolded(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127)) | st.text(alphabet="aAbB \n\x00\u00df\u0130\u0085"))
def test_index_words_are_the_distinct_casefolded_words_in_order(text: str) -> None:
    words = casefolded(text).replace("\x00", " ").split()
    assert indexed_text(text) == " ".join(w for n, w in enumerate(words) if w not in words[:n])


def test_examples() -> None:
    assert fold("Straße İstanbul") == "strasse istanbul"
    assert fold("MAXIMUM Discount\n") == "maximum discount\n"
    assert indexed_text("Def DEF def\x00x x\n") == "def x"
