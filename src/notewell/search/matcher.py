"""Finding the matching lines of one document: the verifier behind the trigram candidates.

Lines end at "\\n" or "\\r\\n"; the line's text, and what ^ and $ see, leave that end out. A plain
query is searched in the whole text, case-folded when the search ignores case; the line number comes
from counting newlines before the hit, which folding leaves in place. A regex runs over the whole text
too (RE2, linear time), and each hit is confirmed on its own line, so that a match never spans lines
and ^ and $ mean the line's start and end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import re2

from notewell.errors import InvalidArgument
from notewell.search.fold import fold

RE2_MAX_MEM = 64 << 20


@dataclass(frozen=True)
class LineHit:
    line: int  # from 1
    text: str  # the whole line, without its end
    column: int  # where the match starts in ``text``
    end: int  # where it ends (exclusive); a long line is cut so as to show the match


def _decode(line: bytes) -> str:
    return line.decode("utf-8", "surrogatepass")


class PlainMatcher:
    def __init__(self, needle: str, ignore_case: bool) -> None:
        if "\n" in needle:
            raise InvalidArgument("query", "must be a single line of text; remove the line break")
        self.ignore_case = ignore_case
        self.needle = fold(needle) if ignore_case else needle
        self._ascii_search: Callable[..., re2._Match | None] | None = None
        if ignore_case and self.needle.isascii():
            options = re2.Options()
            options.literal = True
            options.case_sensitive = False
            self._ascii_search = re2.compile(self.needle, options).search

    def hits(self, text: str) -> Iterator[LineHit]:
        if self._ascii_search is not None and text.isascii():
            return self._ascii_hits(text, self._ascii_search)
        return self._folded_hits(text)

    @staticmethod
    def _ascii_hits(text: str, search: Callable[..., re2._Match | None]) -> Iterator[LineHit]:
        """An ASCII needle in an ASCII text, ignoring case: folding is lower-casing there, which RE2's
        case-insensitive literal search does in place (over a 3 MB text: 2.2 ms against 5 ms to fold a
        copy before searching it). Offsets in the text are offsets in its bytes."""
        data = text.encode("ascii")
        m = search(data)
        line_no, counted_to = 0, 0
        while m is not None:
            pos = m.start()
            line_no += text.count("\n", counted_to, pos)
            line_start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            line = text[line_start : end if end >= 0 else len(text)]
            yield LineHit(line_no + 1, line.removesuffix("\r"), pos - line_start, m.end() - line_start)
            if end < 0:
                return
            counted_to = end
            m = search(data, end + 1)

    def _folded_hits(self, text: str) -> Iterator[LineHit]:
        hay = fold(text) if self.ignore_case else text
        needle = self.needle
        pos = hay.find(needle)
        if pos < 0:
            return
        lines = text.split("\n")
        line_no, counted_to = 0, 0
        while pos >= 0:
            line_no += hay.count("\n", counted_to, pos)
            line_start = hay.rfind("\n", 0, pos) + 1
            line = lines[line_no]
            column = pos - line_start
            if self.ignore_case:
                column = _original_column(line, column) if column else 0
                end = _original_end(line, column, len(needle))
            else:
                end = column + len(needle)
            yield LineHit(line_no + 1, line.removesuffix("\r"), column, end)
            end = hay.find("\n", pos)
            if end < 0:
                return
            counted_to = end
            pos = hay.find(needle, end + 1)


def _original_column(line: str, folded_column: int) -> int:
    """The column in ``line`` whose folded prefix is ``folded_column`` characters long."""
    length = 0
    for index, ch in enumerate(line):
        if length >= folded_column:
            return index
        length += len(fold(ch))
    return len(line)


def _original_end(line: str, column: int, folded_length: int) -> int:
    """Where a match starting at ``column`` of ``line`` ends, when its folded form is ``folded_length`` long."""
    length = 0
    for index in range(column, len(line)):
        if length >= folded_length:
            return index
        length += len(fold(line[index]))
    return len(line)


def compile_regex(pattern: str, ignore_case: bool) -> re2._Regexp:
    if "\n" in pattern:
        raise InvalidArgument("query", "a regex matches within one line; remove the line break")
    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.max_mem = RE2_MAX_MEM
    options.log_errors = False
    try:
        return re2.compile("(?m)" + pattern, options)
    except re2.error as exc:
        raw = exc.args[0] if exc.args else ""
        detail = (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)) or "invalid pattern"
        detail = detail.replace("(?m)", "", 1)
        raise InvalidArgument(
            "query", f"not a valid RE2 regular expression ({detail}); fix the pattern or search plain text"
        ) from None


class RegexMatcher:
    def __init__(self, pattern: str, ignore_case: bool) -> None:
        self.regex = compile_regex(pattern, ignore_case)
        # \A and \z mean a line's start and end here, and a pattern may turn multi-line mode off with
        # (?-m): the whole-text pass would read those against the text's start and end.
        self.per_line_only = any(s in pattern for s in ("\\A", "\\z", "-m"))

    def hits(self, text: str) -> Iterator[LineHit]:
        if self.per_line_only:
            yield from self._per_line(text)
            return
        if not text:
            return
        # RE2 works on UTF-8: encode once and keep byte offsets (a str would be re-encoded per call).
        data = text.encode("utf-8", "surrogatepass")
        if b"\r" in data:  # a line's end is not part of the line: "$" must match before a CRLF too
            data = data.replace(b"\r\n", b"\n")
        search = self.regex.search
        # A final line end closes the last line; it does not open an empty line after it.
        end = len(data) - 1 if data.endswith(b"\n") else len(data)
        m = search(data, 0, end)
        if m is None:
            return
        line_no, counted_to = 0, 0
        while m is not None:
            start = m.start()
            line_no += data.count(b"\n", counted_to, start)
            counted_to = start
            line_start = data.rfind(b"\n", 0, start) + 1
            line_end = data.find(b"\n", start)
            line = data[line_start : line_end if line_end >= 0 else len(data)]  # not split: one line is needed
            span: tuple[int, int] | None = (start - line_start, m.end() - line_start)
            if b"\n" in data[start : m.end()]:
                own = search(line)
                span = own.span() if own is not None else None
            if span is not None:
                # \C matches a single byte, so a match may start inside a character: count whole ones
                column, end_col = (len(line[:at].decode("utf-8", "ignore")) for at in span)
                yield LineHit(line_no + 1, _decode(line), column, end_col)
            next_line = line_start + len(line) + 1
            if next_line > end:
                return
            m = search(data, next_line, end)

    def _per_line(self, text: str) -> Iterator[LineHit]:
        search = self.regex.search
        for index, line in enumerate(text.removesuffix("\n").split("\n") if text else ()):
            line = line.removesuffix("\r")
            m = search(line)
            if m is not None:
                yield LineHit(index + 1, line, m.start(), m.end())
