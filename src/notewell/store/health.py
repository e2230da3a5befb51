"""What `notewell doctor` asks of the store itself (does its trigram index work here? is its file whole? does
what a trigger derives match its rows?), and what `notewell repair` does to it."""

from __future__ import annotations

import sqlite3

from notewell.records.integrity import DerivedRows, Integrity
from notewell.store.base import Store
from notewell.store.sqlite.index_rebuild import rebuild
from notewell.store.sqlite.integrity import check


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


def integrity(store: Store, budget_s: float | None) -> Integrity | None:
    """What damage the store's file holds, checked within ``budget_s`` (None: no limit); None on PostgreSQL,
    which checks its own pages as it reads them (and whose indexes ``rebuild_indexes`` rebuilds all the same)."""
    from notewell.store.sqlite import SqliteStore

    return check(store.db, budget_s) if isinstance(store, SqliteStore) else None


def derived_rows(store: Store, budget_s: float | None) -> DerivedRows | None:
    """How PostgreSQL's table of the live memories' stems, which a trigger derives from the memories
    (postgres/live_stems.py), compares with them, within ``budget_s`` (None: no limit); None on SQLite, which
    has no such table (its FTS5 indexes are what ``integrity`` checks)."""
    from notewell.store.postgres import PostgresStore, live_stems

    if not isinstance(store, PostgresStore):
        return None
    with store.db.connection() as conn:
        return live_stems.compared(conn, budget_s)


def rebuild_indexes(store: Store) -> list[str]:
    """Every index the store derives from its rows, rebuilt; what was rebuilt. SQLite: its FTS5 indexes, made
    again from the rows in one transaction, then a VACUUM where an index's own pages were damaged
    (sqlite/index_rebuild.py). PostgreSQL: REINDEX of each table of the schema whose owner the connecting role is
    or acts as (a superuser: every one), one at a time (each holds its table's lock while it runs); the live
    memories' stems, a table a trigger derives from the memories (postgres/live_stems.py), made equal to them first,
    the memories' writers held off meanwhile, and its trigger on; the grams of the regions holding a character
    beyond ASCII written again first (``PostgresDocuments.refill_wide_grams``)."""
    from notewell.store.postgres import PostgresStore, live_stems
    from notewell.store.postgres.documents import PostgresDocuments
    from notewell.store.sqlite import SqliteStore

    if isinstance(store, SqliteStore):
        return rebuild(store.db)
    if not isinstance(store, PostgresStore):
        raise TypeError(f"no way to rebuild the indexes of {type(store).__name__}")
    rebuilt = []
    with store.db.connection() as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            " AND pg_has_role(tableowner, 'USAGE') ORDER BY tablename").fetchall()]  # those the role may REINDEX
        for table in tables:
            quoted = '"' + table.replace('"', '""') + '"'
            if table == "document_regions":  # the grams an older writer left without wide pairs, too
                documents = store.documents
                if not isinstance(documents, PostgresDocuments):
                    raise TypeError(f"a PostgreSQL store with {type(documents).__name__} documents")
                documents.refill_wide_grams()
                conn.execute(f"REINDEX TABLE {quoted}")
            elif table == live_stems.TABLE:
                with conn.transaction():
                    conn.execute("LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE")
                    for statement in live_stems.refilled():
                        conn.execute(statement)
                    conn.execute(f"REINDEX TABLE {quoted}")  # its rows made equal keep their index: damage too
            else:
                conn.execute(f"REINDEX TABLE {quoted}")
            rebuilt.append(table)
    return rebuilt
