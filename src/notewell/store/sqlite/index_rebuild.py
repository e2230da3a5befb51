"""Every FTS5 index of a SQLite store made again from the rows it is derived from (`notewell repair`).

Each index is dropped and created again with the definition its migrations use, then filled. FTS5's own
'delete-all' and 'rebuild' first read and rewrite the index's shadow tables, and fail where their pages are
damaged. Where a shadow table's own pages are damaged (its ``PRAGMA quick_check``), even DROP TABLE fails: it
walks every page to free it, and a damaged page's cells point nowhere (or at another table's pages, which it
would free). Such an index's schema rows are removed instead (``writable_schema``), leaving its pages unused, and
a VACUUM after the commit writes the file again without them.
"""

from __future__ import annotations

import sqlite3

from notewell.errors import StoreDamaged
from notewell.store.sqlite.brain import SESSION_INDEX
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.memories import MEMORY_INDEX_DDL, fill_memory_index
from notewell.store.sqlite.trigram_counts import count_trigrams
from notewell.store.sqlite.trigram_shards import SHARDS, reindex_shard, shard_ddl, shard_name

_SHADOWS = ("config", "content", "data", "docsize", "idx")  # FTS5's tables behind an index (content: its own)
_PIECES = "temp.session_pieces"  # the session pieces, as the writer indexed them, while their index is made again
SESSION_WORDS = "brain_session_words"


def _definitions() -> dict[str, tuple[str, str]]:
    """Each index: the statement creating it (the migrations' own) and the one filling it again."""
    return {
        **{shard_name(s): (shard_ddl(shard_name(s)), reindex_shard(s)[1]) for s in range(SHARDS)},
        **{name: (ddl, fill_memory_index(name)) for name, ddl in MEMORY_INDEX_DDL.items()},
        SESSION_WORDS: (str(SESSION_INDEX[0]), f"INSERT INTO {SESSION_WORDS} (rowid, body, session_seq, user_id)"
                                               f" SELECT id, c0, c1, c2 FROM {_PIECES} ORDER BY id"),
    }


def rebuild(db: SqliteDatabase) -> list[str]:
    """Every FTS5 index dropped, created and filled again in one write transaction, then (when an index's own pages
    were damaged) the file vacuumed; the names of the indexes rebuilt. Raises StoreDamaged when the rows they are
    derived from cannot be read."""
    definitions = _definitions()
    damaged = [name for name in definitions if _pages_damaged(db.conn, name)]
    with db.transaction() as conn:  # its connection has the functions the fills call (notewell_region_words)
        # the session pieces' own table is their only copy: read apart from their index's pages
        conn.execute(f"CREATE TABLE {_PIECES} AS SELECT id, c0, c1, c2 FROM {SESSION_WORDS}_content")
        if damaged:
            conn.execute("PRAGMA writable_schema = ON")
            conn.executemany("DELETE FROM sqlite_master WHERE name = ?",
                             [(table,) for name in damaged for table in (name, *(f"{name}_{s}" for s in _SHADOWS))])
            conn.execute("PRAGMA writable_schema = RESET")
        for name, (ddl, fill) in definitions.items():
            if name not in damaged:
                conn.execute(f"DROP TABLE {name}")
            conn.execute(ddl)
            conn.execute(fill)
        conn.execute(f"DROP TABLE {_PIECES}")
        count_trigrams(conn)
    if damaged:  # the forgotten pages are written out of the file (outside any transaction, as VACUUM must be)
        db.conn.execute("VACUUM")
    return list(definitions)


def _pages_damaged(conn: sqlite3.Connection, index: str) -> bool:
    """Whether a page of one of ``index``'s shadow tables is damaged (a check of their b-trees alone)."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN"
                                         f" ({', '.join('?' * len(_SHADOWS))})",
                                         [f"{index}_{s}" for s in _SHADOWS]).fetchall()]
    for table in tables:
        try:
            if conn.execute(f'PRAGMA quick_check("{table}")').fetchall() != [("ok",)]:
                return True
        except (StoreDamaged, sqlite3.DatabaseError):
            return True
    return False
