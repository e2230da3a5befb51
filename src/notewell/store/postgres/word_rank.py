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

A phrase of one token (all but a CJK word's, which the tokenizer splits into characters) needs only its weighed
instances in each row, and PostgreSQL counts them itself: ``ts_rank_cd`` of a query of one operand, without
normalization, is the sum of the weights of that operand's positions (each position a cover of its own, its weight
over a noise of 0), the lexemes a prefix begins included, so with the fields' weights scaled to at most 1 (its
limit) it returns the instances exactly (sums of 1, 1/2 and 1/4 are exact in a float4). So such a query's window
comes back as a few numbers a row, not as each row's tsvector as text (the bulk of the statement's output and of
Python's work); a query with a phrase of several tokens reads the positions from the text (``Scorer``).

The rows and their tokens come from ``word_totals``, kept by a trigger as rows come and go (word_totals.py),
so a search never counts the whole table. A row's length (``word_count``) is read from its tsvector's
positions: exact but for a memory over 16,383 words or with one word repeated over 256 times (PostgreSQL's
limits), the only case where the two backends may differ.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from notewell.store.postgres.lexemes import Phrase

K1 = 1.2
B = 0.75
MEMORY_FIELDS = {"A": 4.0, "B": 2.0, "D": 1.0}  # title; tags and path; content (SQLite's BM25_WEIGHTS)
ONE_FIELD = {"A": 1.0}  # a session's piece of text: FTS5's default weight

Positions = Mapping[str, tuple[Sequence[int], str]]
"""A row's positions of the query's lexemes: lexeme -> (its positions, their weights, one letter each)."""


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


def cover_weights(fields: Mapping[str, float]) -> str:
    """``ts_rank_cd``'s weights (D, C, B, A) for ``fields``, each over the largest: a position's weight is then its
    field's weight over the largest, a power of two for both field sets (exact in a float4)."""
    top = max(fields.values())
    return "{" + ",".join(repr(fields.get(letter, 0.0) / top) for letter in "DCBA") + "}"


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


def _places(written: str) -> tuple[list[int], str]:
    """``1A,2,3B`` as its positions and their weights (D where the text writes none)."""
    places: list[int] = []
    weights: list[str] = []
    for place in written.split(","):
        if place[-1].isdigit():
            places.append(int(place))
            weights.append("D")
        else:
            places.append(int(place[:-1]))
            weights.append(place[-1])
    return places, "".join(weights)


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


def bm25(idf: Sequence[float], f: Mapping[int, float], length: int, average: float) -> float:
    """FTS5's bm25 of one row (as a relevance: larger is better, SQLite's ``-bm25()``): ``f`` the weighed instances
    of each phrase the row holds (by its place in the query; one it lacks adds exactly 0), ``average`` the index's
    tokens per row. Summed in the phrases' order, each term computed as FTS5 writes it: the same double."""
    lengthened = K1 * (1 - B + B * float(length) / average)
    score = 0.0
    for i in sorted(f):
        instances = f[i]
        score += idf[i] * ((instances * (K1 + 1.0)) / (instances + lengthened))
    return score


class Scorer:
    """One query's phrases scored over many rows. A phrase of one token (most of them) needs only each matching
    lexeme's weights, counted in its text (``1A,2,3B``: one A, one B, one D); a phrase of several tokens needs
    the positions, to find its tokens in order."""

    def __init__(self, phrases: Sequence[Phrase], fields: Mapping[str, float]) -> None:
        self.phrases = phrases
        self.fields = fields
        self.pattern = lexemes_pattern(phrases)
        self.several = [i for i, p in enumerate(phrases) if len(p.tokens) > 1]
        self._counted_for: dict[str, list[int]] = {}
        # what starts each lexeme asked for in a tsvector's text: " 'token':" whole, " 'token" as a prefix
        whole = {t for p in phrases for t in (p.tokens[:-1] if p.prefix else p.tokens)}
        self._needles = sorted({f" '{t}':" for t in whole} | {f" '{p.tokens[-1]}" for p in phrases
                                                            if p.prefix and p.tokens})

    def _phrases_of(self, lexeme: str) -> list[int]:
        """The one-token phrases ``lexeme`` is an instance of."""
        found = self._counted_for.get(lexeme)
        if found is None:
            found = self._counted_for[lexeme] = [
                i for i, p in enumerate(self.phrases) if len(p.tokens) == 1
                and (lexeme.startswith(p.tokens[0]) if p.prefix else lexeme == p.tokens[0])]
        return found

    def _weighed(self, places: str) -> float:
        """The weights of the positions ``places`` writes, summed (each an integer: exact in any order)."""
        unlettered = places.count(",") + 1
        f = 0.0
        for letter in "ABC":
            n = places.count(letter)
            if n:
                f += n * self.fields[letter]
                unlettered -= n
        return f + unlettered * self.fields["D"] if unlettered else f

    def lexemes_in(self, vector: str) -> dict[str, str]:
        """The asked lexemes of a tsvector's text, each with its positions as written. Found by substring search:
        a lexeme holds no space, and but for a quote or a backslash (which FTS5's tokenizers never leave in a
        token; the regular expression reads those) is written as it is, after a space and a quote."""
        if "''" in vector or "\\" in vector:
            return {_unescaped(m.group(1)): m.group(2) for m in self.pattern.finditer(vector)}
        text = " " + vector
        out: dict[str, str] = {}
        for needle in self._needles:
            at = text.find(needle)
            while at >= 0:
                colon = text.find("':", at + 2)
                end = text.find(" ", colon)
                end = len(text) if end < 0 else end
                out[text[at + 2:colon]] = text[colon + 2:end]
                at = text.find(needle, end)
        return out

    def frequencies(self, vector: str) -> dict[int, float]:
        """The weighed instances of each phrase (by its place) the row whose tsvector's text is ``vector`` holds."""
        f: dict[int, float] = {}
        found = self.lexemes_in(vector)
        for lexeme, places in found.items():
            one = self._phrases_of(lexeme)
            if one:
                weighed = self._weighed(places)
                for i in one:
                    f[i] = f.get(i, 0.0) + weighed
        if self.several:
            positions = {lexeme: _places(places) for lexeme, places in found.items()}
            for i in self.several:
                if (instances := frequency(self.phrases[i], positions, self.fields)) > 0.0:
                    f[i] = instances
        return f


@dataclass(frozen=True)
class Counted:
    """How many rows held a phrase in a snapshot (``pg_current_snapshot()``'s text: ``xmin:xmax:xip,...``)."""

    rows: int
    snapshot: str

    @property
    def xmin(self) -> int:
        return int(self.snapshot.split(":", 1)[0])


NO_LOG = 2**64  # the log's start when a store has none (made by a version before it)


class Ranker:
    """One word index's searches ranked by bm25, as a store of one database runs them.

    It keeps, for this process, how many rows held each phrase it counted, with the snapshot of that count. A
    later search asks the database to count only the phrases it never counted, and brings each kept count to its
    own snapshot by the changes logged since (word_totals.py: the rows' words that started or stopped counting in
    transactions the kept snapshot did not see and this one does), in the same statement: one round trip, a few
    log rows read instead of every matching row. A kept count whose snapshot is older than the log's start (it
    was trimmed, or a load started it anew) is counted again. The counts are kept with ``word_totals``' own oid:
    a restore makes the tables again.

    A standby's snapshot cannot be told from: PostgreSQL lists no transaction in flight in it (in recovery they
    are known only as subtransactions, which ``pg_current_snapshot()`` leaves out), so it says a write in flight
    was seen where its rows were not, and a count kept in it would never take that write once it commits (off
    for good, or more rows than the index holds: a math domain error). Nor can a snapshot taken inside a
    transaction that writes (``Store.together``): it says that transaction is seen, whatever it writes after the
    search and whether it commits. In both, every phrase is counted in the search's own statement, and nothing is
    kept.
    """

    KEPT_MAX = 4096  # phrases kept at most (all let go when more are counted)

    def __init__(self, table: str, fields: Mapping[str, float], live: str = "TRUE",
                 counted_in: Mapping[str, str] | None = None) -> None:
        self.table = table
        self.fields = fields
        self.live = live  # the condition a row of ``table`` called x counts under
        self.counted_in = dict(counted_in or {})  # a column's rows counted in a table holding only the counted rows
        self._lock = threading.Lock()
        self._oid = -1
        self._hits: dict[tuple[str, str], Counted] = {}
        self.keeps = True  # False: a log the store could not start anew (store.py), every search counts


    def ranked(self, conn: psycopg.Connection[Any], column: str, phrases: Sequence[Phrase],
               matching: sql.Composable, params: Sequence[Any]) -> list[tuple[int, float]]:
        """The rows ``matching`` finds (a subquery naming ``(key, word_count, vector)``, its ``params``), each with
        its bm25 over ``column``, best first, then the larger key first (as SQLite orders)."""
        queries = [p.tsquery() for p in phrases]
        wanted = list(dict.fromkeys(q for q in queries if q))
        covered = all(len(p.tokens) == 1 for p in phrases if p.tokens)  # each phrase's instances counted in SQL
        oid, known = self._known(column, wanted)
        while True:
            asked = [q for q in wanted if q not in known]
            rows = conn.execute(self._window(column, asked, known, matching, wanted if covered else None), params,
                                prepare=False).fetchall()
            totals_row = next(r for r in rows if r[0] is None)
            now_oid, snapshot, untold = int(totals_row[8]), str(totals_row[9]), bool(totals_row[11]) or not self.keeps
            since = int(totals_row[10]) if totals_row[10] is not None else NO_LOG  # no log: nothing kept holds
            stale = [q for q, c in known.items() if untold or now_oid != oid or c.xmin < since]
            if not stale:
                break
            oid, known = now_oid, {q: c for q, c in known.items() if q not in stale}  # counted again
        counted = {**{q: c.rows + int(d) for (q, c), d in zip(known.items(), totals_row[7] or (), strict=True)},
                   **dict(zip(asked, (int(h) for h in totals_row[6] or ()), strict=True))}
        if not untold:
            self._keep(now_oid, column, {q: Counted(n, snapshot) for q, n in counted.items()})
        window = [r for r in rows if r[0] is not None]
        if not window:
            return []
        totals = IndexTotals(int(totals_row[4]), int(totals_row[5]), tuple(counted[q] if q else 0 for q in queries))
        idf = totals.idf()
        average = float(totals.tokens) / float(totals.rows)
        if covered:
            top = max(self.fields.values())
            places = [(i, wanted.index(q)) for i, q in enumerate(queries) if q]
            out = [(int(key), bm25(idf, {i: weighed[at] * top for i, at in places if weighed[at] > 0.0}, length,
                                   average)) for key, length, _, weighed, *_ in window]
        else:
            scorer = Scorer(phrases, self.fields)
            out = [(int(key), bm25(idf, scorer.frequencies(vector), length, average))
                   for key, length, vector, *_ in window]
        out.sort(key=lambda r: (-r[1], -r[0]))
        return out

    def _known(self, column: str, wanted: Sequence[str]) -> tuple[int, dict[str, Counted]]:
        """The oid of ``word_totals`` the kept counts are of, and those of the ``wanted`` phrases."""
        with self._lock:
            return self._oid, {q: c for q in wanted if (c := self._hits.get((column, q))) is not None}

    def _keep(self, oid: int, column: str, counted: Mapping[str, Counted]) -> None:
        with self._lock:
            if oid != self._oid or len(self._hits) + len(counted) > self.KEPT_MAX:
                self._oid, self._hits = oid, {}
            self._hits.update(((column, q), c) for q, c in counted.items())

    def _window(self, column: str, asked: Sequence[str], known: Mapping[str, Counted], matching: sql.Composable,
                covered: Sequence[str] | None) -> sql.Composed:
        """The window's statement, one snapshot: a first row (its key NULL) of the index's totals, the rows holding
        each ``asked`` phrase, each ``known`` phrase's change since its count, word_totals' oid, the snapshot and
        the log's start, whether the snapshot cannot tell what it saw (a standby's, or one inside a write), then
        each row ``matching`` finds: its key, its length, and either (``covered`` None) its tsvector as text or
        the weighed instances of each ``covered`` phrase (one token each) over the largest field weight."""
        weighed: sql.Composable = sql.SQL("NULL::real[]")
        if covered is not None:
            weighed = sql.SQL("ARRAY[{}]::real[]").format(sql.SQL(", ").join(
                sql.SQL("ts_rank_cd(CAST({} AS real[]), w.vector, CAST({} AS tsquery), 0)").format(
                    sql.Literal(cover_weights(self.fields)), sql.Literal(q)) for q in covered))
        counted, live = ((self.counted_in[column], "TRUE") if column in self.counted_in else (self.table, self.live))
        hits = sql.SQL(", ").join(
            sql.SQL("(SELECT count(*) FROM {} x WHERE x.{} @@ CAST({} AS tsquery) AND {})").format(
                sql.Identifier(counted), sql.Identifier(column), sql.Literal(q), sql.SQL(live))
            for q in asked)
        changes: sql.Composable = sql.SQL("NULL::bigint[]")
        if known:
            since = [sql.SQL("c.xid >= pg_snapshot_xmin(CAST({s} AS pg_snapshot))"
                             " AND NOT pg_visible_in_snapshot(c.xid, CAST({s} AS pg_snapshot))").format(
                                 s=sql.Literal(c.snapshot)) for c in known.values()]
            changes = sql.SQL(
                "(SELECT ARRAY[{sums}]::bigint[] FROM word_changes c WHERE c.word_index = {table} AND c.xid >= "
                "CAST({oldest} AS xid8))").format(
                sums=sql.SQL(", ").join(
                    sql.SQL("coalesce(sum(c.delta) FILTER (WHERE {since} AND c.{column} @@ CAST({q} AS tsquery)), 0)")
                    .format(since=s, column=sql.Identifier(column), q=sql.Literal(q))
                    for s, q in zip(since, known, strict=True)),
                table=sql.Literal(self.table), oldest=sql.Literal(str(min(c.xmin for c in known.values()))))
        return sql.SQL(
            "SELECT NULL::bigint, NULL::integer, NULL::text, NULL::real[], sum(live_rows), sum(tokens),"
            " ARRAY[{hits}]::bigint[],"
            " {changes}, min(tableoid)::bigint, pg_current_snapshot()::text,"
            " (SELECT since FROM word_changes_kept WHERE word_index = {table})::text,"
            " pg_is_in_recovery() OR pg_current_xact_id_if_assigned() IS NOT NULL"
            " FROM word_totals WHERE word_index = {table}"
            " UNION ALL SELECT w.key, w.word_count, {text}, {weighed}, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"
            " FROM ({matching}) w"
        ).format(hits=hits, changes=changes, table=sql.Literal(self.table), matching=matching,
                 text=sql.SQL("NULL" if covered is not None else "w.vector::text"), weighed=weighed)
