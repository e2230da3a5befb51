"""The word vectors of a store made before they read texts through word_breaks.word_text (each Chinese,
Japanese or Korean character a word, composed accents, ß as ss), computed again: run once, by the brain
after its own steps (both tables exist then).

Only the rows holding a character word_text may change are computed again, and PostgreSQL finds them itself
(a regular expression over the characters' ranges, and its own test of NFC); their vectors are computed in
Python, as every memory's and piece's are (lexemes.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from notewell.store.postgres import lexemes
from notewell.store.shared.dialect import Executor
from notewell.store.shared.migrations import Migration
from notewell.word_breaks import CHANGED_PATTERN

_BATCH = 500


def _pages(conn: Executor, select: str) -> Iterator[list[Any]]:
    """The rows ``select`` finds (id first; it takes the last id seen and a limit), a batch at a time in id
    order: a large store is never read into memory whole."""
    after = 0
    while rows := conn.execute(select, (CHANGED_PATTERN, after, _BATCH)).fetchall():
        yield rows
        after = rows[-1][0]


def _changed(conn: Executor, text: str) -> str:
    """SQL telling whether ``text`` holds what word_text changes: a character of CHANGED_PATTERN, or any other
    NFC composes (PostgreSQL's own test of it, in a UTF-8 database, the only encoding that can hold them all)."""
    utf8 = conn.execute("SELECT current_setting('server_encoding')").fetchone()[0] == "UTF8"
    return f"({text} ~ ? OR NOT ({text} IS NFC NORMALIZED))" if utf8 else f"{text} ~ ?"


def _memories(conn: Executor) -> None:
    joined = "title || content || tags || path"
    for rows in _pages(conn, f"SELECT id, title, content, tags, path FROM memories WHERE {_changed(conn, joined)}"
                             " AND id > ? ORDER BY id LIMIT ?"):
        fields = [tuple(r[1:]) for r in rows]
        conn.executemany("UPDATE memories SET words = ?::tsvector, stems = ?::tsvector WHERE id = ?",
                         list(zip(lexemes.tsvectors("words", fields), lexemes.tsvectors("stems", fields),
                                  [r[0] for r in rows], strict=True)))


def _session_pieces(conn: Executor) -> None:
    for rows in _pages(conn, f"SELECT id, body FROM brain_session_words WHERE {_changed(conn, 'body')} AND id > ?"
                             " ORDER BY id LIMIT ?"):
        conn.executemany("UPDATE brain_session_words SET words = ?::tsvector WHERE id = ?",
                         list(zip(lexemes.tsvectors("stems", [(r[1], "", "", "") for r in rows]),
                                  [r[0] for r in rows], strict=True)))


MIGRATIONS: list[Migration] = [(_memories, _session_pieces)]
