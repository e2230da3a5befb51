"""ATX headings (``## Title ##``) read off one line, in time linear in the line.

Two readings, each the exact meaning of a regex the project used before, kept because what they return is
stored (titles) or addressed (a note's sections):

- ``atx_heading``: a note's or a meeting's heading, ``^ {0,3}(#{1,6})(?:[ \\t]+(.*?))?(?:[ \\t]+#+)?[ \\t]*$``
  (spaces and tabs only; ``##`` alone is an empty heading).
- ``title_heading``: a document's title, ``^\\s{0,3}#{1,6}\\s+(.+?)\\s*#*\\s*$`` (any whitespace; some text).

The regexes backtracked: their lazy text was tried at every length, each try scanning the blanks after it,
so a line of a few thousand spaces between two letters took seconds (the second, minutes), and a vault
file or a note holding one stopped the indexer. Here the text's end is found from the line's end instead.
tests/test_headings.py checks both against their regexes.
"""

from __future__ import annotations

LEVEL_MAX = 6
_BLANKS = " \t"


def _opening(line: str, blanks: str | None) -> tuple[int, int] | None:
    """(level, where the text may start) of a line that opens a heading: at most 3 leading spaces (any
    whitespace when ``blanks`` is None), then 1 to 6 ``#``; None otherwise."""
    lead = 0
    while lead < len(line) and lead < 4 and (line[lead] == " " if blanks is not None else line[lead].isspace()):
        lead += 1
    if lead > 3:
        return None
    end = lead
    while end < len(line) and line[end] == "#":
        end += 1
    level = end - lead
    return (level, end) if 1 <= level <= LEVEL_MAX else None


def atx_heading(line: str) -> tuple[int, str] | None:
    """(level, text) of a note's or meeting's heading line (``""`` for an empty one), else None."""
    opened = _opening(line, _BLANKS)
    if opened is None:
        return None
    level, end = opened
    rest = line[end:]
    if not rest:
        return level, ""
    text = rest.lstrip(_BLANKS)
    if len(text) == len(rest):  # "#x": a # not followed by a blank is no heading
        return None
    trimmed = text.rstrip(_BLANKS)
    unclosed = trimmed.rstrip("#")
    if len(unclosed) < len(trimmed) and unclosed[-1:] in (" ", "\t"):  # a closing run of # after a blank
        return level, unclosed.rstrip(_BLANKS)
    return level, trimmed


def title_heading(line: str) -> str | None:
    """The text of a heading line as a document's title reads it (never empty), else None."""
    opened = _opening(line, None)
    if opened is None:
        return None
    _, end = opened
    rest = line[end:]
    text = rest.lstrip()
    blanks = len(rest) - len(text)
    if blanks == 0:
        return None
    if not text:  # only blanks after the #: the last of them is the text, if one is left before it
        return rest[-1] if blanks >= 2 else None
    core = text.rstrip().rstrip("#").rstrip()
    return text[:max(1, len(core))]
