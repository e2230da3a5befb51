"""How many regions hold each trigram, so that a query asks FTS5 for its rarest trigrams only.

FTS5 answers an AND of trigrams by reading each one's list of rows, so a common trigram costs what
its list costs whatever the others hold: "levenshtein" (nine trigrams, four of them in 40,000 to
64,000 regions of the 1 GB library corpus) took 3.6 ms, its three rarest trigrams 0.2 ms for nearly
the same rows (66 against 60; the verifier drops the extra). FTS5 keeps no count it can give cheaply,
so the counts are taken from its vocabulary (fts5vocab), about 3.4 s of CPU per GB of text, and kept in
``trigram_counts``: after a large sync on the store's connection, after a first build by each scratch
shard's thread (trigram_shards.py). Counts that drift after smaller syncs only make a
choice less sharp, never a result wrong: any subset of a literal's trigrams finds every region the
whole set finds. A trigram missing from the table is counted as rare (it came after the count).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence

from notewell.store.sqlite.trigram_shards import SHARDS, shard_name

RAREST = 3  # trigrams asked of FTS5 per run of a literal

DDL = "CREATE TABLE trigram_counts (trigram TEXT PRIMARY KEY, regions INTEGER NOT NULL) WITHOUT ROWID"


def count_trigrams(conn: sqlite3.Connection) -> None:
    """Recount every trigram of the shards into ``trigram_counts`` (in ``conn``'s transaction)."""
    vocabularies = []
    for shard in range(SHARDS):
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocabulary_{shard}"
                     f" USING fts5vocab(main, {shard_name(shard)}, row)")
        vocabularies.append(f"SELECT term, doc FROM temp.vocabulary_{shard}")
    conn.execute("DELETE FROM trigram_counts")
    conn.execute("INSERT INTO trigram_counts (trigram, regions) SELECT term, sum(doc) FROM"
                 f" ({' UNION ALL '.join(vocabularies)}) GROUP BY term")


def replace_counts(conn: sqlite3.Connection, counts: Iterable[tuple[str, int]]) -> None:
    """``counts`` (each trigram's number of regions, taken elsewhere: ParallelShardBuild.trigram_counts) in
    place of ``trigram_counts``' rows (in ``conn``'s transaction)."""
    conn.execute("DELETE FROM trigram_counts")
    conn.executemany("INSERT INTO trigram_counts (trigram, regions) VALUES (?, ?)", counts)


def trigram_counts(conn: sqlite3.Connection, grams: Sequence[str]) -> dict[str, int]:
    if not grams:
        return {}
    return dict(conn.execute(
        f"SELECT trigram, regions FROM trigram_counts WHERE trigram IN ({','.join('?' * len(grams))})", list(grams)))


def rarest(grams: Sequence[str], counts: Mapping[str, int]) -> list[str]:
    """The ``RAREST`` trigrams of one run that the fewest regions hold; all of them when none was counted
    (a store not counted yet)."""
    if not any(g in counts for g in grams):
        return list(grams)
    return sorted(grams, key=lambda g: counts.get(g, 0))[:RAREST]
