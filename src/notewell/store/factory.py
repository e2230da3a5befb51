"""Open the store a --db value names: a file path (SQLite) or a postgresql:// URL."""

from __future__ import annotations

from pathlib import Path

from notewell.config import is_postgres_url
from notewell.store.base import Store


def open_store(db: str, *, create: bool = True) -> Store:
    """Open (and migrate) the store at ``db``."""
    if is_postgres_url(db):
        from notewell.store.postgres import PostgresStore

        return PostgresStore.open(db)
    from notewell.store.sqlite import SqliteStore

    return SqliteStore.open(Path(db), create=create)
