"""The word vectors of a store made before they read texts through word_breaks.word_text (each Chinese,
Japanese or Korean character a word, composed accents, ß as ss), computed again: run once, by the brain
after its own steps (both tables exist then).

Only the rows holding a character word_text may change are computed again, and PostgreSQL finds them itself
(a regular expression over the characters' ranges); their vectors are computed in Python, as every memory's
and piece's are (lexemes.py).
"""

from __future__ import annotations

from notewell.store.postgres import lexemes
from notewell.store.shared.dialect import Executor
from notewell.store.shared.migrations import Migration
from notewell.word_breaks import CHANGED_PATTERN

_BATCH = 500


def _memories(conn: Executor) -> None:
    rows = conn.execute("SELECT id, title, content, tags, path FROM memories"
                        " WHERE title || content || tags || path ~ ?", (CHANGED_PATTERN,)).fetchall()
    for start in range(0, len(rows), _BATCH):
        batch = rows[start:start + _BATCH]
        fields = [tuple(r[1:]) for r in batch]
        conn.executemany("UPDATE memories SET words = ?::tsvector, stems = ?::tsvector WHERE id = ?",
                         list(zip(lexemes.tsvectors("words", fields), lexemes.tsvectors("stems", fields),
                                  [r[0] for r in batch], strict=True)))


def _session_pieces(conn: Executor) -> None:
    rows = conn.execute("SELECT id, body FROM brain_session_words WHERE body ~ ?", (CHANGED_PATTERN,)).fetchall()
    for start in range(0, len(rows), _BATCH):
        batch = rows[start:start + _BATCH]
        conn.executemany("UPDATE brain_session_words SET words = ?::tsvector WHERE id = ?",
                         list(zip(lexemes.tsvectors("stems", [(r[1], "", "", "") for r in batch]),
                                  [r[0] for r in batch], strict=True)))


MIGRATIONS: list[Migration] = [(_memories, _session_pieces)]
