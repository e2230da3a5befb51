"""A note's text as the edit operations see it: lines with their endings, front matter, headings.

Lines are cut at "\\n" and "\\r\\n", and at a lone "\\r" only in a note with no "\\n" (an old Mac's;
line_endings.py; ``str.splitlines`` would also cut at form feeds and U+2028, which a note may hold in a line),
each keeping its ending, so joining them gives the text back byte for byte. A heading is an ATX heading
(``## Title``, up to three spaces of indentation, an optional closing run of ``#``) that is neither inside a
fenced code block (``` or ~~~, closed by a run of the same character at least as long) nor inside the front
matter; setext headings (a line underlined with ``===``) are not addressed.
"""

from __future__ import annotations

from dataclasses import dataclass

from notewell.services.line_endings import ended_lines
from notewell.vault.fences import FenceTracker
from notewell.vault.headings import atx_heading

_MARKS = ("#", "`", "~")  # the first character of a heading or a fence line
FRONT_MATTER_FENCE = "---"
_FRONT_MATTER_ENDS = ("---", "...")


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, each with its ending (the last one without, when the text does not end so)."""
    if "\r" not in text:  # most notes: cut at "\n" alone, without the pairs
        lines = text.split("\n")
        return [*(line + "\n" for line in lines[:-1]), *([lines[-1]] if lines[-1] else [])]
    return [line + ending for line, ending in ended_lines(text) if line or ending]


def bare(line: str) -> str:
    """A line without its ending."""
    return line.removesuffix("\n").removesuffix("\r")


def newline_of(text: str) -> str:
    """The ending a line added to ``text`` gets: the note's own when every line ends alike ("\\r\\n", or "\\r"
    on an old Mac's note; a stray "\\r" inside a line is no ending), else "\\n"."""
    if "\r" not in text:
        return "\n"
    endings = {ending for _, ending in ended_lines(text) if ending}
    return endings.pop() if len(endings) == 1 else "\n"


def as_lines(content: str, newline: str) -> list[str]:
    """``content`` as whole lines ending with ``newline`` (a last line without an ending gets one)."""
    return [bare(line) + newline for line in split_lines(content)]


def ensure_ended(lines: list[str], newline: str) -> list[str]:
    """``lines`` with the last one given an ending, so more can follow it. ``newline`` is the note's
    (``newline_of``): a last "\\r" ends a line only when it is "\\r", an old Mac's note; in any other it is a
    character of the line."""
    if lines and not lines[-1].endswith(("\n", newline)):
        return [*lines[:-1], lines[-1] + newline]
    return lines


@dataclass(frozen=True)
class Heading:
    index: int  # the 0-based line it is on
    level: int
    text: str

    @property
    def label(self) -> str:
        return f"{'#' * self.level} {self.text}"


def parse_heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line, else None."""
    heading = atx_heading(bare(line))
    if heading is None:
        return None
    level, text = heading
    return level, text.strip()


def front_matter_end(lines: list[str]) -> int:
    """The index of the line after the front matter ("---" on the first line to "---" or "..."), 0 without."""
    if not lines or bare(lines[0]).rstrip() != FRONT_MATTER_FENCE:
        return 0
    for i in range(1, len(lines)):
        if bare(lines[i]).rstrip() in _FRONT_MATTER_ENDS:
            return i + 1
    return 0


def headings(lines: list[str]) -> list[Heading]:
    """Every heading of the note, in order, skipping front matter and fenced code."""
    found: list[Heading] = []
    fences = FenceTracker()
    for i in range(front_matter_end(lines), len(lines)):
        raw = lines[i]
        first = raw.lstrip(" ")[:1]
        if first not in _MARKS:  # most lines: neither a heading nor a fence (a 1 MB note has 10,000 of them)
            continue
        line = bare(raw)
        if fences.code(line):
            continue
        parsed = parse_heading(line)
        if parsed is not None:
            found.append(Heading(i, *parsed))
    return found


def section_end(lines: list[str], all_headings: list[Heading], heading: Heading) -> int:
    """The index of the line that ends ``heading``'s section: the next heading of the same or a higher level
    (fewer #), or the end of the note."""
    for other in all_headings:
        if other.index > heading.index and other.level <= heading.level:
            return other.index
    return len(lines)


def body_end(all_headings: list[Heading], heading: Heading, end: int) -> int:
    """The index where the text directly under ``heading`` stops: its first sub-heading, or the section's end."""
    for other in all_headings:
        if heading.index < other.index < end:
            return other.index
    return end
