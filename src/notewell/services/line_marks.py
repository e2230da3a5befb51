"""Where a search's query matches inside one line the engine found, for a page to mark (display only).

A regex is compiled by the engine's RE2 (``search/matcher.py``), never by Python's ``re``: ``re`` would try the
pattern again at every position of the line, and a pattern such as ``(a|aa)+c`` backtracks for minutes over a
run of a few dozen letters that RE2 reads in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from notewell.errors import InvalidArgument
from notewell.search.matcher import compile_regex


def match_spans(line: str, query: str, *, regex: bool, case: str) -> Iterator[tuple[int, int]] | None:
    """The (start, end) of each match of ``query`` in ``line``, in characters, left to right; None when the
    engine refuses the regex (the page then shows the line unmarked)."""
    ignore = case == "insensitive" or (case == "smart" and query == query.lower())
    if not regex:
        return (m.span() for m in re.finditer(re.escape(query), line, re.IGNORECASE if ignore else 0))
    try:
        return (m.span() for m in compile_regex(query, ignore).finditer(line))
    except InvalidArgument:
        return None
