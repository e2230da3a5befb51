"""Backups of the whole store: the record of each one taken (SQL both backends run), beside the copy itself,
which is each backend's own (SQLite's online backup API; PostgreSQL's pg_dump and pg_restore).

The record lives in the store it describes, so ``notewell doctor`` can say how old the last backup is; it is
not carried by an export (store/shared/tables.py): it is this store's history, not its data. Nor by a restore:
a backup holds its source's records (of backups since moved or deleted, say), so after a restore the store's
record is the backup it was restored from alone (its time and the file restored), as the doctor should report.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path

from notewell.errors import InvalidArgument
from notewell.records.backups import BackupRecord
from notewell.store.shared.dialect import Dialect
from notewell.store.shared.migrations import Migration

SQLITE_MAGIC = b"SQLite format 3\x00"  # the first bytes of a SQLite database, so of a SQLite store's backup
PG_DUMP_MAGIC = b"PGDMP"  # the first bytes of pg_dump's custom format, so of a PostgreSQL store's backup


def refuse_the_other_backends(path: Path, own: bytes) -> None:
    """InvalidArgument naming the way when ``path`` is a backup of the other backend (its first bytes are not
    ``own``'s kind but the other's): a backup restores into a store of its own backend only."""
    with path.open("rb") as file:
        head = file.read(len(SQLITE_MAGIC))
    if own == SQLITE_MAGIC and head.startswith(PG_DUMP_MAGIC):
        raise InvalidArgument("file", f"{path} is a PostgreSQL store's backup (pg_dump's custom format): restore "
                                      "it into a PostgreSQL store, or move a store between backends with "
                                      "'notewell migrate' (or export and import)")
    if own == PG_DUMP_MAGIC and head.startswith(SQLITE_MAGIC):
        raise InvalidArgument("file", f"{path} is a SQLite store's backup: restore it into a SQLite store, then "
                                      "move it with 'notewell migrate --from sqlite:PATH --to postgresql://...'")


MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE backups (
            at {key} PRIMARY KEY,
            path TEXT NOT NULL,
            bytes INTEGER NOT NULL
        )
        """,
    ),
]


class SqlBackups(ABC):
    def __init__(self, dialect: Dialect) -> None:
        self.sql = dialect
        dialect.migrate("backups", dialect.rendered(MIGRATIONS))

    @abstractmethod
    def copy_to(self, path: Path, at: str) -> int:
        """A consistent copy of the whole store at ``path`` (a new file), taken while others read and write and
        holding the writes acknowledged before ``at``; its size in bytes. The copy keeps ``at``, which
        restore_from gives back."""

    @abstractmethod
    def restore_from(self, path: Path, then: Callable[[str], None]) -> None:
        """Replace the whole store by the copy at ``path`` in one step, then call ``then`` with the time the copy
        was taken (the stored form). A Ctrl-C during the step is held until ``then`` returns (store/interrupts.py):
        an interrupted restore either left the store as it was, or replaced it and said so through ``then``."""

    def record(self, backup: BackupRecord) -> None:
        with self.sql.transaction() as conn:
            conn.execute("INSERT INTO backups (at, path, bytes) VALUES (?, ?, ?) ON CONFLICT (at) DO NOTHING",
                         (backup.at, backup.path, backup.bytes))

    def restored(self, backup: BackupRecord) -> None:
        """The store's record after a restore: the backup it was restored from alone (the copy brought back its
        source's records)."""
        with self.sql.transaction() as conn:
            conn.execute("DELETE FROM backups")
            conn.execute("INSERT INTO backups (at, path, bytes) VALUES (?, ?, ?)",
                         (backup.at, backup.path, backup.bytes))

    def latest(self) -> BackupRecord | None:
        with self.sql.reading() as conn:
            row = conn.execute("SELECT at, path, bytes FROM backups ORDER BY at DESC LIMIT 1").fetchone()
        return BackupRecord(str(row[0]), str(row[1]), int(row[2])) if row else None
