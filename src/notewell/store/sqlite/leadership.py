"""A role's lease on SQLite: an exclusive flock on ``<database>.watch-lock`` (the documents writer) or
``<database>.jobs-lock`` (the job runner)."""

from __future__ import annotations

import fcntl
import os

_SUFFIXES = {"watcher": ".watch-lock", "jobs": ".jobs-lock"}  # beside the database, one per role
LOCK_SUFFIXES = tuple(_SUFFIXES.values())


class FileLockLeadership:
    def __init__(self, db: str, role: str = "watcher") -> None:
        self._path = db + _SUFFIXES[role]
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        try:
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
