"""The PostgreSQL store: one database shared by the indexer and any number of servers."""

from __future__ import annotations

from notewell.store.postgres.audit import PostgresAudit
from notewell.store.postgres.brain import PostgresBrain
from notewell.store.postgres.credentials import PostgresCredentials
from notewell.store.postgres.database import PostgresDatabase, redact
from notewell.store.postgres.documents import PostgresDocuments
from notewell.store.postgres.idempotency import PostgresIdempotency
from notewell.store.postgres.identity import PostgresIdentity
from notewell.store.postgres.memories import PostgresMemories


class PostgresStore:
    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db
        self.documents = PostgresDocuments(db)
        self.memories = PostgresMemories(db)
        self.identity = PostgresIdentity(db)
        self.brain = PostgresBrain(db, self.memories)
        self.audit = PostgresAudit(db)
        self.credentials = PostgresCredentials(db)
        self.idempotency = PostgresIdempotency(db)

    @classmethod
    def open(cls, url: str) -> PostgresStore:
        db = PostgresDatabase(url)
        try:
            return cls(db)
        except BaseException:
            db.close()
            raise

    @property
    def url(self) -> str:
        """The database URL without its password (fit to show)."""
        return redact(self.db.url)

    def close(self) -> None:
        self.db.close()
