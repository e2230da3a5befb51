"""What `notewell doctor` asks of the store itself: does its trigram index work here?"""

from __future__ import annotations

import sqlite3

from notewell.store.base import Store


def trigram_problem(store: Store) -> str | None:
    """None when the store's trigram index is available; else what is missing, with the fix."""
    from notewell.store.postgres import PostgresStore

    if isinstance(store, PostgresStore):
        with store.db.connection() as conn:
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'pg_trgm'").fetchone()
        if row is None:
            return ("PostgreSQL has no pg_trgm extension in this database; install it (Debian: postgresql-contrib) "
                    "and run CREATE EXTENSION pg_trgm as a superuser")
        return None
    memory = sqlite3.connect(":memory:")
    try:
        memory.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
    except sqlite3.Error as exc:
        return (f"this Python's SQLite {sqlite3.sqlite_version} has no FTS5 trigram tokenizer ({exc}); use a Python "
                "built with SQLite 3.34 or newer")
    finally:
        memory.close()
    return None


def trigram_name(store: Store) -> str:
    from notewell.store.postgres import PostgresStore

    return "pg_trgm" if isinstance(store, PostgresStore) else f"FTS5 trigram (SQLite {sqlite3.sqlite_version})"
