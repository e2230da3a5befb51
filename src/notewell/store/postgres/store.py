"""The PostgreSQL store: one database shared by the indexer and any number of servers."""

from __future__ import annotations

from notewell.store.postgres.brain import PostgresBrain
from notewell.store.postgres.database import PostgresDatabase, redact
from notewell.store.postgres.dialect import PostgresDialect
from notewell.store.postgres.documents import PostgresDocuments
from notewell.store.postgres.memories import PostgresMemories
from notewell.store.shared.audit import SqlAudit
from notewell.store.shared.credentials import SqlCredentials
from notewell.store.shared.idempotency import SqlIdempotency
from notewell.store.shared.identity import SqlIdentity
from notewell.store.shared.servers import SqlServers


class PostgresStore:
    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db
        self.documents = PostgresDocuments(db)
        self.memories = PostgresMemories(db)
        dialect = PostgresDialect(db)
        self.identity = SqlIdentity(dialect)
        self.audit = SqlAudit(dialect)
        self.credentials = SqlCredentials(dialect)
        self.brain = PostgresBrain(db, self.memories)
        self.idempotency = SqlIdempotency(dialect)
        self.servers = SqlServers(dialect)

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
