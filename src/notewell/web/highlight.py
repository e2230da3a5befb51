"""Marking a search's matches inside a hit's line, for the results page (display only: the engine found the line)."""

from __future__ import annotations

import re

from markupsafe import Markup, escape

MAX_MARKS = 50


def _pattern(query: str, regex: bool, case: str) -> re.Pattern[str] | None:
    ignore = case == "insensitive" or (case == "smart" and query == query.lower())
    try:
        return re.compile(query if regex else re.escape(query), re.IGNORECASE if ignore else 0)
    except re.error:  # RE2 syntax Python's re does not know: the line is shown unmarked
        return None


def highlight(text: str, query: str, *, regex: bool, case: str) -> Markup:
    """``text`` escaped, with each match (at most MAX_MARKS) in <mark>."""
    pattern = _pattern(query, regex, case)
    if pattern is None:
        return Markup(escape(text))
    out: list[str] = []
    last = 0
    for n, match in enumerate(pattern.finditer(text)):
        if n >= MAX_MARKS or match.end() == match.start():
            break
        out += [str(escape(text[last:match.start()])), f"<mark>{escape(match.group())}</mark>"]
        last = match.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))
