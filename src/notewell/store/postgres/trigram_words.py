"""The words pg_trgm reads: each region's distinct folded words, spelled so that pg_trgm sees every character.

pg_trgm takes trigrams from runs of letters and digits only: the literal ``_callback(`` gave it just
the word "callback", so every document with that word was a candidate and its text was rechecked (p95
476 ms against 16 ms on SQLite). Here every character other than ``a``-``y``, a digit or a space is
written as ``z`` and two symbols (ASCII) or ``zz`` and four (any other character), so ``_callback(``
becomes one word of letters and digits whose trigrams include its underscore and its bracket. The
spelling maps each character on its own, so a run of characters inside a word is a run inside the
spelled word: looking for the spelled literal in the words finds every region whose folded words hold
the literal. As on SQLite (store/index_words.py) a region's words are each held once, so a literal
with spaces becomes one condition per run of non-space characters.

The index is not pg_trgm's operator class but a GIN over the array of each region's trigrams
(``show_trgm(words)``, pg_trgm's own extraction, under COLLATE "C"), asked with ``@>`` for a literal's trigrams
(``index_sql``). pg_trgm's ``LIKE`` is lossy: PostgreSQL rechecked every region its index named,
reading and scanning the region's words (about 25 µs each; a regex at 1 GB named 3,444 regions, 90 ms),
while ``@>`` over an array is exact, so the index alone answers. The candidates are the regions that
hold every trigram of the literal anywhere among their words, which the engine's verifier narrows as
it does on SQLite. ``words_sql`` tests a region's words for the spelled literal, for a region already in
hand: every word that holds the literal passes, and rarely another (a spelled run can begin inside a
character's spelling), which the verifier drops.

Every character other than ``a``-``y`` and the digits spells to three or six, so a run of one or two
characters such as "中", "ζq" or "_" still has trigrams. The runs left without one are those of one or two
of ``a``-``y`` and the digits ("th", "e", "42"): each region keeps them in ``grams`` (``region_grams``),
the distinct pairs of those characters that stand together in its words and the distinct characters, an
array under a GIN index asked with ``@>``, exact as the trigram array is. A region an older version
wrote has no grams yet (NULL) and is a candidate for every such run until the store fills them in.

Two characters beyond ASCII that stand together ("中文") are in ``grams`` too, spelled (``wide_pairs``). A
character's spelling starts with ``zz`` and ends in its own four symbols, so a trigram across two of them
holds nothing of the second but that it is one: the trigrams of "中文" were those of 中, of 文, and of 中
followed by any such character, and a region was
named wherever 中 stood before any Chinese character and 文 stood anywhere (in the Chinese manual pages, 2,540
regions named for the 1,510 that hold the word). With the pairs, the index names the regions whose words hold
each pair, and a literal of two such characters, as one of two letters or digits, is answered exactly
(``index_exact``): its regions are read without testing their words again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from notewell.records.plan import TRIGRAM, And, Lit, Or, Plan, indexed_runs, trigrams
from notewell.store.index_words import indexed_text

_SYMBOLS = "abcdefghijklmnopqrstuvwxy0123456789"  # every character but "z" that pg_trgm reads as a letter
_BASE = len(_SYMBOLS)
_IS_SYMBOL = np.zeros(256, dtype=bool)  # by UTF-8 byte: a non-ASCII character's bytes are never symbols
_IS_SYMBOL[list(_SYMBOLS.encode())] = True
_TWO = re.compile("..", re.DOTALL)
_WIDE_RUN = re.compile(r"[^\x00-\x7f\s]{2,}")  # characters beyond ASCII standing together
WIDE_PAIRS_ASKED = 12  # a literal's pairs of such characters asked of the index at most, spread over it


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


def index_terms(text: str) -> tuple[str, list[str]]:
    """What the words column (spelled for pg_trgm) and the grams column hold for a region's text."""
    words = indexed_text(text)
    return spelled(words), region_grams(words)


def region_grams(words: str) -> list[str]:
    """What the grams column holds for a region whose folded words (``indexed_text``) are ``words``: the
    distinct pairs of symbols that stand together, then the distinct symbols, each in byte order. In
    numpy, on the UTF-8 bytes: ten times faster than a set of Python strings (0.25 ms against 2.5 for
    16 KB of Python source), and a build computes it for every region."""
    data = np.frombuffer(words.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    symbol = _IS_SYMBOL[data]
    pairs = np.unique((data[:-1].astype(">u2") << 8 | data[1:])[symbol[:-1] & symbol[1:]])
    return [*_TWO.findall(pairs.astype(">u2").tobytes().decode("ascii")),
            *np.unique(data[symbol]).tobytes().decode("ascii"), *sorted(wide_pairs(words))]


def wide_pairs(text: str) -> set[str]:
    """The distinct pairs of characters beyond ASCII that stand together in ``text``, each spelled (twelve
    letters and digits: longer than any other element of ``grams``, and never a surrogate PostgreSQL refuses)."""
    if text.isascii():  # most regions of most vaults: no search of the text (64 µs for 16 KB of Python source)
        return set()
    return {spelled(run[i : i + 2]) for run in _WIDE_RUN.findall(text) for i in range(len(run) - 1)}


def _asked_pairs(lit: Lit) -> list[str]:
    """The wide pairs a region's words must hold for a literal, at most WIDE_PAIRS_ASKED spread over it."""
    pairs = sorted(wide_pairs(" ".join(indexed_runs(lit.text.replace("\x00", " ")))))
    if len(pairs) <= WIDE_PAIRS_ASKED:
        return pairs
    step = (len(pairs) - 1) / (WIDE_PAIRS_ASKED - 1)
    return list(dict.fromkeys(pairs[round(i * step)] for i in range(WIDE_PAIRS_ASKED)))


def in_grams(lit: Lit) -> bool:
    """Whether ``grams`` holds every run of ``lit`` the index is asked for: runs of two or more characters
    beyond ASCII (their pairs) and runs spelled in fewer than three characters ("ab", "7")."""
    runs = indexed_runs(lit.text.replace("\x00", " "))
    return bool(runs) and all(len(spelled(run)) < TRIGRAM or (len(run) >= 2 and _WIDE_RUN.fullmatch(run))
                              for run in runs)


def grams_asked(lit: Lit) -> list[str]:
    """What a region's grams must hold for a literal ``in_grams``: its wide pairs and its short runs."""
    return list(dict.fromkeys([*_asked_pairs(lit), *(spelled(run) for run in short_runs(lit))]))


def index_exact(plan: Plan) -> bool:
    """Whether every region the index names for ``plan`` holds it in its words: a literal that is one run of
    two letters or digits, or of two characters beyond ASCII (a pair ``grams`` holds as it stands)."""
    if not isinstance(plan, Lit):
        return False
    runs = plan.text.replace("\x00", " ").split()
    if len(runs) != 1 or len(runs[0]) != 2:
        return False
    return in_grams(plan)


def _runs(lit: Lit) -> list[str]:
    """The literal's runs that spell to a trigram or more."""
    return [run for run in indexed_runs(lit.text.replace("\x00", " ")) if len(spelled(run)) >= TRIGRAM]


def short_runs(lit: Lit) -> list[str]:
    """The literal's runs that spell to fewer than three characters: the grams a region must hold."""
    return [run for run in indexed_runs(lit.text.replace("\x00", " ")) if len(spelled(run)) < TRIGRAM]


def words_sql(plan: Plan, column: str) -> tuple[str, list[str]]:
    r"""A WHERE fragment testing a region's words for a plan: one ``strpos`` per run of a literal, joined
    by AND/OR as the plan says. A spelled run holds only letters and digits, so this is ``LIKE
    '%run%'``, but about three times faster (at 1 GB, 5 µs a region against 18).

    Longer runs come first in an AND: PostgreSQL tests them in the order written and stops at the
    first that fails, and a long run fails more often than a short one (``def \w+_callback\(`` over
    170 MB: 32 ms with "def" first, 20 ms with "_callback(" first)."""
    if isinstance(plan, Lit):
        runs = sorted(indexed_runs(plan.text.replace("\x00", " ")), key=lambda run: len(spelled(run)), reverse=True)
        return "(" + " AND ".join(f"strpos({column}, %s) > 0" for _ in runs) + ")", [spelled(r) for r in runs]
    joiner = " AND " if isinstance(plan, And) else " OR "
    parts = [words_sql(p, column) for p in plan.parts]
    if isinstance(plan, And):
        parts.sort(key=lambda part: max(len(p) for p in part[1]), reverse=True)
    return "(" + joiner.join(sql for sql, _ in parts) + ")", [p for _, params in parts for p in params]


def spelled_trigrams(lit: Lit) -> list[str]:
    """The trigrams a region's words must all hold for a literal (at most 12 spread over each run)."""
    return list(dict.fromkeys(gram for run in _runs(lit) for gram in trigrams(spelled(run))))


RAREST = 3  # trigrams of a literal asked of the index at least, when the statistics list some as common


def asked_trigrams(lit: Lit, shares: Mapping[str, float] | None) -> list[str]:
    """The trigrams of a literal the index is asked for. With ``shares`` (term_shares.py: the share of regions
    holding each trigram the statistics list as common), those it does not list, each held by fewer regions
    than any listed; when fewer than ``RAREST`` are unlisted, the ``RAREST`` rarest. Without, all of them.
    Any subset of a literal's trigrams names every region the whole set names, and the words test drops
    the few more; leaving out the common ones spares the index their long posting lists (at 1 GB:
    "levenshtein" 2.1 -> 0.9 ms, "subprocess" 3.7 -> 2.0, "zipfile" 1.9 -> 0.7, the same regions or 4% more)."""
    grams = spelled_trigrams(lit)
    if shares is None:
        return grams
    unlisted = [gram for gram in grams if gram not in shares]
    return unlisted if len(unlisted) >= RAREST else sorted(grams, key=lambda gram: shares.get(gram, 0.0))[:RAREST]


_CONTAINS = 'show_trgm({column}) @> %s::text[] COLLATE "C"'  # the index's collation, or it goes unused
_HOLDS = "({column} @> %s::text[] OR {column} IS NULL)"  # NULL: grams not filled in yet (see above)


def _terms_sql(grams: list[str], pairs: list[str], column: str, grams_column: str) -> tuple[str, list[list[str]]]:
    parts = [(_CONTAINS.format(column=column), grams)] if grams else []
    if pairs and not grams:  # never both: see index_sql
        parts.append((_HOLDS.format(column=grams_column), pairs))
    if not parts:
        return "TRUE", []
    return "(" + " AND ".join(sql for sql, _ in parts) + ")", [terms for _, terms in parts]


def index_sql(plan: Plan, column: str, grams_column: str,
              shares: Mapping[str, float] | None = None) -> tuple[str, list[list[str]]]:
    """A WHERE fragment the indexes answer exactly for a plan: ``show_trgm(words) @> trigrams`` and
    ``grams @> short runs``, or ``grams`` alone (wide pairs and short runs) when every literal of the plan is
    made of runs it holds (``in_grams``: "中文", "中文 ab"). Never both in one AND: beside a literal's trigrams the
    planner could take the grams' index (for "ab", held nearly everywhere) and compute every named region's
    trigrams (0.75 s for 3,000 regions), so beside trigrams short runs are not asked (the words test and the
    verifier drop what they would have). The literals under an AND share one array of each (one index scan
    that takes the rarest term first, not one scan per literal and a bitmap AND). ``shares``: see
    asked_trigrams."""
    return _index_sql(plan, column, grams_column, shares, all(in_grams(lit) for lit in literals(plan)))


def _and_parts(plan: And) -> list[Plan]:
    """The parts of an AND, those of the ANDs within it too (``a.*b.*cd`` is an AND within an AND)."""
    return [q for p in plan.parts for q in (_and_parts(p) if isinstance(p, And) else [p])]


def literals(plan: Plan) -> list[Lit]:
    """Every literal of ``plan``, nested ones too."""
    return [plan] if isinstance(plan, Lit) else [lit for part in plan.parts for lit in literals(part)]


def _index_sql(plan: Plan, column: str, grams_column: str, shares: Mapping[str, float] | None,
               wide: bool) -> tuple[str, list[list[str]]]:
    if isinstance(plan, Lit):
        if wide:
            return _terms_sql([], grams_asked(plan), column, grams_column)
        return _terms_sql(asked_trigrams(plan, shares), [spelled(g) for g in short_runs(plan)], column, grams_column)
    if isinstance(plan, Or):
        parts = [_index_sql(p, column, grams_column, shares, wide) for p in plan.parts]
        return "(" + " OR ".join(sql for sql, _ in parts) + ")", [p for _, params in parts for p in params]
    every = _and_parts(plan)
    lits = [p for p in every if isinstance(p, Lit)]
    grams = [] if wide else list(dict.fromkeys(g for p in lits for g in asked_trigrams(p, shares)))
    pairs = list(dict.fromkeys(pair for p in lits for pair in grams_asked(p))) if wide else \
        list(dict.fromkeys(spelled(g) for p in lits for g in short_runs(p)))
    parts = [_index_sql(p, column, grams_column, shares, wide) for p in every if not isinstance(p, Lit)]
    if grams or pairs:
        parts.insert(0, _terms_sql(grams, pairs, column, grams_column))
    asks_grams = f"{grams_column} @>"
    if any("show_trgm(" in sql and asks_grams not in sql for sql, _ in parts):  # never both: see index_sql
        parts = [(sql, params) for sql, params in parts if asks_grams not in sql]
    return "(" + " AND ".join(sql for sql, _ in parts) + ")", [p for _, params in parts for p in params]
