"""The steps every note write shares, under the note's lock: read what is there, check the version, write,
keep the old bytes in the trash and the journal, index the change, and answer with what changed.

The note writing service (note_writing.py) and the journal's undo (note_journal.py) are both made of these
steps, so an undo is a write like any other: locked, version-checked, journaled and indexed.

A write indexes what it wrote right after the file is in place, then journals it (the journal entry, its
audit entry and a git commit), the journal even when the indexing failed: the vault watcher sees the same
file change and syncs it STEP_MS later, and had the journal (a git commit can take long) come first, the
watcher's sync could run before the write's own and index the note in its stead. A sync plans under the
store's writer lock, so whichever comes second finds the note current and indexes nothing; and a watcher's
sync that reads the note after the next write replaced it leaves it to that write (indexer.py). The notes a move
rewrites (``put(index=False)``) are the exception: each is journaled as soon as it is written, under its lock, and
all are indexed together in one sync once every one is written (note_writing.py: one sync instead of one a note);
a watcher's sync may index one of them first, and the move's sync then finds it current, as above.

The note's lock binds Notewell's writers alone: an editor or a script outside may write the note between a
write's read and its rename. put and remove write only over the bytes the write read (note_files.ChangedOnDisk
otherwise, nothing written), and ``settled`` runs the write's steps again from the read, so the change is applied
to the note as the other program left it and nothing it wrote is lost; a write that named its version is then
refused (the version is gone), and a note that keeps changing, WRITE_ATTEMPTS times over, is a Conflict, as is
one another program keeps open for writing all that time (note_files.HeldOpen: its next write would be lost).
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from notewell.access.audit import AuditTrail
from notewell.access.principal import Principal
from notewell.config import INDEX_DIR_NAME, TRASH_DIR_NAME, Settings
from notewell.errors import Conflict, InvalidArgument, VersionConflict
from notewell.records.journal import JournalAction, JournalEntry
from notewell.services.indexing import IndexingService
from notewell.services.line_endings import shown_lines
from notewell.services.note_diff import VERSION_CHARS, change, version_of
from notewell.services.note_files import PRIVATE_FOLDER_MODE, ChangedOnDisk, HeldOpen, NoteFiles
from notewell.services.note_git import NoteGit
from notewell.services.note_locks import NoteLocks
from notewell.services.note_paths import NotePath, check_not_ignored, note_path
from notewell.store.base import IdentityRepository, JournalRepository
from notewell.store.note_lease import NoteLease
from notewell.timestamps import now_iso

T = TypeVar("T")
_VERSION = re.compile(f"^[0-9a-f]{{{VERSION_CHARS}}}$")
LOCKS_FOLDER = "locks"
WRITE_ATTEMPTS = 5  # how often a write reads the note again when another program changed it under the write


@dataclass(frozen=True)
class NoteChange:
    """What one write did: where the note is, its version after (None: deleted) and before, the changed lines
    of the new text, a unified diff (capped: ``diff_truncated``) and the journal entry that records it."""

    path: str  # vault path, where the note is now (for a delete: where it was)
    version: str | None
    previous_version: str | None
    first_line: int
    last_line: int  # first_line - 1 when lines were only removed
    summary: str
    diff: str
    diff_truncated: bool
    journal_id: int
    moved_from: str | None = None
    trash: str | None = None  # a deleted note's copy in the trash (vault-relative)
    unlinked: tuple[str, ...] = ()  # a move: where links to or of the note no longer resolve ("path:line")
    relinked: tuple[str, ...] = ()  # a move: where links to or of the note were rewritten to keep resolving
    dangling: tuple[str, ...] = ()  # a move: the symbolic links of the vault that led to the note (vault paths)


@dataclass(frozen=True)
class Write:
    """One write as the journal records it: who, through which door's call, what it does."""

    principal: Principal
    tool: str
    action: JournalAction
    undoes: int | None = None


@dataclass(frozen=True)
class AnyOf:
    """The versions a write is meant for, any one of which lets it proceed: REST's If-Match list (RFC 9110,
    13.1.1); ``any_version``, whichever version the note is at, as long as there is a note (If-Match: *). With
    neither, it matches no version (an If-Match of weak tags alone), and the write is refused as a stale one: after
    the checks of the caller's rights and of the note's existence, which come first whatever a write names."""

    versions: tuple[str, ...] = ()
    any_version: bool = False

    def holds(self, version: str) -> bool:
        """Whether a note at ``version`` ("": no note) is one the write is meant for."""
        return bool(version) and (self.any_version or version in self.versions)

    def shown(self) -> str:
        return "*" if self.any_version else " or ".join(self.versions)


def check_version(expected: str | AnyOf | None) -> AnyOf | None:
    """The versions a write names (one, as every door but REST names it), each checked to be a version."""
    if expected is None:
        return None
    named = expected.versions if isinstance(expected, AnyOf) else (expected,)
    cleaned = tuple(version.strip().lower() for version in named)
    for version, given in zip(cleaned, named, strict=True):
        if not _VERSION.match(version):
            raise InvalidArgument("expected_version", f"{given!r} is not a version: pass the {VERSION_CHARS} hex "
                                                      "digits that reading the document or a previous write returned")
    return AnyOf(cleaned, isinstance(expected, AnyOf) and expected.any_version)


def refuse_added_nul(before: bytes | None, after: bytes) -> None:
    """A write that would add a NUL character to a note is refused, whatever door it came through: a file holding
    NUL is binary to the index (indexer.py), so the note would leave readDoc, search and links while its write
    answered success. MCP refuses NUL in any argument; REST's bodies, the CLI's standard input and the web editor's
    form are refused here. A note that held NUL before (another program wrote it) may still be edited around it."""
    if after.count(b"\x00") > (before or b"").count(b"\x00"):
        raise InvalidArgument("content", "must not contain the NUL character (\\x00); remove it")


def decode_note(data: bytes, path: str) -> tuple[str, bytes]:
    """(text, the byte order mark it had or b"") of a note to edit; a note that is not UTF-8 is refused."""
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    try:
        return data[len(bom):].decode("utf-8"), bom
    except UnicodeDecodeError as err:
        raise InvalidArgument("path", f"{path} is not valid UTF-8 text, so it is not edited here") from err


class NoteVault:
    def __init__(self, settings: Settings, journal: JournalRepository, indexing: IndexingService,
                 audit: AuditTrail, lease: NoteLease, identity: IdentityRepository) -> None:
        self.settings = settings
        self.identity = identity  # a conflict names the writer by handle
        self.files = NoteFiles(settings.vault, settings.max_file_bytes)
        self.locks = NoteLocks(settings.vault / INDEX_DIR_NAME / LOCKS_FOLDER, lease)
        self.git = NoteGit(settings.vault, settings.git_commit)
        self.journal = journal
        self.indexing = indexing
        self.audit = audit

    @property
    def max_bytes(self) -> int:
        return self.settings.max_file_bytes

    def spelled(self, target: NotePath) -> NotePath:
        """The note at ``target`` as its file is named in its project: the path given in either Unicode form
        finds it (NoteFiles.named). For a read of the journal's history; a write asks ``found``."""
        return NotePath(target.project, self.files.named(target.project, target.rel))

    def found(self, target: NotePath, field: str = "path") -> NotePath:
        """The note a write edits, moves, deletes or undoes at ``target`` (``spelled``), its path as found checked
        as a typed one is (a hidden name, an ignore file; note_paths.py): an ignore file matches names as they are
        written, so the other Unicode form of a name it passes over is not passed over, and without this check a
        write by that form reached the ignored file. InvalidArgument naming ``field`` otherwise."""
        found = self.spelled(target)
        checked = note_path(found.vault_path, self.settings.file_types, field)
        check_not_ignored(self.settings.vault, checked, field)
        return checked

    def read(self, target: NotePath, field: str = "path") -> bytes | None:
        return self.files.read(target.vault_path, self.max_bytes, field)

    def check(self, target: NotePath, current: bytes | None, expected: AnyOf | None) -> None:
        """Refuse the write when ``expected`` names no version the note has (VersionConflict with the current
        version and how it differs from the first named, when the journal still holds that version's text)."""
        if expected is None:
            return
        now = version_of(current) if current is not None else ""
        if expected.holds(now):
            return
        named = expected.versions
        if current is None and not any(v in (e.before_version, e.after_version) for e in self._entries(target)
                                       for v in named):
            raise VersionConflict(target.vault_path, expected.shown(), "", "never there", never_there=True)
        summary = self._difference(target, named[0], current) if named else "no version of it was named"
        raise VersionConflict(target.vault_path, expected.shown(), now, summary)

    def _entries(self, target: NotePath) -> list[JournalEntry]:
        return self.journal.entries([target.project], paths=[target.rel], limit=200)

    def _difference(self, target: NotePath, expected: str, current: bytes | None) -> str:
        replaced = self._entries(target)
        old = next((e for e in replaced if e.before_version == expected), None)
        full = self.journal.get(old.id) if old is not None else None
        if current is None:
            return "deleted since"
        text = current.decode("utf-8", errors="replace")
        if full is None or full.before is None:
            lines = len(shown_lines(text)) if text else 0  # as readDoc counts them
            return f"changed outside this journal; it now has {lines} line{'' if lines == 1 else 's'}"
        writer = self.identity.user(full.user_id)
        by = f", first by {writer.handle if writer is not None else full.user_id} ({full.tool}, journal {full.id})"
        return change(full.before.decode("utf-8", errors="replace"), text, target.vault_path).summary + by

    @staticmethod
    def settled(target: NotePath, attempt: Callable[[], T]) -> T:
        """``attempt()`` (the write's steps from its read of the note, under the note's lock) done again while
        another program changes the note on disk under it (the module's docstring)."""
        held = False
        for _ in range(WRITE_ATTEMPTS):
            try:
                return attempt()
            except HeldOpen:
                held = True
            except ChangedOnDisk:
                held = False
        if held:
            raise Conflict(f"Conflict: {target.vault_path} is open for writing in another program, and what it writes "
                           "next would be lost were the note replaced now; nothing was written, try again once that "
                           "program has closed it", field="path")
        raise Conflict(f"Conflict: {target.vault_path} keeps changing on disk ({WRITE_ATTEMPTS} times while this "
                       "write was under way): another program is writing it; nothing was written, try again when it "
                       "is still", field="path")

    def check_size(self, data: bytes) -> None:
        if len(data) > self.max_bytes:
            raise InvalidArgument("content", f"the note would be {len(data)} bytes, over the {self.max_bytes} byte "
                                             "limit of the vault's index; split it into several notes")

    def put(self, write: Write, target: NotePath, before: bytes | None, after: bytes, *,
            index: bool = True) -> NoteChange:
        """Write ``after`` over ``before`` (held under the lock), journal it and index it; ``index`` False leaves
        the indexing to the caller, who indexes many notes in one sync once each is written and journaled (a
        move's rewritten notes, note_writing.py: one sync instead of one a note)."""
        self.check_size(after)
        if write.action != "undo":  # an undo gives back bytes the note held
            refuse_added_nul(before, after)
        self.files.write(target.vault_path, after, checked=True, was=before)
        try:
            if index:
                self.indexing.sync_paths([target.vault_path])  # before the journal: see the module's docstring
        finally:
            entry = self._record(write, target, None, before, after)
        return self._answer(entry, target, before, after)

    def remove(self, write: Write, target: NotePath, before: bytes) -> NoteChange:
        """Delete the note, its bytes kept in the trash and the journal."""
        folder = f"{TRASH_DIR_NAME}/{secrets.token_hex(6)}"
        trash = f"{folder}/{target.vault_path}"
        NoteFiles(self._index_folder(), self.max_bytes, private=True).write(trash, before, field="path")
        try:
            self.files.remove(target.vault_path, was=before)
        except ChangedOnDisk:
            self._untrash(trash)  # the copy of bytes no longer there
            raise
        try:
            self.indexing.sync_paths([target.vault_path])
        finally:
            entry = self._record(write, target, None, before, None)
        answer = self._answer(entry, target, before, b"")
        return replace(answer, version=None, trash=f"{INDEX_DIR_NAME}/{trash}")

    def _untrash(self, trash: str) -> None:
        """Take a trash copy away, and the folders made for it, up to the trash: one file's chain, taken name
        by name (shutil.rmtree recursed once per folder: a note 1,000 folders deep passed Python's limit)."""
        index, copy = self._index_folder(), self._index_folder() / trash
        with suppress(OSError):
            copy.unlink()
            folder = copy.parent
            while folder != index / TRASH_DIR_NAME:
                folder.rmdir()  # only empty: another copy's folders stay
                folder = folder.parent

    def move(self, write: Write, source: NotePath, target: NotePath, data: bytes) -> NoteChange:
        """Move the note (never over another: FileExistsError), journal it and index both places."""
        self.files.move(source.vault_path, target.vault_path)
        try:
            self.indexing.sync_paths([source.vault_path, target.vault_path])
        finally:
            entry = self._record(write, source, target, data, data)
        version = version_of(data)
        return NoteChange(target.vault_path, version, version, 1, 0, "moved, no line changed", "", False, entry.id,
                          moved_from=source.vault_path)

    def _index_folder(self) -> Path:
        """The vault's .notewell folder, the owner's alone (0700: the trash below holds copies of every home's
        notes; made so whatever the umask, and tightened if an earlier version left it open)."""
        folder = self.settings.vault / INDEX_DIR_NAME
        folder.mkdir(mode=PRIVATE_FOLDER_MODE, exist_ok=True)
        made = folder.stat()
        if made.st_mode & 0o077 and made.st_uid == os.getuid():
            folder.chmod(PRIVATE_FOLDER_MODE)
        return folder

    def _record(self, write: Write, target: NotePath, moved_to: NotePath | None, before: bytes | None,
                after: bytes | None) -> JournalEntry:
        p = write.principal
        keep = before if moved_to is None else None  # a move changes no byte
        entry = self.journal.append(JournalEntry(
            0, now_iso(), p.user_id, p.token_id, write.tool, write.action, target.project, target.rel,
            moved_to.rel if moved_to else None, version_of(before) if before is not None else None,
            version_of(after) if after is not None else None, write.undoes, keep))
        self.audit.record(p, f"note.{write.action}", target.vault_path,
                          {"journal": entry.id, "tool": write.tool, "version": entry.after_version,
                           **({"to": moved_to.vault_path} if moved_to else {})})
        self.git.commit([target.vault_path, *([moved_to.vault_path] if moved_to else [])], (p.handle, p.email),
                        f"notewell: {write.action} {target.vault_path} (journal {entry.id}, {write.tool})")
        return entry

    @staticmethod
    def _answer(entry: JournalEntry, target: NotePath, before: bytes | None, after: bytes) -> NoteChange:
        old = (before or b"").decode("utf-8", errors="replace")
        diff = change(old, after.decode("utf-8", errors="replace"), target.vault_path)
        return NoteChange(target.vault_path, version_of(after), entry.before_version, diff.first_line, diff.last_line,
                          diff.summary, diff.diff, diff.truncated, entry.id)
