"""Finding the matching lines of one document: the verifier behind the trigram candidates.

A document arrives as the UTF-8 bytes the store keeps (no decoding of whole texts: only the lines shown
are decoded). Lines end at "\\n" or "\\r\\n"; the line's text, and what ^ and $ see, leave that end out.
A plain query is searched in the whole text; the line number comes from counting newlines before the
hit. A needle of caseless characters (Chinese, Japanese, ...) is searched for as it is, ignoring case or
not. Ignoring case, an ASCII needle is found in an ASCII text lower-cased, and in any other text by RE2's
case-insensitive search, where only lines that RE2 cannot judge alone are case-folded (``PlainMatcher``);
a needle that folds to non-ASCII folds the whole text, which never moves a newline. A regex runs over the
whole text too (RE2, linear time), and each hit is confirmed on its own line, so that a match never spans
lines and ^ and $ mean the line's start and end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import re2

from notewell.errors import InvalidArgument
from notewell.fold import fold

RE2_MAX_MEM = 8 << 20  # RE2's own default: a regex's compiled program and DFA caches stay within it
# The non-ASCII characters whose fold holds an ASCII character (ß → "ss", the ligature ﬁ → "fi", the
# Kelvin sign → "k", ...; a test recomputes the list from str.casefold). With the combining dot above
# that fold() drops after an "i", they are what RE2's case-insensitive search does not see as folding does.
FOLDS_TO_ASCII = ("\u00df\u0130\u0149\u017f\u01f0\u1e96\u1e97\u1e98\u1e99\u1e9a\u1e9e\u212a"
                  "\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06")
_FOLDS_APART = FOLDS_TO_ASCII + "\u0307"
# The characters without case (a character's upper, lower and fold are itself) that the fold of some other
# character holds: ŉ → "ʼn", İ → "i̇", ΐ → "ΐ", ... (a test recomputes the list from str.casefold).
# Any other caseless character, as CJK and kana, is found by folding exactly where it stands.
UNCASED_FOLD_PARTS = "\u02bc\u02be\u0300\u0301\u0307\u0308\u030a\u030c\u0313\u0331\u0342"

Search = Callable[..., "re2._Match | None"]


@dataclass(frozen=True)
class LineHit:
    line: int  # from 1
    text: str  # the whole line, without its end
    column: int  # where the match starts in ``text``
    end: int  # where it ends (exclusive); a long line is cut so as to show the match


def _decode(line: bytes) -> str:
    return line.decode("utf-8", "surrogatepass")


def _chars(line: bytes, offset: int) -> int:
    """How many characters the first ``offset`` bytes of ``line`` hold."""
    return len(line[:offset].decode("utf-8", "ignore"))


def is_caseless(needle: str) -> bool:
    """Is ``needle`` found in a folded text exactly where its own bytes stand in the text as it is?

    True when each character is caseless and no other character's fold holds it: folding then maps each of
    them to itself and makes them from nothing else, so a run of them in the fold is the same run in the text.
    """
    return all(ch == ch.upper() == ch.lower() == ch.casefold() and ch not in UNCASED_FOLD_PARTS for ch in needle)


def _options(case_sensitive: bool) -> re2.Options:
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.max_mem = RE2_MAX_MEM
    options.log_errors = False
    return options


class PlainMatcher:
    def __init__(self, needle: str, ignore_case: bool) -> None:
        if "\n" in needle:
            raise InvalidArgument("query", "must be a single line of text; remove the line break")
        self.ignore_case = ignore_case
        self.needle = fold(needle) if ignore_case else needle
        self._needle_bytes = self.needle.encode("utf-8", "surrogatepass")
        self._mixed_search: Search | None = None
        # ignoring case changes nothing for a needle of caseless characters (CJK, kana, digits, ...)
        self._caseless = ignore_case and not self.needle.isascii() and is_caseless(self.needle)
        if ignore_case and self.needle.isascii():
            # the needle ignoring case, or a character that folds apart as it is: the first of either, in
            # one pass (ignoring case, [K] with the Kelvin sign would find an ASCII "k" too)
            options = _options(case_sensitive=True)
            pattern = f"(?i:{re2.escape(self.needle)})|[{_FOLDS_APART}]"
            self._mixed_search = re2.compile(pattern, options).search

    def hits(self, data: bytes) -> Iterator[LineHit]:
        if "\r" in self.needle and b"\r\n" in data:  # the CR of a CRLF ends the line: it is not in the line
            data = data.replace(b"\r\n", b"\n")
        if not self.ignore_case or self._caseless:
            return self._found_hits(data, data)
        if self._mixed_search is not None:
            if data.isascii():
                # folding is lower-casing there, and bytes.lower() keeps every offset: about 1 ns a byte,
                # against 4 for RE2's case-insensitive literal search through its binding
                return self._found_hits(data, data.lower())
            return self._mixed_hits(data, self._mixed_search)
        return self._folded_hits(data)

    def _mixed_hits(self, data: bytes, search: Search) -> Iterator[LineHit]:
        """An ASCII needle in a text that is not all ASCII, ignoring case, without folding the whole text.

        Folding a non-ASCII text costs about 12 ms per MB (it was 88% of a selective search over real
        documents). In a line without a character of ``_FOLDS_APART``, only ASCII characters fold to
        ASCII, so the fold holds the needle exactly where RE2's case-insensitive search finds it. One
        RE2 pass finds the needle or such a character, whichever comes first; an ASCII line found is a
        hit as it stands, any other line found is folded and checked on its own.
        """
        m = search(data)
        line_no, counted_to = 0, 0
        while m is not None:
            pos = m.start()
            line_start = data.rfind(b"\n", 0, pos) + 1
            line_end = data.find(b"\n", pos)
            if line_end < 0:
                line_end = len(data)
            line_no += data.count(b"\n", counted_to, line_start)
            counted_to = line_start
            line = data[line_start:line_end]
            if line.isascii():
                yield LineHit(line_no + 1, line.decode("ascii").removesuffix("\r"), pos - line_start,
                              m.end() - line_start)
            else:
                found = self._line_hit(line_no + 1, _decode(line))
                if found is not None:
                    yield found
            if line_end >= len(data):
                return
            m = search(data, line_end + 1)

    def _line_hit(self, number: int, line: str) -> LineHit | None:
        """The needle's first place in one line, folded, with the column and end in the line itself."""
        folded_column = fold(line).find(self.needle)
        if folded_column < 0:
            return None
        column = _original_column(line, folded_column) if folded_column else 0
        return LineHit(number, line.removesuffix("\r"), column, _original_end(line, column, len(self.needle)))

    def _found_hits(self, data: bytes, hay: bytes) -> Iterator[LineHit]:
        """The needle's UTF-8 bytes found in ``hay``: ``data`` itself (case-sensitive; UTF-8 never matches
        inside a character), or an ASCII ``data`` lower-cased (same offsets); the lines come from ``data``."""
        needle = self._needle_bytes
        pos = hay.find(needle)
        line_no, counted_to = 0, 0
        while pos >= 0:
            line_no += data.count(b"\n", counted_to, pos)
            line_start = data.rfind(b"\n", 0, pos) + 1
            end = data.find(b"\n", pos)
            line = data[line_start : end if end >= 0 else len(data)]
            column = _chars(line, pos - line_start)
            yield LineHit(line_no + 1, _decode(line).removesuffix("\r"), column, column + len(self.needle))
            if end < 0:
                return
            counted_to = end
            pos = hay.find(needle, end + 1)

    def _folded_hits(self, data: bytes) -> Iterator[LineHit]:
        """A needle that folds to non-ASCII, ignoring case: the whole text folded."""
        text = _decode(data)
        hay = fold(text)
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
            column = _original_column(line, column) if column else 0
            end = _original_end(line, column, len(needle))
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
    options = _options(case_sensitive=not ignore_case)
    try:
        return re2.compile("(?m)" + pattern, options)
    except re2.error as exc:
        raw = exc.args[0] if exc.args else ""
        detail = (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)) or "invalid pattern"
        detail = detail.replace("(?m)", "", 1)
        if "pattern too large" in detail:
            raise InvalidArgument("query", f"needs more than the {RE2_MAX_MEM >> 20} MB a regex may use; use smaller "
                                           "repetition counts or fewer alternatives") from None
        raise InvalidArgument(
            "query", f"not a valid RE2 regular expression ({detail}); fix the pattern or search plain text"
        ) from None


class RegexMatcher:
    def __init__(self, pattern: str, ignore_case: bool) -> None:
        self.regex = compile_regex(pattern, ignore_case)
        # \A and \z mean a line's start and end here, and a pattern may turn multi-line mode off with
        # (?-m): the whole-text pass would read those against the text's start and end.
        self.per_line_only = any(s in pattern for s in ("\\A", "\\z", "-m"))

    def hits(self, data: bytes) -> Iterator[LineHit]:
        if self.per_line_only:
            yield from self._per_line(_decode(data))
            return
        if not data:
            return
        # RE2 works on UTF-8 and so does the store: byte offsets throughout (a str would be re-encoded per call)
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
                column, end_col = (_chars(line, at) for at in span)
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
