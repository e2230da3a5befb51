"""The words pg_trgm indexes: each document's distinct folded words, spelled so that pg_trgm sees every character.

pg_trgm takes trigrams from runs of letters and digits only: the literal ``_callback(`` gave it just
the word "callback", so every document with that word was a candidate and its text was rechecked (p95
476 ms against 16 ms on SQLite). Here every character other than ``a``-``y``, a digit or a space is
written as ``z`` and two symbols (ASCII) or ``zz`` and four (any other character), so ``_callback(``
becomes one word of letters and digits whose trigrams include its underscore and its bracket. The
spelling maps each character on its own, so a run of characters inside a word is a run inside the
spelled word: ``words LIKE '%spelled literal%'`` finds every document whose folded words hold the
literal. As on SQLite (store/index_words.py) a document's words are each held once, so a literal
with spaces becomes one LIKE per run of non-space characters.
"""

from __future__ import annotations

from notewell.records.plan import TRIGRAM, And, Lit, Or, Plan
from notewell.store.index_words import indexed_text

_SYMBOLS = "abcdefghijklmnopqrstuvwxy0123456789"  # every character but "z" that pg_trgm reads as a letter
_BASE = len(_SYMBOLS)


def _symbols(value: int, width: int) -> str:
    digits = []
    for _ in range(width):
        value, digit = divmod(value, _BASE)
        digits.append(_SYMBOLS[digit])
    return "".join(reversed(digits))


class _Spelling(dict[int, str]):
    """A str.translate table: ASCII filled in, any other character spelled on first sight."""

    def __missing__(self, code: int) -> str:
        spelled = "zz" + _symbols(code, 4)  # 35**4 > 0x10FFFF
        self[code] = spelled
        return spelled


_SPELLING = _Spelling({c: chr(c) if chr(c) in _SYMBOLS or c == 32 else "z" + _symbols(c, 2) for c in range(128)})


def spelled(text: str) -> str:
    """``text`` with every character pg_trgm would skip spelled in letters and digits (spaces kept)."""
    return text.translate(_SPELLING)


def indexed_words(text: str) -> str:
    """What the words column holds for a document's text."""
    return spelled(indexed_text(text))


def plan_sql(plan: Plan, column: str = "t.words") -> tuple[str, list[str]]:
    r"""A WHERE fragment for a plan: one LIKE per run of a literal, joined by AND/OR as the plan says.

    Longer runs come first in an AND: PostgreSQL rechecks each candidate region's words in the order
    written and stops at the first LIKE that fails, and a long run fails more often than a short one
    (``def \w+_callback\(`` over 170 MB: 32 ms with "def" first, 20 ms with "_callback(" first)."""
    if isinstance(plan, Lit):
        runs = sorted((run for run in plan.text.replace("\x00", " ").split() if len(run) >= TRIGRAM), key=len,
                      reverse=True)
        return "(" + " AND ".join(f"{column} LIKE %s" for _ in runs) + ")", [f"%{spelled(r)}%" for r in runs]
    assert isinstance(plan, And | Or)
    joiner = " AND " if isinstance(plan, And) else " OR "
    parts = [plan_sql(p, column) for p in plan.parts]
    if isinstance(plan, And):
        parts.sort(key=lambda part: max(len(p) for p in part[1]), reverse=True)
    return "(" + joiner.join(sql for sql, _ in parts) + ")", [p for _, params in parts for p in params]
