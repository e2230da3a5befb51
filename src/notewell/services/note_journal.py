"""The journal of note writes, and undo (docs/writing.md).

Listing the journal needs ``knowledge:read`` and shows only the projects the caller reads. Undoing an entry
needs ``note:write`` on its project and is a write like any other (locked, journaled, indexed): it puts
back what the entry replaced, only if the note is still exactly as the entry left it (its version), and
each entry is undone at most once. An undo is itself an entry, so it can be undone in turn. The undo of a
move is a move back through the writing service, so it takes its links along as the move did (the note as the
move's own rewrite of its links left it counts as left by the move).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from notewell.access.policy import Action
from notewell.access.principal import Principal
from notewell.errors import Conflict, InvalidArgument, NotFound
from notewell.paths import normalize_path, spellings
from notewell.records.journal import JournalEntry
from notewell.services.note_diff import change, version_of
from notewell.services.note_paths import NotePath, note_path, refuse_dot_segments
from notewell.services.note_vault import NoteChange, NoteVault, Write
from notewell.timestamps import parse_iso

if TYPE_CHECKING:
    from notewell.access.authorization import Authorization
    from notewell.services.note_writing import NoteWritingService

READ: Action = "knowledge:read"
WRITE: Action = "note:write"
JOURNAL_LIMIT_DEFAULT = 50
JOURNAL_LIMIT_MAX = 500
JOURNAL_ID_MAX = 2**63 - 1  # an entry id is a 64-bit integer in both stores
HISTORY_MAX = 20  # the writes a document's history shows, each with its diff
JOURNAL_READ = 200  # the newest entries of a note read to find the move that took it away


@dataclass(frozen=True)
class HistoryItem:
    """One write of a document's history: the entry, its diff when both texts are still known (a move has
    none), and whether the caller may undo it."""

    entry: JournalEntry
    diff: str
    diff_truncated: bool
    may_undo: bool
    by: str  # who wrote it, as the team knows them: name and @handle (the user id for one no longer there)


class NoteJournalService:
    def __init__(self, vault: NoteVault, authorization: Authorization, notes: NoteWritingService) -> None:
        self.vault = vault
        self.authorization = authorization
        self.notes = notes  # an undo of a move is a move back, with its links

    def entries(self, p: Principal, *, path: str | None = None, since: str | None = None,
                before: int | None = None, limit: int = JOURNAL_LIMIT_DEFAULT) -> list[JournalEntry]:
        """The newest entries first, in the projects p reads: of one note (``path``, a vault path: where it was
        or where it went), at or after ``since`` (ISO 8601), older than entry ``before`` (the next page: the
        last id of this one), at most ``limit``."""
        self.authorization.authorize(p, READ)
        if not 1 <= limit <= JOURNAL_LIMIT_MAX:
            raise InvalidArgument("limit", f"must be between 1 and {JOURNAL_LIMIT_MAX}")
        if before is not None and not 1 <= before <= JOURNAL_ID_MAX:
            raise InvalidArgument("before", f"must be an entry's id, from 1 to {JOURNAL_ID_MAX}")
        if since is not None:
            try:
                parse_iso(since)
            except ValueError as err:
                raise InvalidArgument("since", f"{since!r} is not a time; write it as 2026-05-01 or "
                                               "2026-05-01T09:00:00Z") from err
        projects = [pr.id for pr in self.authorization.projects(p, READ)]
        rels = None
        if path:
            refuse_dot_segments(path)
            project, _, rel = normalize_path(path).partition("/")
            if project not in projects or not rel:
                return []
            # a note's entries name it as its file was named: either whole form, or its components' as on disk
            on_disk = self.vault.spelled(NotePath(project, rel)).rel
            projects, rels = [project], list(dict.fromkeys([*spellings(rel), on_disk]))
        return self.vault.journal.entries(projects, paths=rels, since=since, before=before, limit=limit)

    def history(self, p: Principal, path: str) -> tuple[list[HistoryItem], bool]:
        """The newest writes (at most HISTORY_MAX) of the document at ``path`` (vault path), each with the diff
        it made: the text after a write is the text the next write replaced (the journal keeps it), or the note
        as it is now; and whether older writes were left out (the journal has them all)."""
        entries = self.entries(p, path=path, limit=HISTORY_MAX + 1)
        more = len(entries) > HISTORY_MAX
        entries = entries[:HISTORY_MAX]
        if not entries:
            return [], False
        place = self.vault.spelled(NotePath(entries[0].project, normalize_path(path).partition("/")[2]))
        known: dict[str, bytes] = {}
        current = self.vault.read(place)
        if current is not None:
            known[version_of(current)] = current
        full = [self.vault.journal.get(e.id) or e for e in entries]
        for e in full:
            if e.before is not None and e.before_version is not None:
                known[e.before_version] = e.before
        may_undo = self.authorization.allowed(p, WRITE, place.project)
        items = []
        for e in full:
            before = b"" if e.before_version is None else known.get(e.before_version)
            after = b"" if e.after_version is None else known.get(e.after_version)
            diff, cut = "", False
            if e.new_path is None and before is not None and after is not None:
                made = change(before.decode("utf-8", errors="replace"), after.decode("utf-8", errors="replace"),
                              place.vault_path)
                diff, cut = made.diff, made.truncated
            items.append(HistoryItem(replace(e, before=None), diff, cut, may_undo, self._who(e.user_id)))
        return items, more

    def _moved_since(self, entry: JournalEntry, where: NotePath) -> JournalEntry | None:
        """The move that took the note away from ``where`` after ``entry`` (the newest), if one did."""
        later = [e for e in self.vault.journal.entries([where.project], paths=[where.rel], limit=JOURNAL_READ)
                 if e.id > entry.id and e.action == "move" and e.path == where.rel and e.new_path]
        return later[0] if later else None

    def _who(self, user_id: str) -> str:
        user = self.authorization.identity.user(user_id)
        if user is None:
            return user_id
        return f"{user.name} (@{user.handle})" if user.name else f"@{user.handle}"

    def undo(self, p: Principal, entry_id: int, *, tool: str, of: str | None = None) -> NoteChange:
        """Put back what entry ``entry_id`` replaced; Conflict with the reason when the note changed since.
        ``of``: the note the caller means (a page's URL names it): an entry of another note is not found."""
        self.authorization.authorize(p, WRITE)
        if not 1 <= entry_id <= JOURNAL_ID_MAX:
            raise InvalidArgument("journal_id", f"must be a journal entry's id, from 1 to {JOURNAL_ID_MAX}")
        entry = self.vault.journal.get(entry_id)
        if entry is None or not self.authorization.allowed(p, "project:see", entry.project):
            raise NotFound(f"Not found: journal entry {entry_id}")
        self.authorization.authorize(p, WRITE, entry.project)
        place = self.vault.found(NotePath(entry.project, entry.path), "journal_id")  # renamed to its other form since
        moved = self.vault.found(NotePath(entry.project, entry.new_path), "journal_id") if entry.new_path else None
        if of is not None and not self._named(of) & {place.vault_path, *([moved.vault_path] if moved else [])}:
            raise NotFound(f"Not found: journal entry {entry_id} of {of}")
        write = Write(p, tool, "undo", undoes=entry.id)
        if moved is not None:
            return self._move_back(entry, moved, place, write)

        def attempt() -> NoteChange:
            now = self.vault.read(place)
            self._still_as_left(entry, place, now)
            if entry.before is None:
                assert now is not None
                return self.vault.remove(write, place, now)
            return self.vault.put(write, place, now, entry.before)

        with self.vault.locks.holding(place.vault_path):
            self._not_undone(entry)
            return self.vault.settled(place, attempt)


    def _named(self, of: str) -> set[str]:
        """The vault paths ``of`` names, as ``entries`` reads its ``path``: either whole form, or its names' forms
        as on disk (a folder composed holding a file named decomposed), so the entry a page lists is undone.
        ``of`` comes from a URL: it is checked as a note's path first (a write's path passed the same check), so a
        NUL or a ``..`` never reaches the file system; a path that is not a note's names none (empty)."""
        try:
            checked = note_path(of, self.vault.settings.file_types)
        except InvalidArgument:
            return set()
        return {*spellings(checked.vault_path), self.vault.spelled(checked).vault_path}

    def _not_undone(self, entry: JournalEntry) -> None:
        done = self.vault.journal.undone(entry.id)
        if done is not None:
            raise Conflict(f"Conflict: journal entry {entry.id} was undone already, by entry {done.id}")

    def _move_back(self, entry: JournalEntry, moved: NotePath, place: NotePath, write: Write) -> NoteChange:
        """Undo a move: a move back, which takes its links along as a move does (note_writing.py), so the notes
        the move rewrote name the note where it is again; refused unless the note is as the move left it, or as
        the move's own rewrite of its links left it."""

        def as_left(now: bytes | None) -> bytes:
            self._not_undone(entry)
            rewrite = self._own_rewrite(entry, moved)
            if now is None or rewrite is None or version_of(now) != rewrite.after_version:
                self._still_as_left(entry, moved, now)
            assert now is not None
            if self.vault.read(place) is not None:
                raise Conflict(f"Conflict: cannot move {moved.vault_path} back: {place.vault_path} exists again")
            return now
        return self.notes.moved(write.principal, moved, place, write, as_left, update_links=True)

    def _own_rewrite(self, entry: JournalEntry, moved: NotePath) -> JournalEntry | None:
        """The move's rewrite of the moved note's own links (an edit by the same call, right on the version the
        move left), if there is one."""
        return next((e for e in self.vault.journal.entries([moved.project], paths=[moved.rel], limit=JOURNAL_READ)
                     if e.id > entry.id and e.action == "edit" and e.path == moved.rel and e.tool == entry.tool
                     and e.user_id == entry.user_id and e.before_version == entry.after_version), None)

    def _still_as_left(self, entry: JournalEntry, where: NotePath, now: bytes | None) -> None:
        current = version_of(now) if now is not None else None
        if current == entry.after_version:
            return
        if current is None:
            moved = self._moved_since(entry, where)
            if moved is not None:
                raise Conflict(f"Conflict: {where.vault_path} was moved to {where.project}/{moved.new_path} by journal "
                               f"entry {moved.id} since journal entry {entry.id}; undo that move first")
            raise Conflict(f"Conflict: {where.vault_path} is gone since journal entry {entry.id}; nothing to undo")
        if entry.after_version is None:
            raise Conflict(f"Conflict: {where.vault_path} exists again (version {current}) since journal entry "
                           f"{entry.id} deleted it; it is not written over")
        raise Conflict(f"Conflict: {where.vault_path} changed since journal entry {entry.id} (it was version "
                       f"{entry.after_version}, it is {current} now); undo the later entries first, or edit it")
