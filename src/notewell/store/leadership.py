"""Which of several processes sharing one store does a job only one may do: a lease on a lock, one per role
(``watcher``: writes the vault's documents; ``jobs``: runs the learning loop's job queue).

On PostgreSQL the lease is a session advisory lock held on a connection of its own; on SQLite an
exclusive flock on a file beside the database. Either is released by the operating system or the
database server the moment its holder dies, so another process takes over at its next attempt.
"""

from __future__ import annotations

from typing import Literal, Protocol

from notewell.config import is_postgres_url


class Leadership(Protocol):
    def try_acquire(self) -> bool:
        """Hold the lease (taking it when free); True while this process holds it. Never raises."""
        ...

    def release(self) -> None: ...


Role = Literal["watcher", "jobs"]


def open_leadership(db: str, role: Role = "watcher") -> Leadership:
    """The lease of ``role`` for the store ``db`` names (a file path or a postgresql:// URL)."""
    if is_postgres_url(db):
        from notewell.store.postgres.leadership import AdvisoryLockLeadership

        return AdvisoryLockLeadership(db, role)
    from notewell.store.sqlite.leadership import FileLockLeadership

    return FileLockLeadership(db, role)
