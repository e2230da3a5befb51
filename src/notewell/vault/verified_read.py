"""Reading a vault file through descriptors verified component by component.

The scan decides which path to read (a symlink's target only when the link policy allows it); the read
happens later. A folder or the file swapped for a symlink in between must not lead outside the vault, so
the path is opened from the vault's own descriptor one component at a time with O_NOFOLLOW: a component
that is now a symlink fails to open (ELOOP or ENOTDIR) instead of being followed. The opened file must be
a regular file (O_NONBLOCK keeps a FIFO swapped in from blocking the open), and no more than the size
limit is read from it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_CHUNK = 1 << 20


class FileTooLarge(Exception):
    """The file grew past the size limit after the scan measured it."""


def read_verified(root: Path, rel: str, max_bytes: int) -> bytes:
    """The bytes of ``root/rel`` ("/"-separated, no symlink anywhere below ``root``).

    Raises OSError when a component is missing, is a symlink or is not a folder (or, for the last one,
    not a regular file), and FileTooLarge when the file holds more than ``max_bytes`` bytes.
    """
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise OSError(f"not a clean vault path: {rel}")
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _DIR_FLAGS, dir_fd=folder)
            os.close(folder)
            folder = inner
        fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=folder)
    finally:
        os.close(folder)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"not a regular file: {rel}")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, _CHUNK):
            size += len(chunk)
            if size > max_bytes:
                raise FileTooLarge(rel)
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
