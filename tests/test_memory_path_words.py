"""The path-like words a memory's text may name a document by (services/memory_documents.py): the same as
the regex they were once found by, in time linear in the text (that regex took minutes on one long word)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from notewell.services.memory_documents import _named_paths

# the regex the words were found by before: right, but it backtracks from every start of a long dotless run
_REFERENCE = re.compile(r"[\w~][\w.~/-]*\.[A-Za-z0-9]{1,10}")


def _reference(content: str, project: str) -> list[tuple[str, str]]:
    keys: dict[tuple[str, str], None] = {}
    for match in _REFERENCE.finditer(content):
        word = match.group(0).rstrip(".")
        if "/" in word:
            first, _, rest = word.partition("/")
            keys[(first, rest)] = None
        keys[(project, word)] = None
        if len(keys) >= 100:
            break
    return list(keys)


@given(st.text(alphabet="ab1Z.~/-_ é中\n", max_size=60))
def test_the_words_are_those_of_the_reference_regex(content: str) -> None:
    assert _named_paths(content, "p") == _reference(content, "p")


def test_named_paths_of_ordinary_text() -> None:
    text = "See docs/pricing.md, the notes in plan.txt. and ~/x.tar.gz; not v2 or e.g or a.verylongextension1"
    assert _named_paths(text, "ops") == [
        ("docs", "pricing.md"), ("ops", "docs/pricing.md"), ("ops", "plan.txt"), ("~", "x.tar.gz"),
        ("ops", "~/x.tar.gz"), ("ops", "e.g"), ("ops", "a.verylongex")]


def test_a_text_of_one_long_word_is_read_once() -> None:
    """100,000 letters without a dot, and the same with a dot near the end: each run is walked a bounded
    number of times (the reference regex takes minutes here; this must not, or the suite's timeout ends it)."""
    assert _named_paths("x" * 100_000, "p") == []
    assert _named_paths("x" * 100_000 + ".md", "p") == [("p", "x" * 100_000 + ".md")]
    assert _named_paths("a/" * 50_000, "p") == []
    assert _named_paths("." * 100_000, "p") == []
