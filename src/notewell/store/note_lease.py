"""The lease a note writer holds across processes that share a store but maybe not a machine.

On PostgreSQL (servers on several machines over one database) a session advisory lock per note
(postgres/note_lease.py); on SQLite the store is one file on one machine, and the writers' flock on the
note's lock file (services/note_locks.py) already covers every process that can reach it: nothing more.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

from notewell.config import is_postgres_url


class NoteLease(Protocol):
    def holding(self, path: str) -> AbstractContextManager[None]:
        """Hold the note at ``path`` (vault-relative) until the block ends, waiting for another holder."""
        ...


class _Local:
    @contextmanager
    def holding(self, path: str) -> Iterator[None]:
        yield


def open_note_lease(db: str) -> NoteLease:
    """The lease for the store ``db`` names (a file path or a postgresql:// URL)."""
    if is_postgres_url(db):
        from notewell.store.postgres.note_lease import AdvisoryNoteLease

        return AdvisoryNoteLease(db)
    return _Local()
