"""The SQLite store: one file, WAL mode, FTS5 trigram index. The default for one machine."""

from notewell.store.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
