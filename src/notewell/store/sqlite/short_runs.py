"""Runs of one or two characters ("qz", "中文", "文") answered from the trigram index itself.

The trigram index holds every trigram of each region's words (store/index_words.py), written one after
another with a space between words, and ``region_words`` ends them with each distinct character of the
words on its own between spaces. So every pair of characters inside a word is the start of a trigram:
the pair and the next character, or the pair and the space after its word. The regions that hold the
pair "qz" are exactly those whose trigrams include one that starts with "qz", and those are read from
the index's own vocabulary (fts5vocab, which is exact and current, unlike trigram_counts) and asked
for as one OR: for ``中文`` 35 terms at 25 MB, ``qz`` 5, ``th`` 81. A single character "x" is asked for
as the trigram " x ", which only a one-character word or the closing list of characters holds: a
character that starts 7,678 trigrams ("的") is one term, not 7,678.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from notewell.store.index_words import indexed_text
from notewell.store.sqlite.trigram_shards import SHARDS, shard_name

_LAST_CHARACTER = "\U0010ffff"


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


def pair_terms(conn: sqlite3.Connection, pairs: Iterable[str]) -> dict[str, list[str]]:
    """For each pair of characters, the trigrams of the index that start with it (none: no region holds it)."""
    found: dict[str, list[str]] = {}
    for pair in dict.fromkeys(pairs):
        terms: set[str] = set()
        for shard in range(SHARDS):
            conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {_vocabulary(shard)}"
                         f" USING fts5vocab(main, {shard_name(shard)}, row)")
            terms.update(term for (term,) in conn.execute(
                f"SELECT term FROM {_vocabulary(shard)} WHERE term >= ? AND term <= ?", (pair, pair + _LAST_CHARACTER)))
        found[pair] = sorted(terms)
    return found
