"""Marking a search's matches inside a hit's line, for the results page (services/line_marks.py finds them)."""

from __future__ import annotations

from markupsafe import Markup, escape

from notewell.services.line_marks import match_spans

MAX_MARKS = 50


def highlight(text: str, query: str, *, regex: bool, case: str) -> Markup:
    """``text`` escaped, with each match (at most MAX_MARKS) in <mark>."""
    spans = match_spans(text, query, regex=regex, case=case)
    if spans is None:
        return Markup(escape(text))
    out: list[str] = []
    last = 0
    for n, (start, end) in enumerate(spans):
        if n >= MAX_MARKS or end == start:
            break
        out += [str(escape(text[last:start])), f"<mark>{escape(text[start:end])}</mark>"]
        last = end
    out.append(str(escape(text[last:])))
    return Markup("".join(out))
