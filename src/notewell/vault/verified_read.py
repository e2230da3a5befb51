"""Reading vault files through descriptors verified component by component.

The scan decides which path to read (a symlink's target only when the link policy allows it); the read
happens later. A folder or the file swapped for a symlink in between must not lead outside the vault, so
the path is opened from the vault's own descriptor one component at a time with O_NOFOLLOW: a component
that is now a symlink fails to open (ELOOP or ENOTDIR) instead of being followed. The opened file must be
a regular file (O_NONBLOCK keeps a FIFO swapped in from blocking the open), and no more than the size
limit is read from it.

A sync reads thousands of files in path order, most of them beside the previous one, so ``VerifiedReader``
keeps the folders of the last path open and opens only the components that differ (one ``open`` per file
instead of one per component and a second ``read`` to find the end: a fifth of an index build's time went
to these calls). A kept descriptor is the folder it was verified as: a symlink swapped in for that folder
later is not followed by it, and what is opened below it is checked again, component by component.

``hint`` opens a file the same way and only asks the kernel to start reading it (``posix_fadvise``
WILLNEED), so that a later ``read`` finds it in the page cache: an index build hints files ahead of the one
it reads (indexer.py). A hint never raises; what it could not open, the read reports.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from types import TracebackType

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_CHUNK = 1 << 20


class FileTooLarge(Exception):
    """The file grew past the size limit after the scan measured it."""


class VerifiedReader:
    """Reads files below ``root`` (see the module's docstring); close it, or use it as a context manager."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._root_path = root
        self._root = -1  # opened at the first read (an OSError then makes that file unreadable, not the sync fail)
        self._folders: list[tuple[str, int]] = []  # the open folders of the last path read, outermost first

    def read(self, rel: str) -> bytes:
        """The bytes of ``root/rel`` ("/"-separated, no symlink anywhere below ``root``).

        Raises OSError when a component is missing, is a symlink or is not a folder (or, for the last one,
        not a regular file), and FileTooLarge when the file holds more than ``max_bytes`` bytes.
        """
        return self.read_stamped(rel)[0]

    def read_stamped(self, rel: str) -> tuple[bytes, int]:
        """``read``, with the file's mtime (ns) as the opened file had it before it was read."""
        fd, info = self._open_regular(rel)
        try:
            return self._read_all(fd, rel, info.st_size), info.st_mtime_ns
        finally:
            os.close(fd)

    def hint(self, rel: str) -> None:
        """Ask the kernel to start reading ``root/rel`` into the page cache (opened as ``read`` opens it), and
        return at once; a file that cannot be opened is left to ``read`` to report."""
        try:
            fd, _ = self._open_regular(rel)
        except OSError:
            return
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
        except OSError:
            pass
        finally:
            os.close(fd)

    def _open_regular(self, rel: str) -> tuple[int, os.stat_result]:
        """An open descriptor of the regular file ``root/rel`` and its fstat; OSError as ``read`` says."""
        parts = rel.split("/")
        if any(part in ("", ".", "..") for part in parts):
            raise OSError(f"not a clean vault path: {rel}")
        fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=self._folder(parts[:-1]))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError(f"not a regular file: {rel}")
        except BaseException:
            os.close(fd)
            raise
        return fd, info

    def _folder(self, parts: list[str]) -> int:
        """The descriptor of the folder ``parts`` below the root, opening only what the last path did not."""
        if self._root < 0:
            self._root = os.open(self._root_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        kept = 0
        while kept < min(len(parts), len(self._folders)) and self._folders[kept][0] == parts[kept]:
            kept += 1
        self._close_from(kept)
        for part in parts[kept:]:
            outer = self._folders[-1][1] if self._folders else self._root
            self._folders.append((part, os.open(part, _DIR_FLAGS, dir_fd=outer)))
        return self._folders[-1][1] if self._folders else self._root

    def _read_all(self, fd: int, rel: str, expected: int) -> bytes:
        """Up to the end of the file. One read when it holds the ``expected`` bytes (its size at fstat): a
        file that grows after that has a newer mtime than the scan saw, so the next sync reads it again."""
        if expected > self.max_bytes:
            raise FileTooLarge(rel)
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, expected - size + 1 if size < expected else _CHUNK):
            size += len(chunk)
            if size > self.max_bytes:
                raise FileTooLarge(rel)
            chunks.append(chunk)
            if size == expected:
                break
        return b"".join(chunks)

    def _close_from(self, depth: int) -> None:
        while len(self._folders) > depth:
            os.close(self._folders.pop()[1])

    def close(self) -> None:
        self._close_from(0)
        if self._root >= 0:
            os.close(self._root)
            self._root = -1

    def __enter__(self) -> VerifiedReader:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

