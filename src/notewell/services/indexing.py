"""Indexing: the one operation that brings the store in line with the vault, its projects included.

Every door that indexes (``notewell index``, the quickstart, the docs generator) calls ``sync()``, and every
door that keeps watching the vault calls ``watch()``, the note writers call ``sync_paths()`` for what they
wrote; ``notewell serve`` calls ``sync_projects()`` at start.
It takes no Principal: the vault is the source of truth and only the process that owns it indexes; no
request of a person reaches it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from notewell.access.administration import Administration
from notewell.config import Settings
from notewell.indexer import IndexReport, Progress, sync
from notewell.store.base import Store
from notewell.vault.readme import readme_fields
from notewell.vault.scan import Subtrees
from notewell.watcher import WatcherThread, start_watcher


class IndexingService:
    def __init__(self, settings: Settings, store: Store, administration: Administration) -> None:
        self.settings = settings
        self.store = store
        self.administration = administration

    def sync(self, progress: Progress | None = None, committed: Callable[[], None] | None = None) -> IndexReport:
        """Sync the documents with the vault (one transaction: ``committed`` is called once it is), then the
        projects with its top-level folders."""
        report = sync(self.settings, self.store, progress, committed=committed)
        self.sync_projects()
        return report

    def sync_paths(self, paths: Sequence[str]) -> IndexReport:
        """Sync only these vault paths (a note just written, moved or deleted), so that the change is in the
        index when the write returns; the watcher, seeing the same file later, finds it unchanged. Each is read
        whatever its size and mtime, and one written again meanwhile (by a person, another program) is indexed
        as read then, its links resolved, not left to the watcher: the writer answers for its index."""
        return sync(self.settings, self.store, only=Subtrees(paths), written=paths, reread=True)

    def sync_changed(self, project: str, read_most: int) -> IndexReport:
        """Sync what changed on disk in the project since its last sync (a note a person just saved, which the
        watcher has not indexed yet), unless more than ``read_most`` files are to be read: then nothing is done
        and the report's ``not_read`` says how many. It stats every file of the project (0.12 to 0.2 s at
        10,000 notes, docs/performance.md) and reads the changed ones alone."""
        return sync(self.settings, self.store, only=Subtrees([project]), reread=True, read_most=read_most)

    def watch(self, on_leading: Callable[[bool], None] | None = None) -> WatcherThread:
        """Keep the store in line with the vault on a thread of its own (the one writer of the store by its
        lease), the projects following the vault's top-level folders; ``on_leading``: told whether it holds the
        lease, at the start and at every change."""
        return start_watcher(self.settings, self.store, self.sync_projects, on_leading)

    def sync_projects(self, ids: Sequence[str] | None = None) -> None:
        """Each top-level folder of the index (``ids``, when the caller has just read them) is a project,
        named by its README's front matter."""
        ids = self.store.documents.vault_projects() if ids is None else ids
        self.administration.sync_vault_projects(ids, {i: readme_fields(self.settings.vault / i) for i in ids})
