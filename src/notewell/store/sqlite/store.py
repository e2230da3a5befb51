"""The SQLite store: a database file holding every repository."""

from __future__ import annotations

from pathlib import Path

from notewell.errors import ConfigError
from notewell.store.shared.audit import SqlAudit
from notewell.store.shared.credentials import SqlCredentials
from notewell.store.shared.idempotency import SqlIdempotency
from notewell.store.shared.identity import SqlIdentity
from notewell.store.sqlite.brain import SqliteBrain
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.dialect import SqliteDialect
from notewell.store.sqlite.documents import SqliteDocuments
from notewell.store.sqlite.memories import SqliteMemories


class SqliteStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        self.documents = SqliteDocuments(db)
        self.memories = SqliteMemories(db)
        dialect = SqliteDialect(db)
        self.identity = SqlIdentity(dialect)
        self.audit = SqlAudit(dialect)
        self.credentials = SqlCredentials(dialect)
        self.brain = SqliteBrain(db, self.memories)
        self.idempotency = SqlIdempotency(dialect)

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
