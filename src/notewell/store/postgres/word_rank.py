"""SQLite's word relevance computed on PostgreSQL: FTS5's bm25, from the tsvector positions of a row.

The SQLite store ranks a memory search by FTS5's ``bm25()`` (weights title 4, content 1, tags 2, path 2).
PostgreSQL's ``ts_rank`` is another formula: it does not weigh a word by its rarity, so the same query
ordered the same memories differently on the two backends (a rule sharing a word that half the memories
hold came first on one and far down on the other). So the PostgreSQL store computes bm25 itself, as
``fts5_aux.c`` does, from what FTS5 would read:

- per phrase of the query (a term: its tokens in a row, the last a prefix or not), the rows of the whole
  index holding it (``hits``, counted with the GIN index) against all of them (``rows``): its rarity,
  ``idf = ln((rows - hits + 0.5) / (hits + 0.5))``, 1e-6 when that is not above 0;
- per memory, each phrase's instances, each weighed by the field it starts in (the tsvector's weights:
  A title 4, B tags and path 2, D content 1), and the memory's length in tokens against the average;
- ``score = sum over phrases of idf x f x (k1 + 1) / (f + k1 x (1 - b + b x length / average))``, k1 1.2,
  b 0.75, in FTS5's order of operations so that both give the same number, not only the same order.

The rows and their tokens come from ``word_totals``, kept by a trigger as rows come and go (word_totals.py),
so a search never counts the whole table. A row's length (``word_count``) is read from its tsvector's
positions: exact but for a memory over 16,383 words or with one word repeated over 256 times (PostgreSQL's
limits), the only case where the two backends may differ.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import sql

from notewell.store.postgres.lexemes import Phrase

K1 = 1.2
B = 0.75
MEMORY_FIELDS = {"A": 4.0, "B": 2.0, "D": 1.0}  # title; tags and path; content (SQLite's BM25_WEIGHTS)
ONE_FIELD = {"A": 1.0}  # a session's piece of text: FTS5's default weight

Positions = Mapping[str, tuple[Sequence[int], str]]
"""A memory's positions of the query's lexemes: lexeme -> (its positions, their weights, one letter each)."""


@dataclass(frozen=True)
class IndexTotals:
    """What FTS5 knows of its whole index: its rows, their tokens, and how many rows hold each phrase."""

    rows: int
    tokens: int
    hits: tuple[int, ...]  # per phrase, in the query's order

    def idf(self) -> list[float]:
        out = []
        for hits in self.hits:
            idf = math.log((self.rows - hits + 0.5) / (hits + 0.5))
            out.append(idf if idf > 0.0 else 1e-6)
        return out


def _escaped(lexeme: str) -> str:
    """A lexeme as a tsvector's text writes it between its quotes."""
    return lexeme.replace("\\", "\\\\").replace("'", "''")


def _unescaped(written: str) -> str:
    return re.sub(r"''|\\\\", lambda m: "'" if m.group(0) == "''" else "\\", written)


def lexemes_pattern(phrases: Sequence[Phrase]) -> re.Pattern[str]:
    """What finds, in a tsvector's text (``'lexeme':1A,2,3B``), the lexemes the phrases need and their positions:
    each token whole, and the lexemes a phrase's last token begins when it is a prefix."""
    whole: set[str] = set()
    prefixes: set[str] = set()
    for p in phrases:
        for i, token in enumerate(p.tokens):
            (prefixes if p.prefix and i == len(p.tokens) - 1 else whole).add(_escaped(token))
    choices = [re.escape(w) for w in sorted(whole)] + [re.escape(p) + r"(?:[^']|'')*" for p in sorted(prefixes)]
    return re.compile(r"(?:^| )'(" + "|".join(choices or [r"(?!)"]) + r")':([0-9A-D,]+)")


def positions_of(vector: str, pattern: re.Pattern[str]) -> dict[str, tuple[list[int], str]]:
    """The positions (and their weights, D where the text writes none) of the lexemes ``pattern`` finds."""
    out: dict[str, tuple[list[int], str]] = {}
    for found in pattern.finditer(vector):
        places: list[int] = []
        weights: list[str] = []
        for place in found.group(2).split(","):
            if place[-1].isdigit():
                places.append(int(place))
                weights.append("D")
            else:
                places.append(int(place[:-1]))
                weights.append(place[-1])
        out[_unescaped(found.group(1))] = (places, "".join(weights))
    return out


def _where(positions: Positions, token: str, prefix: bool) -> dict[int, str]:
    """The positions of ``token`` (of any lexeme it begins, for a prefix) with their weights."""
    if not prefix:
        found = positions.get(token)
        return dict(zip(found[0], found[1], strict=True)) if found else {}
    out: dict[int, str] = {}
    for lexeme, (places, weights) in positions.items():
        if lexeme.startswith(token):
            out.update(zip(places, weights, strict=True))
    return out


def frequency(phrase: Phrase, positions: Positions, fields: Mapping[str, float]) -> float:
    """The phrase's instances in a row, each weighed by the field it starts in (``fields``: weight letter ->
    the field's weight)."""
    if not phrase.tokens:
        return 0.0
    last = len(phrase.tokens) - 1
    first = _where(positions, phrase.tokens[0], phrase.prefix and last == 0)
    rest = [set(_where(positions, t, phrase.prefix and i == last)) for i, t in enumerate(phrase.tokens) if i > 0]
    f = 0.0
    for start in sorted(first):
        if all(start + i in places for i, places in enumerate(rest, start=1)):
            f += fields[first[start]]
    return f


def bm25(phrases: Sequence[Phrase], idf: Sequence[float], totals: IndexTotals, length: int,
         positions: Positions, fields: Mapping[str, float]) -> float:
    """FTS5's bm25 of one row (as a relevance: larger is better, SQLite's ``-bm25()``)."""
    average = float(totals.tokens) / float(totals.rows)
    score = 0.0
    for p, weight in zip(phrases, idf, strict=True):
        f = frequency(p, positions, fields)
        score += weight * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * float(length) / average)))
    return score


def scored(phrases: Sequence[Phrase], window: Sequence[tuple[Any, ...]], fields: Mapping[str, float]
           ) -> list[tuple[int, float]]:
    """Each row of a search's ``window`` with its bm25, best first, then the larger key first (as SQLite orders).

    A window row is ``(live_rows, tokens, hits, key, word_count, vector)``: the index's totals (the same on every
    row; NULLs after them when nothing matched), then one matching row's key, its length and its tsvector as
    text, of which only the query's lexemes are read (a regular expression in C: reading them in SQL, with
    ``unnest``, took PostgreSQL 5 to 10 times the CPU of its ``ts_rank``)."""
    if not window or window[0][3] is None:
        return []
    totals = IndexTotals(int(window[0][0]), int(window[0][1]), tuple(int(h) for h in window[0][2]))
    idf = totals.idf()
    pattern = lexemes_pattern(phrases)
    out = [(int(key), bm25(phrases, idf, totals, length, positions_of(vector, pattern), fields))
           for *_, key, length, vector in window]
    out.sort(key=lambda r: (-r[1], -r[0]))
    return out


def hits_sql(table: str, column: str, phrases: Sequence[Phrase], live: str = "TRUE") -> sql.Composed:
    """Per phrase, the statement's count of the rows of ``table`` (whose ``live`` holds) that hold it: FTS5's
    rows of a phrase, over the whole index (every project and person, as FTS5 counts)."""
    return sql.SQL(", ").join(
        sql.SQL("(SELECT count(*) FROM {} x WHERE x.{} @@ CAST({} AS tsquery) AND {})").format(
            sql.Identifier(table), sql.Identifier(column), sql.Literal(q), sql.SQL(live))
        if (q := p.tsquery()) else sql.SQL("0") for p in phrases)


def window_sql(table: str, hits: sql.Composable, matching: sql.Composable) -> sql.Composed:
    """The statement of a search's window (see ``scored``): ``hits`` from ``hits_sql``, ``matching`` a subquery of
    the matching rows as ``(key, word_count, vector)``."""
    return sql.SQL(
        "SELECT t.live_rows, t.tokens, t.hits, w.key, w.word_count, w.vector::text"
        " FROM (SELECT sum(live_rows) AS live_rows, sum(tokens) AS tokens, ARRAY[{hits}]::bigint[] AS hits"
        " FROM word_totals WHERE word_index = {table}) t LEFT JOIN LATERAL ({matching}) w ON true"
    ).format(hits=hits, table=sql.Literal(table), matching=matching)
