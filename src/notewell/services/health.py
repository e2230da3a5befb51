"""What a load balancer and a scraper ask of the store: is it reachable (``ready``), and how much it holds
(``sizes``). No person asks: the answers name no project, memory or user."""

from __future__ import annotations

from dataclasses import dataclass

from notewell.metrics import Sizes
from notewell.store.base import Store


@dataclass(frozen=True)
class Readiness:
    documents: int  # documents indexed
    text_bytes: int
    index_bytes: int


class HealthService:
    def __init__(self, store: Store) -> None:
        self.store = store

    def ready(self) -> Readiness:
        """The index's size, read from the store: raises when the store cannot be reached."""
        documents, text_bytes, index_bytes = self.store.documents.sizes()
        return Readiness(documents, text_bytes, index_bytes)

    def sizes(self) -> Sizes:
        """Rows per carried table, and the documents' index (documents, their text and index bytes)."""
        documents, text_bytes, index_bytes = self.store.documents.sizes()
        return Sizes(self.store.tables.counts(), documents, text_bytes, index_bytes)
