"""A store over its dialect: the repositories written once (identity, audit, credentials, idempotency, servers,
the notes' journal, links, meaning, memories' documents, the job queue) beside the backend's documents, memories,
brain, table walk and backups, which its subclass makes and passes in."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from notewell.store.base import MemoryRepository
from notewell.store.shared.audit import SqlAudit
from notewell.store.shared.backups import SqlBackups
from notewell.store.shared.brain import SqlBrain
from notewell.store.shared.credentials import SqlCredentials
from notewell.store.shared.dialect import Dialect
from notewell.store.shared.documents import SqlDocuments
from notewell.store.shared.idempotency import SqlIdempotency
from notewell.store.shared.identity import SqlIdentity
from notewell.store.shared.jobs import SqlJobs
from notewell.store.shared.journal import SqlJournal
from notewell.store.shared.kea import SqlKea
from notewell.store.shared.kea_budget import SqlKeaBudget
from notewell.store.shared.links import SqlLinks
from notewell.store.shared.meaning import SqlMeaning
from notewell.store.shared.memory_documents import SqlMemoryDocuments
from notewell.store.shared.servers import SqlServers
from notewell.store.shared.tables import SqlTables


class SqlStore:
    def __init__(self, dialect: Dialect, documents: SqlDocuments, memories: MemoryRepository, brain: SqlBrain,
                 tables: SqlTables, backups: SqlBackups) -> None:
        self.documents = documents
        self.links = SqlLinks(dialect)  # after the documents: its table refers to theirs
        self.memories = memories
        self.memory_documents = SqlMemoryDocuments(dialect)  # after memories and documents: it refers to both
        self.identity = SqlIdentity(dialect)
        self.audit = SqlAudit(dialect)
        self.credentials = SqlCredentials(dialect)
        self.brain = brain
        self.idempotency = SqlIdempotency(dialect)
        self.servers = SqlServers(dialect)
        self.meaning = SqlMeaning(dialect)  # after memories and brain: its first step queues their rows
        self.journal = SqlJournal(dialect)
        self.jobs = SqlJobs(dialect)
        self.kea = SqlKea(dialect)  # after the brain: it reads its sessions
        self.kea_budget = SqlKeaBudget(dialect)
        self.tables = tables
        self.backups = backups
        self._dialect = dialect

    @contextmanager
    def together(self) -> Iterator[None]:
        """One transaction for the writes made inside, on this thread: every repository's own transaction joins it
        (both backends' transactions nest), so they commit together at its end, in one commit (one wait for the
        log's flush on PostgreSQL), or none of them does."""
        with self._dialect.transaction():
            yield
