"""The SQLite store: a database file holding every repository."""

from __future__ import annotations

from pathlib import Path

from notewell.errors import ConfigError
from notewell.store.sqlite.audit import SqliteAudit
from notewell.store.sqlite.brain import SqliteBrain
from notewell.store.sqlite.credentials import SqliteCredentials
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.documents import SqliteDocuments
from notewell.store.sqlite.idempotency import SqliteIdempotency
from notewell.store.sqlite.identity import SqliteIdentity
from notewell.store.sqlite.memories import SqliteMemories


class SqliteStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        self.documents = SqliteDocuments(db)
        self.memories = SqliteMemories(db)
        self.identity = SqliteIdentity(db)
        self.brain = SqliteBrain(db, self.memories)
        self.audit = SqliteAudit(db)
        self.credentials = SqliteCredentials(db)
        self.idempotency = SqliteIdempotency(db)

    @classmethod
    def open(cls, path: Path, *, create: bool = True) -> SqliteStore:
        if not path.exists():
            if not create:
                raise ConfigError(f"--db: no index at {path}; run 'notewell index' first")
            path.parent.mkdir(parents=True, exist_ok=True)
        return cls(SqliteDatabase(path))

    @property
    def url(self) -> str:
        return str(self.db.path)

    def close(self) -> None:
        self.db.close()
