"""Words as SQLite's FTS5 tokenizers see them, written as PostgreSQL tsvector and tsquery values.

Both backends must agree on what a word is, or a strict memory search would find different memories
on each. PostgreSQL's own text-search parser does not split text the way FTS5's ``unicode61`` does
(it keeps e-mail addresses, URLs, hyphenated words and version numbers whole), so the PostgreSQL store
does not parse text itself: it asks the very tokenizers the SQLite store uses (stdlib sqlite3, in
memory) for each field's tokens and their positions, and stores them as a tsvector with positions
and a weight per field. Queries are tokenized the same way and become tsquery values: phrases with
``<->``, prefixes with ``:*``. Matching and GIN indexing are then PostgreSQL's; ranking is FTS5's bm25,
computed from the tsvectors' positions (word_rank.py).

Every text and query goes through word_breaks.word_text first, as the SQLite store's word indexes read
theirs, so a Chinese, Japanese or Korean character is a word of its own on both.

``matched`` (which words of which field matched, for the "why" of a result) runs FTS5's highlight()
over the few returned rows, exactly as the SQLite store does, so both backends explain alike.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from notewell.word_breaks import unspaced, word_text

WORDS_TOKENIZER = "unicode61 remove_diacritics 2"
STEMS_TOKENIZER = "porter unicode61 remove_diacritics 2"
FIELDS: tuple[str, ...] = ("title", "content", "tags", "path")
# tsvector weights: title A, tags and path B, content D, matching SQLite's bm25 weights 4 : 2 : 2 : 1
FIELD_WEIGHTS = {"title": "A", "tags": "B", "path": "B", "content": "D"}
_LAYOUT = ("title", "tags", "path", "content")  # position order in the tsvector; the long field last
TOKENIZE_BATCH = 50
_MAX_POSITION = 16383  # PostgreSQL's largest tsvector position
_LAST = str(_MAX_POSITION)
_MAX_POSITIONS_PER_LEXEME = 256
_MAX_LEXEME_BYTES = 2046  # PostgreSQL's longest lexeme
_CUT = "\x01"  # ends a word cut to fit a lexeme: no FTS5 token holds it, so no other word is ever read as it
_UNHELD = "\x01"  # begins the lexeme counting a row's tokens its tsvector cannot hold (_tsvector)
UNHELD_SQL = "E'\\x01'"  # _UNHELD in SQL
_MARK_START, _MARK_END = "\x02", "\x03"
Matched = tuple[tuple[str, tuple[str, ...]], ...]
MemoryFields = tuple[int, str, str, str, str]  # row id, title, content, tags, path


class _Tokenizers:
    """A private in-memory SQLite database per thread holding one FTS5 table per tokenizer."""

    def __init__(self) -> None:
        self._local = threading.local()

    @property
    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(":memory:", isolation_level=None)
            for name, tokenizer in (("words", WORDS_TOKENIZER), ("stems", STEMS_TOKENIZER)):
                conn.execute(f"CREATE VIRTUAL TABLE {name} USING fts5 ({', '.join(FIELDS)}, tokenize = '{tokenizer}')")
                conn.execute(f"CREATE VIRTUAL TABLE {name}_vocab USING fts5vocab ({name}, instance)")
            self._local.conn = conn
        return conn

    def tokens(self, table: str, fields: Sequence[str]) -> dict[str, list[tuple[str, int]]]:
        """Per field, the (token, position) pairs FTS5 makes of it."""
        return self.tokens_of(table, [fields])[0]

    def tokens_of(self, table: str, rows: Sequence[Sequence[str]]) -> list[dict[str, list[tuple[str, int]]]]:
        """``tokens`` of each row's fields, in one transaction (a bulk load tokenizes a batch at once)."""
        conn = self.conn
        conn.execute("BEGIN")
        try:
            conn.executemany(f"INSERT INTO {table} (rowid, {', '.join(FIELDS)}) VALUES (?, ?, ?, ?, ?)",
                             [(i, *map(word_text, fields)) for i, fields in enumerate(rows, start=1)])
            out: list[dict[str, list[tuple[str, int]]]] = [{f: [] for f in FIELDS} for _ in rows]
            for term, doc, col, offset in conn.execute(f"SELECT term, doc, col, offset FROM {table}_vocab"):
                out[doc - 1][col].append((term, offset))
        finally:
            conn.execute("ROLLBACK")
        return out

    def matched(self, table: str, expression: str, rows: Sequence[MemoryFields]) -> dict[int, Matched]:
        conn = self.conn
        marks = ", ".join(f"highlight({table}, {i}, '{_MARK_START}', '{_MARK_END}')" for i in range(len(FIELDS)))
        conn.execute("BEGIN")
        try:
            conn.executemany(f"INSERT INTO {table} (rowid, {', '.join(FIELDS)}) VALUES (?, ?, ?, ?, ?)",
                             [(row_id, *map(word_text, fields)) for row_id, *fields in rows])
            found = conn.execute(f"SELECT rowid, {marks} FROM {table} WHERE {table} MATCH ?", (expression,)).fetchall()
        finally:
            conn.execute("ROLLBACK")
        return {
            row[0]: tuple((name, tuple(words)) for name, text in zip(FIELDS, row[1:], strict=True)
                          if (words := _marked_words(text)))
            for row in found
        }


_TOKENIZERS = _Tokenizers()


def _marked_words(text: str) -> list[str]:
    words: list[str] = []
    for part in text.split(_MARK_START)[1:]:
        word = unspaced(part.split(_MARK_END, 1)[0])
        if word and word not in words:
            words.append(word)
    return words


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _lexeme(token: str) -> str:
    """A token as a lexeme. One over PostgreSQL's longest lexeme (a word of 2,047+ bytes: a long run of letters of
    2-4 bytes, a blob) is cut to its first 2,045 bytes and ``_CUT``, in the index and in a query alike: FTS5 keeps
    it whole, and PostgreSQL refused a query holding it (the search failed) and left it out of the memory's words
    (not found by its prefix, and not counted in the memory's length, which bm25 weighs every memory by). Two such
    words differing only past their first 2,045 bytes are one word here."""
    if len(token) * 4 <= _MAX_LEXEME_BYTES:
        return token
    data = token.encode("utf-8")
    if len(data) <= _MAX_LEXEME_BYTES:
        return token
    return data[:_MAX_LEXEME_BYTES - 1].decode("utf-8", "ignore") + _CUT


def tsvector(table: str, title: str, content: str, tags: str, path: str) -> str:
    """The tsvector (as text) of a memory's fields, tokenized as the FTS5 table ``table`` would."""
    return _tsvector(_TOKENIZERS.tokens(table, (title, content, tags, path)))


def tsvectors(table: str, rows: Sequence[tuple[str, str, str, str]]) -> list[str]:
    """``tsvector`` of each (title, content, tags, path), tokenized a few dozen at a time (a third faster than
    one by one; larger batches make FTS5's vocabulary scan slower again)."""
    return [_tsvector(tokens) for start in range(0, len(rows), TOKENIZE_BATCH)
            for tokens in _TOKENIZERS.tokens_of(table, rows[start:start + TOKENIZE_BATCH])]


def _tsvector(tokens: dict[str, list[tuple[str, int]]]) -> str:
    """The tsvector text of a row's tokens. FTS5's vocabulary gives a term's offsets in a field in order and the
    fields follow one another, so each term's positions come ascending and distinct (but where they reach
    PostgreSQL's largest, which is kept once, with the first field's weight, the largest): no sort is needed, and
    the first 256 are the lowest. The tokens a tsvector cannot hold (a term's past 256, a second at the largest
    position) are counted in a lexeme of their own, ``_UNHELD`` and their number, which no query can ask for:
    the row's length in words (notewell_word_count, bm25's) is then FTS5's, so one long memory does not change
    every other's relevance. The hot loop of a bulk load's word vectors (store/postgres/lexeme_pool.py)."""
    positions: dict[str, list[str]] = {}
    base = 1
    unheld = 0
    for field in _LAYOUT:
        pairs = tokens[field]
        if not pairs:
            base += 1
            continue
        weight = FIELD_WEIGHTS[field]
        last = 0
        for term, offset in pairs:
            if offset > last:
                last = offset
            held = positions.get(term)
            at = base + offset
            if held is None:
                held = positions[term] = []
            elif len(held) >= _MAX_POSITIONS_PER_LEXEME or (at >= _MAX_POSITION and held[-1][:-1] == _LAST):
                unheld += 1
                continue
            held.append(f"{_LAST if at >= _MAX_POSITION else at}{weight}")
        base += last + 2  # one unused position between fields: a phrase never spans two of them
    words = " ".join(f"{_quote(_lexeme(term))}:{','.join(held)}" for term, held in positions.items())
    return f"{words} {_quote(f'{_UNHELD}{unheld}')}" if unheld else words


@dataclass(frozen=True)
class Phrase:
    """One term of a query as FTS5 reads it: its tokens in order, the last one a prefix or not. No tokens: a
    term of punctuation alone, which matches nothing."""

    tokens: tuple[str, ...]
    prefix: bool

    def tsquery(self) -> str | None:
        if not self.tokens:
            return None
        quoted = [_quote(t) for t in self.tokens]
        if self.prefix:
            quoted[-1] += ":*"
        return "(" + " <-> ".join(quoted) + ")"


def phrase(table: str, term: str, prefix: bool) -> Phrase:
    """``term`` tokenized as the FTS5 table ``table`` reads text."""
    return Phrase(tuple(_lexeme(t) for t, _ in sorted(_TOKENIZERS.tokens(table, (term, "", "", ""))["title"],
                                                      key=lambda t: t[1])), prefix)


def strict_phrases(terms: Sequence[str]) -> list[Phrase]:
    """The strict search's phrases: every term as a whole word."""
    return [phrase("words", t, prefix=False) for t in terms]


def tolerant_phrases(terms: Sequence[str]) -> list[Phrase]:
    """The tolerant search's phrases: each term stemmed, one of 3+ characters also as a prefix (SQLite: ``"term"*``)."""
    return [phrase("stems", t, prefix=len(t) >= 3) for t in terms]


def all_of(phrases: Sequence[Phrase]) -> str | None:
    """The tsquery matching every phrase (the strict search's); None: nothing can match."""
    queries = [p.tsquery() for p in phrases]
    if not queries or any(q is None for q in queries):
        return None
    return " & ".join(q for q in queries if q)


def any_of(phrases: Sequence[Phrase]) -> str | None:
    """The tsquery matching any phrase (the tolerant search's); None: nothing can match."""
    queries = [q for p in phrases if (q := p.tsquery())]
    return " | ".join(queries) if queries else None


def matched(table: str, expression: str, rows: Sequence[MemoryFields]) -> dict[int, Matched]:
    """Which words of each field the FTS5 ``expression`` matched, per row id (FTS5's highlight())."""
    return _TOKENIZERS.matched(table, expression, rows) if rows else {}
