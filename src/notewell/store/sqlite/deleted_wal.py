"""A store's -wal file deleted under a running process (``rm index.db-wal``, a clean-up script): what SQLite's
connections opened before the deletion still hold is copied into the store's file, and every write is refused
until the process restarts (docs/operations.md, "A damaged store").

SQLite deletes a -wal only as the last connection to the store closes, so a connection of this process whose
-wal (by device and inode, seen as it opened) is no longer the one at the path saw it deleted under it. Such a
connection still has the deleted file open: a checkpoint on it copies every write acknowledged before the
deletion into the store's file; lost otherwise as it closes, since connections opened since keep the store
open (SQLite copies a -wal into the store's file only as the store's last connection closes). A connection
opened since makes a new, empty -wal and finds, in the -shm, frames that are in neither file: it cannot read
('disk I/O error') until every frame is copied. Hence:

- the copy runs on any connection that holds the deleted file (a connection is used from one thread at a time
  by Notewell, but SQLite's serialized mode lets another thread run a statement on it), a PASSIVE checkpoint
  that never waits; it is done only once SQLite says every frame was copied, and tried again at each write,
  each /readyz and each new connection until then (a reader on a snapshot older than the deletion holds frames
  back);
- one such connection is kept open until the copy is done, even past its thread's end, and a connection
  that holds the deleted file copies it before it closes.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path
from typing import Protocol

from notewell.errors import NotewellError, StoreCannotWrite

_log = logging.getLogger("notewell.store")

FileId = tuple[int, int]  # (device, inode)


class HeldConnection(Protocol):
    conn: sqlite3.Connection
    wal_file: FileId | None  # the -wal file there as the connection opened (None: none yet, a new store)


class DeletedWal:
    """Whether the store's -wal was deleted under this process, and the copy of what it held."""

    def __init__(self, path: Path) -> None:
        self.store = path
        self.path = path.with_name(path.name + "-wal")
        self.gone: FileId | None = None  # the deleted file: every write refused from then on
        self.copied = False  # what it held is all in the store's file
        self._keeper: HeldConnection | None = None  # a connection holding it, kept open until the copy is done
        self._copying = threading.Lock()

    def file(self) -> FileId | None:
        """The -wal file at the path now (None: none)."""
        try:
            there = self.path.stat()
        except OSError:
            return None
        return there.st_dev, there.st_ino

    def seen(self, connections: Callable[[], Iterable[HeldConnection]]) -> bool:
        """Whether the -wal was deleted under this process (``connections``: its open ones); once seen, for good,
        and what it held is copied (again tried, until it is all copied)."""
        if self.gone is None:
            there = self.file()
            gone = next((h.wal_file for h in connections() if h.wal_file not in (None, there)), None)
            if gone is None or not self.store.exists():  # (the store itself moved or deleted: its files went
                return False  # together, or the opening of a connection says so)
            self.gone = gone
        self._copy(connections)
        return True

    def refusal(self) -> StoreCannotWrite:
        copied = ("what the deleted file held was copied into the store's file" if self.copied else
                  "what the deleted file held is not yet all copied into the store's file: keep this process "
                  "running until /readyz says it was copied")
        return StoreCannotWrite(f"the store's -wal file {self.path} was deleted while this process had the store "
                                "open", f"stop every Notewell process on this store and start them again ({copied};"
                                " a write under way as it was deleted may be lost); never delete a store's -wal or "
                                "-shm file while it is open", cause="wal-deleted")

    def closing(self, held: HeldConnection) -> bool:
        """Whether ``held`` may close now: a connection holding a deleted -wal copies it first, and stays open
        (kept) when the copy is not complete."""
        if self.copied or held.wal_file is None or held.wal_file == self.file() or not self.store.exists():
            return True
        if self.gone is None:
            self.gone = held.wal_file
        if held.wal_file != self.gone or self._copied_by(held):  # (one opened since holds the new -wal)
            return True
        self._keeper = self._keeper or held
        return self._keeper is not held

    def release(self) -> None:
        """As the store closes: the connection kept for the copy closes last, after every other, which lets
        SQLite copy what it holds as the store's last connection closes, if this process alone has it open."""
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            with suppress(sqlite3.Error):
                keeper.conn.close()

    def _copy(self, connections: Callable[[], Iterable[HeldConnection]]) -> None:
        if self.copied or not self._copying.acquire(blocking=False):  # another thread is copying it now
            return
        try:
            holding = [h for h in connections() if h.wal_file == self.gone]
            if self._keeper is None and holding:
                self._keeper = holding[0]
            for held in ([self._keeper] if self._keeper is not None else []) + holding:
                if self._copied_by(held):
                    return
        finally:
            self._copying.release()

    def _copied_by(self, held: HeldConnection) -> bool:
        """A checkpoint on ``held``: whether every frame is in the store's file now."""
        if held.wal_file != self.gone or held.conn.in_transaction:
            return False
        with suppress(sqlite3.Error, NotewellError):
            busy, frames, copied = held.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if busy == 0 and frames == copied and not self.copied:
                self.copied = True
                self._keeper = None
                _log.warning("the store's -wal file %s was deleted while this process had it open: what it held "
                             "was copied into the store's file; writes are refused until the process restarts",
                             self.path)
        return self.copied
