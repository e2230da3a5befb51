"""The word indexes of a store made before Chinese, Japanese and Korean characters were words of their own
(notewell/word_breaks.py), indexed again: run once, by the brain after its own steps (both tables exist then)."""

from __future__ import annotations

from notewell.store.shared.migrations import Migration
from notewell.store.sqlite.database import SPACED_SQL
from notewell.store.sqlite.memories import SPACED_FIELDS

_LIVE = "deleted_at IS NULL AND superseded_by IS NULL"
_HELD = f"{SPACED_SQL}(title || content || tags || path) <> title || content || tags || path"

MIGRATIONS: list[Migration] = [
    (
        # a live memory holding such a character: out of each index as it went in, then in again spaced
        *(statement for table in ("memory_words", "memory_stems") for statement in (
            f"INSERT INTO {table} ({table}, rowid, title, content, tags, path)"
            f" SELECT 'delete', id, title, content, tags, path FROM memories WHERE {_LIVE} AND {_HELD}",
            f"INSERT INTO {table} (rowid, title, content, tags, path)"
            f" SELECT id, {SPACED_FIELDS} FROM memories WHERE {_LIVE} AND {_HELD}",
        )),
        # the session pieces' FTS5 table keeps what it indexes: an UPDATE indexes the piece again
        f"UPDATE brain_session_words SET body = {SPACED_SQL}(body) WHERE body <> {SPACED_SQL}(body)",
    ),
]
