"""Reading and writing vault files so that no reader ever sees half a note and no symlink leads out.

Every path is opened from the vault's own descriptor one component at a time with O_NOFOLLOW (as
vault/verified_read.py reads): a folder that is a symlink fails to open instead of being followed, and a
note that is a symlink is refused. A write goes to a temporary file in the note's own folder (created
O_EXCL, so never over anything), is fsynced, renamed over the note with ``os.replace`` (atomic: a reader
sees the old bytes or the new, never a mix, and a crash leaves one or the other), and the folder is
fsynced so the rename itself survives a power cut. A write that names what it read (``was``) first checks,
right before the rename, that the note still holds those bytes (its size, then its bytes): a program outside
Notewell that wrote it meanwhile (the note's lock binds Notewell's writers alone) raises ChangedOnDisk and
nothing is written, so the caller reads again and applies its change to the new text; a delete checks the same
before it unlinks. Only a change landing in the instant between that check and the rename is not seen. A
move links the note at its new path (which fails if anything is there: a move never overwrites)
and then unlinks the old one.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from notewell.errors import InvalidArgument
from notewell.paths import mixable, mixed_forms, spellings
from notewell.records.identity import HOME_PREFIX

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
TEMP_PREFIX = ".notewell-write-"  # hidden, so a scan that sees one mid-write passes over it
FILE_MODE = 0o644  # a note: as the vault's other files (a home's privacy is its folder's, 0700, made so here too)
FOLDER_MODE = 0o755
PRIVATE_FILE_MODE = 0o600  # the trash: copies of notes from every home, the owner's alone whatever the umask
PRIVATE_FOLDER_MODE = 0o700
# The way out of a new name another entry beside it has in another Unicode form (_refuse_another_form): a folder
# is entered only by its own spelling; an existing note is written over by either form (NoteVault.found), but only
# by a write that may overwrite; a move never overwrites.
FOLDER_ALIKE = "write the path with the folder's name as it is spelled there, or choose another name"
NOTE_ALIKE = "to write over that note, write with overwrite (either form of its name finds it), or choose another name"
MOVED_ALIKE = "a move never overwrites a note: choose another name"


class ChangedOnDisk(Exception):
    """The note no longer holds the bytes the write read: another program wrote (or removed, or made) it
    meanwhile. Nothing was written."""


class NoteFiles:
    """The files of one vault, reached only through verified descriptors. ``private``: files and folders made
    for the owner alone (the trash), whatever the folders above them allow."""

    def __init__(self, vault: Path, *, private: bool = False) -> None:
        self.vault = vault
        self.file_mode = PRIVATE_FILE_MODE if private else FILE_MODE
        self.folder_mode = PRIVATE_FOLDER_MODE if private else FOLDER_MODE

    @contextmanager
    def _folder(self, parts: list[str], *, create: bool, field: str) -> Iterator[int]:
        """A descriptor of the folder ``parts`` below the vault (made when ``create``); InvalidArgument when a
        part is a symlink or not a folder."""
        fd = os.open(self.vault, _DIR_FLAGS)
        try:
            for depth, part in enumerate(parts):
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    _refuse_another_form(fd, part, field, FOLDER_ALIKE)
                    home = depth == 0 and part.startswith(HOME_PREFIX)  # made again by a write: its owner's alone
                    with suppress(FileExistsError):
                        os.mkdir(part, PRIVATE_FOLDER_MODE if home else self.folder_mode, dir_fd=fd)
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as err:
                    if err.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise InvalidArgument(field, f"{part} on the way is a symlink or not a folder; notes are "
                                                     "written only through real folders of the vault") from err
                    raise
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)

    def read(self, rel: str, max_bytes: int, field: str = "path") -> bytes | None:
        """The note's bytes, None when there is none; InvalidArgument for a symlink, a folder or an oversized
        file at that path."""
        parts = rel.split("/")
        try:
            with self._folder(parts[:-1], create=False, field=field) as folder:
                fd = os.open(parts[-1], _READ_FLAGS, dir_fd=folder)
        except FileNotFoundError:
            return None
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR):
                raise InvalidArgument(field, f"{rel} is a symlink or a folder, not a note") from err
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise InvalidArgument(field, f"{rel} is not a regular file")
            if info.st_size > max_bytes:
                raise InvalidArgument(field, f"{rel} is {info.st_size} bytes, over the {max_bytes} byte limit of "
                                             "the notes agents write")
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def named(self, folder: str, rel: str) -> str:
        """The spelling of ``rel`` (below the vault's ``folder``) the vault has an entry by, a file, a folder or a
        symlink: ``rel`` itself, else the first of its other Unicode forms that names one, else each of its
        components in the form its folder has it by (paths.mixed_forms: a note named on a Mac is kept decomposed,
        and typed composed; its folder may be named either way), else ``rel``. Reads find a note so
        (services/knowledge.py), and a write to an existing note goes to the file by this name, never making a
        second one in the other form. ``folder`` is taken as given: a project is never another spelled alike."""
        for spelled in spellings(rel):
            if self._has([folder, *spelled.split("/")]):
                return spelled
        return (self._mixed(folder, rel.split("/")) if mixable(rel) else None) or rel

    def _mixed(self, folder: str, names: list[str]) -> str | None:
        """paths.mixed_forms below the vault's ``folder``, each folder kept open for the lookups of the next
        name: one lookup a form, where opening the chain from the vault's root again at every level was
        quadratic in the path's depth."""
        try:
            with self._folder([folder], create=False, field="path") as top:
                fd = os.dup(top)
        except (OSError, InvalidArgument):
            return None

        def has_folder(rel: str) -> bool:
            nonlocal fd
            try:
                child = os.open(rel.rpartition("/")[2], _DIR_FLAGS, dir_fd=fd)
            except OSError:
                return False
            os.close(fd)
            fd = child  # mixed_forms goes on below the folder it found, never back
            return True

        def has(rel: str) -> bool:
            try:
                os.stat(rel.rpartition("/")[2], dir_fd=fd, follow_symlinks=False)
            except OSError:
                return False
            return True

        try:
            return mixed_forms(names, has, has_folder)
        finally:
            os.close(fd)

    def _has(self, parts: list[str]) -> bool:
        """Whether the vault has an entry at ``parts``, reached through real folders (not a symlink's)."""
        try:
            with self._folder(parts[:-1], create=False, field="path") as opened:
                os.stat(parts[-1], dir_fd=opened, follow_symlinks=False)
        except (OSError, InvalidArgument, ValueError):  # not there, or not reached (ValueError: a name holding
            return False  # NUL, which no file has): the read by the typed path says why
        return True

    def write(self, rel: str, data: bytes, field: str = "path", *, checked: bool = False,
              was: bytes | None = None) -> None:
        """Replace (or create) the note with ``data``, atomically and durably (the module's docstring);
        ``checked``: only over ``was`` (None: no note), else ChangedOnDisk and nothing written."""
        parts = rel.split("/")
        with self._folder(parts[:-1], create=True, field=field) as folder:
            self._refuse_non_file(folder, parts[-1], rel, field)
            temp = f"{TEMP_PREFIX}{secrets.token_hex(8)}"
            fd = os.open(temp, _TEMP_FLAGS, self.file_mode, dir_fd=folder)
            try:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view):]
                    os.fsync(fd)
                finally:
                    os.close(fd)
                if checked and not holds(folder, parts[-1], was):
                    raise ChangedOnDisk(rel)
                os.replace(temp, parts[-1], src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                _unlink_quietly(temp, folder)
                raise
            os.fsync(folder)

    def move(self, rel: str, new_rel: str, field: str = "new_path") -> None:
        """Move the note to ``new_rel``; FileExistsError when anything is there already."""
        parts, new_parts = rel.split("/"), new_rel.split("/")
        with self._folder(parts[:-1], create=False, field="path") as source, \
                self._folder(new_parts[:-1], create=True, field=field) as target:
            own = parts[-1] if parts[:-1] == new_parts[:-1] else None  # a rename to its own name in another form
            _refuse_another_form(target, new_parts[-1], field, MOVED_ALIKE, besides=own)
            os.link(parts[-1], new_parts[-1], src_dir_fd=source, dst_dir_fd=target, follow_symlinks=False)
            os.unlink(parts[-1], dir_fd=source)
            os.fsync(target)
            os.fsync(source)

    def remove(self, rel: str, *, checked: bool = False, was: bytes | None = None) -> None:
        """Remove the note (its bytes are kept by the caller: in the trash and the journal); ``checked``: only
        while it holds ``was``, else ChangedOnDisk and nothing removed."""
        parts = rel.split("/")
        with self._folder(parts[:-1], create=False, field="path") as folder:
            if checked and not holds(folder, parts[-1], was):
                raise ChangedOnDisk(rel)
            os.unlink(parts[-1], dir_fd=folder)
            os.fsync(folder)

    @staticmethod
    def _refuse_non_file(folder: int, name: str, rel: str, field: str) -> None:
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            _refuse_another_form(folder, name, field, NOTE_ALIKE)
            return
        if not stat.S_ISREG(info.st_mode):
            raise InvalidArgument(field, f"{rel} is a symlink or a folder, not a note; it is never written over")


def holds(folder: int, name: str, was: bytes | None) -> bool:
    """Whether the entry ``name`` of ``folder`` is a file of exactly the bytes ``was`` (None: whether it is absent).
    The size answers most changes (an append) without reading; an equal size is compared byte for byte, since a
    rewrite within the same second and of the same size leaves size and mtime alike on some file systems."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except FileNotFoundError:
        return was is None
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EISDIR, errno.ENOTDIR):  # a symlink or folder now: not what was read
            return False
        raise
    try:
        if was is None or os.fstat(fd).st_size != len(was):
            return False
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks) == was
    finally:
        os.close(fd)


def _refuse_another_form(folder: int, name: str, field: str, way_out: str, besides: str | None = None) -> None:
    """A new name that another entry of the folder already has in another Unicode form ("Zoë" composed, or as
    "e" and a combining mark) is refused: the two would look the same everywhere, and a file system that folds
    the forms (macOS) would take them for one. ``way_out``: what the caller can do instead (FOLDER_ALIKE, ...);
    ``besides``: an entry that is leaving (a move's source)."""
    wanted = unicodedata.normalize("NFC", name)
    for entry in os.listdir(folder):
        if entry not in (name, besides) and unicodedata.normalize("NFC", entry) == wanted:
            raise InvalidArgument(field, f"{entry!r} is there already, the same name in another Unicode form; "
                                         f"{way_out}")


def _unlink_quietly(name: str, folder: int) -> None:
    with suppress(OSError):
        os.unlink(name, dir_fd=folder)
