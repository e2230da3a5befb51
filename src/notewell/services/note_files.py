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
before it unlinks. A new note is linked into place, so that a file made there meanwhile is never replaced.

A program that opened the note before the rename may still write after it, into the file the rename (or the
delete) took away: an appending script's open and its write are that far apart. So the replaced file is kept open
from the check on, given a hidden second name (a hard link, named as a temporary file), and looked at again once
the rename is durable. Lines appended to it are appended to the note as it is now, and the write stands, while the
note stays within ``late_limit``; any other change is put back as the note (their file itself, renamed back over
the write's text only) and ChangedOnDisk is raised, as if the check had seen it, so that the caller makes the write
again over it. An editor that truncates its file and then writes it may be half way at that look: what it writes
after goes into the note it is again. What can go neither way (the note changed yet again meanwhile, or their text
is over ``late_limit``) is kept beside the note as ``<stem>.conflict-<hex>.<suffix>``, their file itself again, with
a warning logged. Where the file system has no hard links, their bytes are read and written anew instead (a text
over ``late_limit`` copied a chunk at a time, never held whole).

A program that keeps the note open for writing may write after any look: so a note some program has open for
writing is never replaced (HeldOpen, nothing written), asked right before the rename (_holding) and, of the replaced
file, again before the last look (_late): a file with no name but the write's hidden one, open for writing nowhere,
can change no more. Opened in between, their file is put back as the note, as a rewrite is. Where that cannot be
told (_open_for_writing), a write that lands after the last look is not seen.

A move links the note at its new path (which fails if anything is there: a move never overwrites) and then unlinks
the old one: a late write follows the file there. Where the file system has no hard links (FAT, some network
shares, FUSE), a new note and a move are a rename that never replaces instead (_rename_new).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import logging
import os
import secrets
import signal
import stat
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from notewell.errors import InvalidArgument
from notewell.paths import mixable, mixed_forms, spellings
from notewell.records.identity import HOME_PREFIX
from notewell.scratch_files import note_temp_name
from notewell.services.note_paths import NAME_MAX_BYTES
from notewell.services.text_cut import between_characters

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
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
_log = logging.getLogger("notewell.notes")
_NO_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS)  # ENOSYS: FUSE without link
LATE_APPENDS = 5  # how often lines another program appends late are appended again (_append_late)
_SET_LEASE: int | None = getattr(fcntl, "F_SETLEASE", None)  # Linux alone (_open_for_writing)
_SET_SIGNAL: int = getattr(fcntl, "F_SETSIG", 10)


class ChangedOnDisk(Exception):
    """The note no longer holds the bytes the write read: another program wrote (or removed, or made) it
    meanwhile. Nothing was written."""


class HeldOpen(ChangedOnDisk):
    """Another program has the note open for writing: what it writes next would go into the file a rename or a
    delete takes away, lost. Nothing was written."""


@dataclass(frozen=True)
class _Late:
    """What another program wrote, after a write's check, into the file the write then replaced or removed:
    ``data``, its bytes (None: over the limit, so not read), ``size``, ``kept``, a hidden second name of that
    file (None where the file system has no hard links), and ``open``: a program has it open for writing still,
    so that it may write more into it after any look."""

    data: bytes | None
    size: int
    kept: str | None
    open: bool = False


class NoteFiles:
    """The files of one vault, reached only through verified descriptors. ``late_limit``: the size no note is made
    larger than by what another program wrote late (the note size limit the tools enforce); ``private``: files and
    folders made for the owner alone (the trash), whatever the folders above them allow."""

    def __init__(self, vault: Path, late_limit: int, *, private: bool = False) -> None:
        self.vault = vault
        self.late_limit = late_limit  # the most another program's late text may make a note (_place_late_write)
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
        name = parts[-1]
        with self._folder(parts[:-1], create=True, field=field) as folder:
            self._refuse_non_file(folder, name, rel, field)
            if not checked:
                temp = self._written(folder, data)
                try:
                    os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
                finally:
                    _unlink_quietly(temp, folder)  # gone already once renamed
                os.fsync(folder)
                return
            late = self._put(folder, name, data, was, rel)
            if late is not None and was is not None:
                self._keep_late_write(folder, name, late, was, data, rel)

    def _written(self, folder: int, data: bytes) -> str:
        """A new hidden file of ``folder`` holding ``data``, durably: its name."""
        return self._new_file(folder, lambda fd: _write_all(fd, data))

    def _copied(self, folder: int, source: int, size: int) -> str:
        """A new hidden file of ``folder`` holding the first ``size`` bytes of the open file ``source``, copied a
        chunk at a time (never held whole), durably: its name."""
        def copy(fd: int) -> None:
            at = 0
            while at < size and (chunk := os.pread(source, min(1 << 20, size - at), at)):
                _write_all(fd, chunk)
                at += len(chunk)
        return self._new_file(folder, copy)

    def _new_file(self, folder: int, fill: Callable[[int], None]) -> str:
        """A new hidden file of ``folder`` that ``fill`` writes, fsynced (removed if anything fails): its name."""
        temp = note_temp_name()  # a killed write's is removed by the next scan of the vault (indexer.py)
        fd = os.open(temp, _TEMP_FLAGS, self.file_mode, dir_fd=folder)
        try:
            try:
                fill(fd)
                os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException:
            _unlink_quietly(temp, folder)
            raise
        return temp

    def _put(self, folder: int, name: str, data: bytes, over: bytes | None, rel: str) -> _Late | None:
        """``data`` made the note ``name`` of ``folder`` durably, only over the bytes ``over`` (None: only where
        there is none), ChangedOnDisk otherwise; what another program then wrote into the file it replaced, which
        it had opened before the rename (None: nothing)."""
        temp = self._written(folder, data)
        try:
            if over is None:
                _link_new(folder, temp, name, rel)
                late = None
            else:
                late = self._swapped(folder, name, over, rel, lambda: os.replace(temp, name, src_dir_fd=folder,
                                                                                 dst_dir_fd=folder))
        finally:
            _unlink_quietly(temp, folder)  # gone already once renamed or linked
        os.fsync(folder)
        return late

    def _swapped(self, folder: int, name: str, over: bytes, rel: str, step: Callable[[], None]) -> _Late | None:
        """``step`` (a rename over the note ``name``, or its unlink) done durably while the note holds ``over``
        (ChangedOnDisk otherwise); what another program then wrote into the file the step took away. That file
        keeps a hidden second name from before the step until the caller has placed what it holds (``_Late.kept``):
        a program that still writes into it (truncated, then written) writes into a file that has a name."""
        with _holding(folder, name, over, rel) as replaced:
            kept = _second_name(folder, name, replaced, rel)
            try:
                step()
                os.fsync(folder)
                late = self._late(folder, replaced, over, kept, rel)
            except BaseException:
                if kept is not None:
                    _unlink_quietly(kept, folder)
                raise
        if late is None and kept is not None:
            _unlink_quietly(kept, folder)
        return late

    def _late(self, folder: int, fd: int, was: bytes, kept: str | None, rel: str) -> _Late | None:
        """What the open file ``fd`` holds when it is not ``was``, or when a program has it open for writing
        still: its bytes, unless it is over ``late_limit``, then never read whole: kept by its second name
        (``kept``), or where the file system has no hard links by a hidden copy made a chunk at a time (a copy the
        file system refuses, full, leaves this write standing and their bytes said lost). None when it is ``was``
        and nothing can write it any more (looked at in this order: a file with no name but ``kept`` that no
        program has open for writing can change no more)."""
        writing = _open_for_writing(fd)
        if not writing and _holds(fd, was):
            return None
        data = _whole(fd, self.late_limit + 1)
        if len(data) <= self.late_limit:
            return _Late(data, len(data), kept, writing)
        size = os.fstat(fd).st_size
        if kept is None:
            try:
                kept = self._copied(folder, fd, size)
            except OSError as err:
                _lost(rel, size, err)
                return None
        return _Late(None, size, kept, writing)

    def _keep_late_write(self, folder: int, name: str, late: _Late, was: bytes, mine: bytes | None,
                         rel: str) -> None:
        """``_place_late_write``; a file system that refuses it (full, a quota, an I/O error) leaves this write
        standing, as written and about to be journaled, and their bytes are said lost in the log: this write
        failing too would lose both. (Their file put back, or kept beside, by its second name takes no room.)"""
        try:
            self._place_late_write(folder, name, late, was, mine, rel)
        except OSError as err:
            _lost(rel, late.size, err)
        finally:
            if late.kept is not None:
                _unlink_quietly(late.kept, folder)  # gone already once put back or kept beside

    def _place_late_write(self, folder: int, name: str, late: _Late, was: bytes, mine: bytes | None,
                          rel: str) -> None:
        """``late``: what another program left, after the check, in the note's file holding ``was`` that this
        write renamed ``mine`` over (None: deleted). Lines it appended are appended to the note as it is now, and
        the write stands. A text over ``late_limit`` is kept beside the note, and the write stands. Any other change
        (or lines appended to a deleted note, or a file a program still has open for writing, which may write more
        after this look) is put back as the note, over ``mine`` only (their file itself, by its second name, so
        that what they write in it still is the note's), and ChangedOnDisk raised, so that the write is made again
        over it (and refused as HeldOpen while they keep it open); should the note hold something else by then, the
        write stands and their text is kept beside the note (again their file, where they go on writing)."""
        theirs = late.data
        if late.open and late.kept is None:
            _log.warning("notes: another program opened %s for writing while Notewell replaced it, and the file system "
                         "has no hard links to give its file its name back: what it writes there from now on is not "
                         "in the note (a copy of what it held is)", rel)
        if theirs is not None and mine is not None and theirs.startswith(was) and not late.open:
            self._append_late(folder, name, theirs[len(was):], rel)
            return
        if theirs is None or len(theirs) > self.late_limit:
            self._keep_beside(folder, name, late, rel)
            return
        try:
            again = self._put_back(folder, name, late, mine, rel)
        except ChangedOnDisk:
            self._keep_beside(folder, name, late, rel)
            return
        if again is not None:  # written late again, into the file just put back: that text is kept beside
            try:
                self._keep_beside(folder, name, again, rel)
            except OSError as err:  # their text is the note again all the same: this write is still made again
                _lost(rel, again.size, err)
            finally:
                if again.kept is not None:
                    _unlink_quietly(again.kept, folder)
        raise ChangedOnDisk(rel)

    def _put_back(self, folder: int, name: str, late: _Late, mine: bytes | None, rel: str) -> _Late | None:
        """Their file made the note again, over ``mine`` only (None: where there is none): by its second name
        where it has one, else as a new file of their bytes; what was written late into the file it replaced."""
        if late.kept is None:
            assert late.data is not None  # read whole where it has no second name (_late)
            return self._put(folder, name, late.data, mine, rel)
        kept = late.kept
        if mine is None:
            _link_new(folder, kept, name, rel)
            os.fsync(folder)
            return None
        return self._swapped(folder, name, mine, rel, lambda: os.replace(kept, name, src_dir_fd=folder,
                                                                         dst_dir_fd=folder))

    def _append_late(self, folder: int, name: str, tail: bytes, rel: str) -> None:
        """``tail``, which another program appended to a file a rename took away, appended to the note as it is
        now, and so again for what it appends late to the file that append replaces, LATE_APPENDS times at most;
        then, or when the note is gone, was rewritten or would pass ``late_limit``, the rest is kept beside it."""
        for _ in range(LATE_APPENDS):
            current = _current(folder, name, self.late_limit + 1)
            if current is None or len(current) + len(tail) > self.late_limit:
                break
            try:
                late = self._put(folder, name, current + tail, current, rel)
            except ChangedOnDisk:
                continue
            if late is None:
                return
            try:
                if late.data is None or not late.data.startswith(current):
                    self._keep_beside(folder, name, late, rel)
                    return
                tail = late.data[len(current):]
            finally:
                if late.kept is not None:
                    _unlink_quietly(late.kept, folder)
        self._keep_beside(folder, name, _Late(tail, len(tail), None), rel)

    def _keep_beside(self, folder: int, name: str, late: _Late, rel: str) -> None:
        """Another program's text that cannot go into the note ``name``, kept beside it as
        ``<stem>.conflict-<hex>.<suffix>``, with a warning: their file itself, by its second name where it has one
        (what they go on writing there is in it), else a new file of their bytes."""
        kept = _conflict_name(name)
        if late.kept is not None:
            _link_new(folder, late.kept, kept, rel)
            os.fsync(folder)
        else:
            assert late.data is not None  # read whole where it has no second name (_late)
            self._put(folder, kept, late.data, None, rel)
        _log.warning("notes: another program wrote %s while Notewell replaced it, and its text (%d bytes) could not "
                     "be put back in the note: it is kept beside it as %s", rel, late.size, kept)

    def move(self, rel: str, new_rel: str, field: str = "new_path") -> None:
        """Move the note to ``new_rel``; FileExistsError when anything is there already."""
        parts, new_parts = rel.split("/"), new_rel.split("/")
        with self._folder(parts[:-1], create=False, field="path") as source, \
                self._folder(new_parts[:-1], create=True, field=field) as target:
            own = parts[-1] if parts[:-1] == new_parts[:-1] else None  # a rename to its own name in another form
            _refuse_another_form(target, new_parts[-1], field, MOVED_ALIKE, besides=own)
            try:
                os.link(parts[-1], new_parts[-1], src_dir_fd=source, dst_dir_fd=target, follow_symlinks=False)
            except OSError as err:
                if err.errno not in _NO_LINKS:
                    raise
                _rename_new(source, parts[-1], target, new_parts[-1])  # FAT, FUSE: it was an internal error
            else:
                os.unlink(parts[-1], dir_fd=source)
            os.fsync(target)
            os.fsync(source)

    def remove(self, rel: str, was: bytes | None = None) -> None:
        """Remove the note (its bytes are kept by the caller: in the trash and the journal); with ``was``, only
        while it holds those bytes, else ChangedOnDisk and nothing removed."""
        parts = rel.split("/")
        name = parts[-1]
        with self._folder(parts[:-1], create=False, field="path") as folder:
            if was is None:
                os.unlink(name, dir_fd=folder)
                os.fsync(folder)
                return
            late = self._swapped(folder, name, was, rel, lambda: os.unlink(name, dir_fd=folder))
            if late is not None:
                self._keep_late_write(folder, name, late, was, None, rel)

    @staticmethod
    def _refuse_non_file(folder: int, name: str, rel: str, field: str) -> None:
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            _refuse_another_form(folder, name, field, NOTE_ALIKE)
            return
        if not stat.S_ISREG(info.st_mode):
            raise InvalidArgument(field, f"{rel} is a symlink or a folder, not a note; it is never written over")


@contextmanager
def _holding(folder: int, name: str, was: bytes, rel: str) -> Iterator[int]:
    """The entry ``name`` of ``folder`` opened, while it is a file of exactly the bytes ``was`` (ChangedOnDisk
    otherwise) that no program has open for writing (HeldOpen otherwise). The size answers most changes (an
    append) without reading; an equal size is compared byte for byte, since a rewrite within the same second and of
    the same size leaves size and mtime alike on some file systems."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except FileNotFoundError:
        raise ChangedOnDisk(rel) from None
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EISDIR, errno.ENOTDIR):  # a symlink or folder now: not what was read
            raise ChangedOnDisk(rel) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode) or not _holds(fd, was):  # a folder, a FIFO made
            raise ChangedOnDisk(rel)  # since the read: no bytes to compare, and the read again says what it is
        if _open_for_writing(fd):
            raise HeldOpen(rel)
        yield fd
    finally:
        os.close(fd)


def _second_name(folder: int, name: str, fd: int, rel: str) -> str | None:
    """A hidden second name (a hard link) in ``folder`` of the note ``name``, whose file is open as ``fd``: named as
    a write's temporary file, so that one a killed write leaves is removed as they are (scratch_files.py). None
    where the file system has no hard links; ChangedOnDisk when the note is another file by now."""
    kept = note_temp_name()
    try:
        os.link(name, kept, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        raise ChangedOnDisk(rel) from None
    except OSError as err:
        if err.errno in _NO_LINKS:
            return None
        raise
    linked, held = os.stat(kept, dir_fd=folder, follow_symlinks=False), os.fstat(fd)
    if (linked.st_dev, linked.st_ino) != (held.st_dev, held.st_ino):
        _unlink_quietly(kept, folder)
        raise ChangedOnDisk(rel)
    return kept


def _open_for_writing(fd: int) -> bool:
    """Whether a program has the file open as ``fd`` open for writing (``fd`` itself is read only), so that what
    it writes next goes into this file whatever name it has then: Linux refuses a read lease on such a file
    (EAGAIN). The lease is let go at once: a program opening the file for writing in between waits that long, and
    the signal that tells the lease holder so is made SIGURG, which a process ignores, not SIGIO, which would end
    the server. False where it cannot be told: no leases (not Linux, a file system without them, leases turned off)
    or a file of another user (a lease is its owner's): the look after a rename is then the last one made."""
    if _SET_LEASE is None:
        return False
    try:
        fcntl.fcntl(fd, _SET_SIGNAL, signal.SIGURG)
        fcntl.fcntl(fd, _SET_LEASE, fcntl.F_RDLCK)
    except OSError as err:
        return err.errno == errno.EAGAIN
    with suppress(OSError):
        fcntl.fcntl(fd, _SET_LEASE, fcntl.F_UNLCK)
    return False


def _holds(fd: int, was: bytes) -> bool:
    """Whether the open file ``fd`` holds exactly the bytes ``was`` (its size first, then its bytes)."""
    return os.fstat(fd).st_size == len(was) and os.pread(fd, len(was) + 1, 0) == was


def _whole(fd: int, most: int) -> bytes:
    """The first ``most`` bytes of the open file ``fd`` (all of them when it is shorter)."""
    chunks, at = [], 0
    while at < most:
        chunk = os.pread(fd, min(1 << 20, most - at), at)
        if not chunk:
            break
        chunks.append(chunk)
        at += len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _current(folder: int, name: str, most: int) -> bytes | None:
    """The bytes of the note ``name`` of ``folder`` (the first ``most``); None when it is gone or is no longer a
    file."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return _whole(fd, most)
    finally:
        os.close(fd)


def _lost(rel: str, size: int, err: OSError) -> None:
    """Another program's late bytes that the file system refused to keep anywhere (full, a quota, an I/O error)."""
    _log.error("notes: another program wrote %s while Notewell replaced it, and its %d bytes could not be kept: %s",
               rel, size, err)


def _conflict_name(name: str) -> str:
    """``<stem>.conflict-<hex>.<suffix>`` for the note ``name``, its stem cut (between two characters) so that it
    is a name the file system takes: a note's own name may be NAME_MAX_BYTES long already."""
    stem, dot, suffix = name.rpartition(".")
    if not (dot and stem):
        stem, suffix = name, ""
    ending = f".conflict-{secrets.token_hex(4)}" + (f".{suffix}" if suffix else "")
    room = NAME_MAX_BYTES - len(ending.encode("utf-8", errors="surrogatepass"))
    at = len(stem)
    while at > 1 and (len(stem[:at].encode("utf-8", errors="surrogatepass")) > room
                      or not between_characters(stem, at)):
        at -= 1
    return stem[:at] + ending


def _link_new(folder: int, temp: str, name: str, rel: str) -> None:
    """The file ``temp`` of ``folder`` given the name ``name``, which nothing may hold (ChangedOnDisk when a file
    was made there meanwhile): a link, which never replaces, where a rename would."""
    try:
        os.link(temp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except FileExistsError:
        raise ChangedOnDisk(rel) from None
    except OSError as err:
        if err.errno not in _NO_LINKS:
            raise
        try:
            _rename_new(folder, temp, folder, name)
        except FileExistsError:
            raise ChangedOnDisk(rel) from None


def _find_renameat2() -> Callable[[int, bytes, int, bytes, int], int] | None:
    """The C library's renameat2 (glibc 2.28 and later), None without it (not Linux, an older C library)."""
    try:
        found = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    found.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    found.restype = ctypes.c_int
    return found


_RENAMEAT2 = _find_renameat2()
_RENAME_NOREPLACE = 1  # linux/fs.h
_NO_NOREPLACE = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP)  # a kernel or file system without it


def _rename_new(source: int, name: str, target: int, new_name: str) -> None:
    """The entry ``name`` of the folder ``source`` renamed ``new_name`` in ``target``, a name nothing may hold
    (FileExistsError otherwise), where the file system has no hard links to link it there first: in one step where
    the kernel and the file system can (renameat2 with RENAME_NOREPLACE: Linux, on FAT and most local file systems),
    else a check, then a rename, which replaces a file made between the two (a FUSE mount or a share without it)."""
    if _RENAMEAT2 is not None:
        if _RENAMEAT2(source, os.fsencode(name), target, os.fsencode(new_name), _RENAME_NOREPLACE) == 0:
            return
        failed = ctypes.get_errno()
        if failed not in _NO_NOREPLACE:
            raise OSError(failed, os.strerror(failed), new_name)  # EEXIST: FileExistsError
    try:
        os.stat(new_name, dir_fd=target, follow_symlinks=False)
    except FileNotFoundError:
        os.replace(name, new_name, src_dir_fd=source, dst_dir_fd=target)
        return
    raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), new_name)


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
