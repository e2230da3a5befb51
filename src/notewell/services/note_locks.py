"""One writer per note at a time: across the threads of a process and across processes on this machine.

Within a process a lock per note (threads); across processes an exclusive ``flock`` on a lock file per
note in ``.notewell/locks/`` (named by a hash of the note's path, so any path has a short, safe name). Two
agents editing one note serialise: the second reads the note only after the first has written it, so it
sees the first's change, or is refused when it named the version the first replaced. A move holds both
paths, taken in sorted order, so two moves never wait on each other in a circle. On PostgreSQL the store's
lease (store/note_lease.py: an advisory lock per note) is held too, for servers on other machines.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from notewell.errors import Unavailable
from notewell.store.note_lease import NoteLease


class NoteLocks:
    def __init__(self, folder: Path, lease: NoteLease) -> None:
        self.folder = folder  # .notewell/locks of the vault
        self.lease = lease
        self._guard = threading.Lock()
        self._threads: dict[str, threading.Lock] = {}

    def _thread_lock(self, path: str) -> threading.Lock:
        with self._guard:
            return self._threads.setdefault(path, threading.Lock())

    @contextmanager
    def holding(self, *paths: str) -> Iterator[None]:
        """Hold every one of ``paths`` (vault paths) until the block ends."""
        with ExitStack() as stack:
            for path in sorted(set(paths)):
                stack.enter_context(self._one(path))
            yield

    @contextmanager
    def _one(self, path: str) -> Iterator[None]:
        with self._thread_lock(path):
            vault = self.folder.parent.parent
            if not vault.is_dir():  # moved or deleted under a running server: the server's fault, not the caller's
                raise Unavailable(f"the vault folder {vault} is gone (moved or deleted while the server runs); "
                                  "nothing was written: put it back, or start the server on its new place")
            for folder in (self.folder.parent, self.folder):  # .notewell and its locks: 0700 whatever the umask
                folder.mkdir(mode=0o700, exist_ok=True)
            name = hashlib.sha256(path.encode("utf-8", errors="surrogatepass")).hexdigest()[:32]
            fd = os.open(self.folder / f"{name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                with self.lease.holding(path):
                    yield
            finally:
                os.close(fd)  # closing the descriptor releases the flock
