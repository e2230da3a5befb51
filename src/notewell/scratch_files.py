"""Scratch files and folders named for the process that writes them, so that a later run can tell a killed
run's leftovers from a live run's and remove only the former (docs/operations.md, "Leftovers of a killed run").

A backup, an export's archive and an import's unpacked archive are written beside their target under a name
carrying ``<pid>@<host>``: a run killed outright (kill -9, the machine's crash) leaves it there, holding every
home's rows. The next run in that folder removes the leftovers of this machine whose process is gone. One named
for another machine (a folder shared over the network), or whose process lives (a run going on, or a process
that took the pid since), is never touched: nothing here can tell whether it is still being written.

A note write's temporary file (services/note_files.py) is named so too, ``.notewell-write-<pid>@<host>-<hex>``, in
the note's own folder (a delete's copy into the trash, .notewell/trash/<id>/<path>, is written so too): a write
killed between writing it and renaming it over the note leaves it in the vault. A scan of the vault (indexer.py)
removes those of this machine whose process is gone, and only regular files of the server's own user under exactly
that name: a user's file named alike but otherwise is never touched.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

PART = ".part"
NOTE_TEMP_PREFIX = ".notewell-write-"  # hidden, so a scan that sees one mid-write passes over it
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SQLITE_ENDS = "(?:-journal|-wal|-shm)?"  # what SQLite writes beside a copy it writes


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname()) or "_"


def _tag() -> str:
    return f"{os.getpid()}@{_host()}"


def part_path(path: Path) -> Path:
    """Where ``path`` is written before it is renamed into place, whole: ``FILE.<pid>@<host>.part``."""
    return path.with_name(f"{path.name}.{_tag()}{PART}")


def scratch_folder(parent: Path, prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A private folder (0700) in ``parent``, named ``<prefix><pid>@<host>-<random>``, removed on cleanup."""
    return tempfile.TemporaryDirectory(dir=parent, prefix=f"{prefix}{_tag()}-")


def note_temp_name() -> str:
    """A new name for a note write's temporary file: ``.notewell-write-<pid>@<host>-<16 hex digits>``."""
    return f"{NOTE_TEMP_PREFIX}{_tag()}-{secrets.token_hex(8)}"


def note_temps_below(vault: Path, folder: str) -> list[str]:
    """The entries below the vault's ``folder`` (vault-relative, as is each found) named as a note write's
    temporary files are (NOTE_TEMP_PREFIX), which remove_stale_note_temps then judges: every folder below it
    walked, on a list (a trashed note may be 1,000 folders deep), never through a symlink; best effort, a folder
    that cannot be read is passed over."""
    found: list[str] = []
    folders = [folder]
    while folders:
        at = folders.pop()
        with suppress(OSError), os.scandir(vault / at) as entries:
            for entry in entries:
                if entry.name.startswith(NOTE_TEMP_PREFIX):
                    found.append(f"{at}/{entry.name}")
                elif entry.is_dir(follow_symlinks=False):
                    folders.append(f"{at}/{entry.name}")
    return sorted(found)


def remove_stale_note_temps(vault: Path, paths: Iterable[str]) -> list[str]:
    """Of ``paths`` (vault-relative, as a scan lists the hidden entries it passes over), the temporary files of
    note writes killed on this machine, removed: each named exactly as ``note_temp_name`` names them, by a process
    that is gone, a regular file of this process's user, reached through real folders (never a symlink's). The
    ones removed; best effort: one that cannot be removed (a read-only mount) stays."""
    pattern = re.compile(rf"{re.escape(NOTE_TEMP_PREFIX)}(\d+)@{re.escape(_host())}-[0-9a-f]{{16}}")
    removed: list[str] = []
    for rel in paths:
        folders, _, name = rel.rpartition("/")
        found = pattern.fullmatch(name)
        if found is None or _alive(int(found.group(1))):
            continue
        with suppress(OSError):
            fd = os.open(vault, _DIR_FLAGS)
            try:
                for part in folders.split("/") if folders else []:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                    os.close(fd)
                    fd = child
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid():
                    os.unlink(name, dir_fd=fd)
                    removed.append(rel)
            finally:
                os.close(fd)
    return removed


def remove_stale_parts(folder: Path) -> None:
    """The scratch files (with SQLite's journal beside each) of ``folder`` that a killed run left."""
    _remove_stale(folder, re.compile(rf".+\.(\d+)@{re.escape(_host())}{re.escape(PART)}{_SQLITE_ENDS}"), False)


def remove_stale_folders(parent: Path, prefix: str) -> None:
    """The scratch folders named with ``prefix`` in ``parent`` that a killed run left."""
    _remove_stale(parent, re.compile(rf"{re.escape(prefix)}(\d+)@{re.escape(_host())}-[^/]+"), True)


_ANY_PART = re.compile(rf".+\.(\d+)@([A-Za-z0-9._-]+){re.escape(PART)}{_SQLITE_ENDS}")
_ANY_FOLDER = re.compile(r"\.?notewell-(?:import|export)-(\d+)@([A-Za-z0-9._-]+)-[a-z0-9_]+")


def leftovers(folder: Path) -> list[tuple[Path, int]]:
    """The scratch files and folders in ``folder`` whose writer is not seen running here (another machine's,
    which nothing here removes, and this machine's killed runs', which the next run removes), each with its
    size in bytes; by name."""
    found: list[tuple[Path, int]] = []
    with suppress(OSError), os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            folders = entry.is_dir(follow_symlinks=False)
            named = (_ANY_FOLDER if folders else _ANY_PART).fullmatch(entry.name)
            if named is None or (named.group(2) == _host() and _alive(int(named.group(1)))):
                continue
            with suppress(OSError):
                found.append((Path(entry.path), _size(Path(entry.path)) if folders else entry.stat().st_size))
    return found


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _remove_stale(folder: Path, name: re.Pattern[str], folders: bool) -> None:
    """Best effort: a folder that cannot be read or written (a read-only mount) keeps what it holds."""
    with suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            found = name.fullmatch(entry.name)
            if found is None or _alive(int(found.group(1))):
                continue
            with suppress(OSError):
                if folders and entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                elif not folders and entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)


def _alive(pid: int) -> bool:
    """Whether a process of ``pid`` runs on this machine (another user's counts: it may be the writer)."""
    if pid <= 0:
        return True  # never a signal to a process group; not a name this module makes: left alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process; a number no pid is: not ours to judge
        return True
    return True
