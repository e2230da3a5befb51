"""What a load balancer and a scraper ask of the store: is it reachable (``ready``), and how much it holds
(``sizes``). No person asks: the answers name no project, memory or user."""

from __future__ import annotations

from dataclasses import dataclass

from notewell.meaning.model import MODEL_ID
from notewell.metrics import Sizes
from notewell.records.servers import RunningServer
from notewell.services.servers import ServerRegistry
from notewell.store.base import Store


@dataclass(frozen=True)
class Readiness:
    documents: int  # documents indexed
    text_bytes: int
    index_bytes: int
    leader: RunningServer | None  # the server that says it holds the writer lease
    schema_ahead: list[str]  # components a newer Notewell upgraded past this code ("documents 7 > 6")
    cannot_write: str | None = None  # why the store refuses writes now (disk full, read-only), with the fix


class HealthService:
    def __init__(self, store: Store) -> None:
        self.store = store

    def ready(self) -> Readiness:
        """The index's size, the lease's holder, whether the schema is newer than this code and whether the store
        refuses writes (its disk full, it read-only), read from the store: raises when it cannot be reached."""
        documents, text_bytes, index_bytes = self.store.documents.sizes()
        refused = self.store.tables.cannot_write()
        return Readiness(documents, text_bytes, index_bytes, ServerRegistry(self.store.servers).leader(),
                         self.schema_ahead(), None if refused is None else str(refused))

    def schema_ahead(self) -> list[str]:
        """The components a newer Notewell upgraded the store past ([]: its schema is this code's)."""
        return self.store.tables.schema_ahead()

    def sizes(self) -> Sizes:
        """Rows per carried table, and the documents' index (documents, their text and index bytes)."""
        documents, text_bytes, index_bytes = self.store.documents.sizes()
        leader = ServerRegistry(self.store.servers).leader()
        embedding, jobs = self.store.meaning.state(MODEL_ID), self.store.jobs.counts()
        queues = {"embedding": {"queued": embedding.queued, "failing": embedding.failing},
                  "jobs": {"pending": jobs.pending, "running": jobs.running, "failed": jobs.failed}}
        return Sizes(self.store.tables.counts(), documents, text_bytes, index_bytes,
                     None if leader is None or leader.leading_since is None else
                     {"server_id": leader.id, "host": leader.host, "pid": str(leader.pid), "url": leader.url,
                      "since": leader.leading_since},
                     queues, {"jobs": jobs.oldest_due} if jobs.oldest_due else {})
