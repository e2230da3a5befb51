"""Fenced code blocks in markdown, as CommonMark draws them: a run of three or more backticks or tildes, indented
at most three spaces, opens a block that a run of the same character at least as long, followed by nothing but
spaces, closes. A backtick run whose info string holds a backtick is no fence. Links, headings and meeting items
inside a block are code, not markdown; the vault's three readers of markdown (links, meeting items, a note's
headings) ask this one tracker."""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
MARKS = ("`", "~")  # the first character of a fence line (after at most three spaces)


class FenceTracker:
    """Fed each line of a document in order; says whether it is code (a fence line, or inside a block)."""

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: str | None = None  # the run that opened the block we are in

    def code(self, line: str) -> bool:
        opening = _FENCE.match(line) if line[:4].lstrip(" ")[:1] in MARKS else None
        if self._open is not None:
            if opening is not None:
                run = opening.group(1)
                if run[0] == self._open[0] and len(run) >= len(self._open) and not line[opening.end():].strip():
                    self._open = None
            return True
        if opening and not (opening.group(1)[0] == "`" and "`" in line[opening.end():]):
            self._open = opening.group(1)
            return True
        return False
