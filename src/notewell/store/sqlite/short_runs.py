"""Runs of one or two characters ("qz", "中文", "文") answered from the trigram index itself.

The trigram index holds every trigram of each region's words (store/index_words.py), written one after
another with a space between words, and ``region_words`` ends them with each distinct character of the
words on its own between spaces. So every pair of characters inside a word is the start of a trigram:
the pair and the next character, or the pair and the space after its word. The regions that hold the
pair "qz" are exactly those whose trigrams include one that starts with "qz", and those are read from
the index's own vocabulary (fts5vocab, which is exact and current, unlike trigram_counts) and asked
for as one OR: at 1 GB, 40 terms for ``qz``, 36 for ``中文``. A single character "x" is asked for as the
trigram " x ", which only a one-character word or the closing list of characters holds: a character
that starts 7,678 trigrams ("的") is one term, not 7,678.

The vocabulary counts each term's regions as it reads it, so a pair found nearly everywhere is slow to
read there (``th``, 92 terms at 1 GB: 24 ms, against 0.4 ms for ``qz``), and an OR of hundreds of terms
is slow to answer (``系统``, 266 terms: 36 ms). A pair that trigram_counts already counts in more than
``COMMON_PAIR`` regions, or that starts more than ``PAIR_TERMS_MAX`` counted trigrams, is asked for as
both its characters instead (" t " AND " h "): every region with the pair has both, and the verifier
drops the few that have them apart. The counts may be older than the index; they only choose which
of two questions to ask, and both find every region that holds the pair.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from notewell.store.index_words import indexed_text
from notewell.store.sqlite.trigram_shards import SHARDS, shard_name

_LAST_CHARACTER = "\U0010ffff"
COMMON_PAIR = 8192  # counted regions over which a pair is asked for as its two characters
PAIR_TERMS_MAX = 64  # counted trigrams it starts over which it is too


def region_words(text: str) -> str:
    """What a region's row of the trigram index holds: its distinct folded words, then each distinct
    character of them between spaces (which also puts a space after the last word)."""
    words = indexed_text(text)
    return f"{words} {' '.join(sorted(set(words) - {' '}))} "


def single_term(character: str) -> str:
    """The one trigram the regions holding ``character`` have, and no other region."""
    return f" {character} "


def _vocabulary(shard: int) -> str:
    return f"temp.notewell_vocabulary_{shard}"


def fts_term(term: str) -> str:
    """A term of an FTS5 MATCH expression."""
    return '"' + term.replace('"', '""') + '"'


def pair_terms(conn: sqlite3.Connection, pairs: Iterable[str]) -> dict[str, str | None]:
    """For each pair of characters, what a MATCH expression asks for it: any trigram of the index that starts
    with it, or both its characters when it is common; None when no region holds it."""
    found: dict[str, str | None] = {}
    for pair in dict.fromkeys(pairs):
        bounds = (pair, pair + _LAST_CHARACTER)
        terms_counted, regions_counted = conn.execute(
            "SELECT count(*), coalesce(sum(regions), 0) FROM trigram_counts WHERE trigram >= ? AND trigram <= ?",
            bounds).fetchone()
        if regions_counted > COMMON_PAIR or terms_counted > PAIR_TERMS_MAX:
            found[pair] = f"({fts_term(single_term(pair[0]))} AND {fts_term(single_term(pair[1]))})"
            continue
        terms: set[str] = set()
        for shard in range(SHARDS):
            conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {_vocabulary(shard)}"
                         f" USING fts5vocab(main, {shard_name(shard)}, row)")
            terms.update(term for (term,) in conn.execute(
                f"SELECT term FROM {_vocabulary(shard)} WHERE term >= ? AND term <= ?", bounds))
        found[pair] = "(" + " OR ".join(map(fts_term, sorted(terms))) + ")" if terms else None
    return found
