"""Where a long text may be cut so that what is kept reads well: at a line break, else at a sentence end, else at
a word boundary, else between two user-perceived characters (never inside one: not between a letter and its
combining accent, inside an emoji's ZWJ sequence or a flag's pair, or between CR and LF).

The grapheme rule is the part of Unicode's UAX #29 that a cut can break, written out because the standard
library has no grapheme segmentation: a cut is refused before a mark or any other character that extends the
one before it, before or after a zero width joiner, inside a pair of regional indicators and inside a Hangul
syllable spelled in jamo.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

from notewell.services.context_pack import sentence_ends

KEEP_AT_LEAST: Final = 0.5
"""A line break, sentence end or word boundary is taken only when it keeps at least this share of the limit."""
_ZWJ: Final = "\u200d"
_SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Cut:
    kept: int  # the text kept is text[:kept] (its trailing spaces and breaks left out)
    rest: int  # where the rest starts: past the spaces and line breaks after the cut; len(text) when nothing is left


def _extends(c: str) -> bool:
    """Whether ``c`` belongs to the character before it (UAX #29's Extend, SpacingMark and ZWJ, and the emoji
    modifiers and tags that Extend holds)."""
    o = ord(c)
    return (unicodedata.category(c) in ("Mn", "Mc", "Me") or c == _ZWJ or 0xFE00 <= o <= 0xFE0F
            or 0xE0100 <= o <= 0xE01EF or 0x1F3FB <= o <= 0x1F3FF or 0xE0020 <= o <= 0xE007F)


def _regional(c: str) -> bool:
    return 0x1F1E6 <= ord(c) <= 0x1F1FF


def _jamo(c: str) -> str:
    """A Hangul character's part in a syllable: L (leading), V (vowel), T (trailing), LV, LVT, or ""."""
    o = ord(c)
    if 0x1100 <= o <= 0x115F or 0xA960 <= o <= 0xA97C:
        return "L"
    if 0x1160 <= o <= 0x11A7 or 0xD7B0 <= o <= 0xD7C6:
        return "V"
    if 0x11A8 <= o <= 0x11FF or 0xD7CB <= o <= 0xD7FB:
        return "T"
    if 0xAC00 <= o <= 0xD7A3:
        return "LV" if (o - 0xAC00) % 28 == 0 else "LVT"
    return ""


def between_characters(text: str, at: int) -> bool:
    """Whether a cut of ``text`` at ``at`` leaves every user-perceived character whole."""
    if at <= 0 or at >= len(text):
        return True
    before, after = text[at - 1], text[at]
    if (before, after) == ("\r", "\n") or _extends(after) or before == _ZWJ:
        return False
    if _regional(before) and _regional(after):
        run = 0
        while at - run > 0 and _regional(text[at - run - 1]):
            run += 1
        return run % 2 == 0  # an even run before the cut: the cut falls between two flags
    b, a = _jamo(before), _jamo(after)
    return not ((b == "L" and a in ("L", "V", "LV", "LVT")) or (b in ("LV", "V") and a in ("V", "T"))
                or (b in ("LVT", "T") and a == "T"))


def cut_within(text: str, limit: int) -> Cut:
    """Where to cut ``text`` to at most ``limit`` characters: after its last line break, sentence end or word
    boundary that keeps at least KEEP_AT_LEAST of ``limit`` (tried in that order), else at the last place between
    two user-perceived characters. A text within ``limit`` is kept whole."""
    if len(text) <= limit:
        return Cut(len(text), len(text))
    floor = int(limit * KEEP_AT_LEAST)
    breaks = "\n" if "\n" in text else "\r"  # a lone CR breaks lines only in a text with no LF (line_endings.py)
    end = text.rfind(breaks, floor, limit + 1)
    if end > 0 and breaks == "\n" and text[end - 1] == "\r":
        end -= 1  # before the CR of a CRLF
    if end < 0:
        ends = [e for e in sentence_ends(text[: limit + 1]) if floor <= e <= limit and e < len(text)]
        end = ends[-1] if ends else -1
    if end < 0:
        spaces = [m.start() for m in _SPACE.finditer(text, floor, limit + 1)]
        end = spaces[-1] if spaces else -1
    if end < 0 or not between_characters(text, end):
        end = limit
        while end > 0 and not between_characters(text, end):
            end -= 1
    kept = len(text[:end].rstrip())
    rest = len(text) - len(text[end:].lstrip())
    return Cut(kept or end, rest)


def shortened(text: str, limit: int, mark: str = "…") -> str:
    """``text`` whole when it is at most ``limit`` characters; else its beginning, cut where ``cut_within`` cuts
    (a line break, a sentence end, a word boundary, never inside a character), followed by ``mark``: ``limit``
    characters at most in all."""
    if len(text) <= limit:
        return text
    return text[: cut_within(text, limit - len(mark)).kept] + mark
