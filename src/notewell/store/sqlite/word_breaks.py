"""The word indexes of a store made before they read texts through word_breaks.word_text (each Chinese,
Japanese or Korean character a word, composed accents, ß as ss), indexed again where that changes a text:
run once, by the brain after its own steps (both tables exist then)."""

from __future__ import annotations

from notewell.store.shared.migrations import Migration
from notewell.store.sqlite.database import WORD_TEXT_SQL
from notewell.store.sqlite.memories import WORD_TEXT_FIELDS

_LIVE = "deleted_at IS NULL AND superseded_by IS NULL"
_HELD = f"{WORD_TEXT_SQL}(title || content || tags || path) <> title || content || tags || path"

MIGRATIONS: list[Migration] = [
    (
        # a live memory word_text changes: out of each index as it went in, then in again as word_text reads it
        *(statement for table in ("memory_words", "memory_stems") for statement in (
            f"INSERT INTO {table} ({table}, rowid, title, content, tags, path)"
            f" SELECT 'delete', id, title, content, tags, path FROM memories WHERE {_LIVE} AND {_HELD}",
            f"INSERT INTO {table} (rowid, title, content, tags, path)"
            f" SELECT id, {WORD_TEXT_FIELDS} FROM memories WHERE {_LIVE} AND {_HELD}",
        )),
        # the session pieces' FTS5 table keeps what it indexes: an UPDATE indexes the piece again
        f"UPDATE brain_session_words SET body = {WORD_TEXT_SQL}(body) WHERE body <> {WORD_TEXT_SQL}(body)",
    ),
]
