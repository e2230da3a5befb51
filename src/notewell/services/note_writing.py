"""Writing notes into the vault: create, edit, move and delete, for agents and people alike (docs/writing.md).

Every method asks Authorization for ``note:write`` on the note's project first (the knowledge:write scope on
the token, then a write grant or the caller's own home: the role adds nothing); a project the caller may not see answers
``Not found: <path>`` exactly as a missing note does. Paths are checked by note_paths.py, the files written
by note_files.py (atomic, through the vault's descriptor), each write done under the note's lock by
note_vault.py, which journals it and indexes it before the method returns: a search right after a write
finds the new text.

``expected_version`` (the version readDoc and every write answer with) makes a write conditional: a note
changed since is refused with its current version (VersionConflict), never silently overwritten.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from notewell.access.policy import Action
from notewell.access.principal import Principal
from notewell.errors import Conflict, Forbidden, InvalidArgument, NotFound
from notewell.services.line_endings import restored
from notewell.services.note_diff import version_of
from notewell.services.note_edits import Edit, apply_edit, check_arguments
from notewell.services.note_paths import NotePath, check_not_ignored, note_path, refuse_unprintable_name
from notewell.services.note_vault import NoteChange, NoteVault, Write, check_version, decode_note
from notewell.vault.link_rewrite import Move, relinked
from notewell.vault.note_links import is_markdown

if TYPE_CHECKING:
    from notewell.access.authorization import Authorization
    from notewell.services.links import LinkService

WRITE: Action = "note:write"
MOVE_LINKS_READ = 500  # the links to (and of) a moved note compared before and after the move
UNLINKED_SHOWN = 50  # the broken ones a move's answer lists (its summary counts them all)


class NoteWritingService:
    def __init__(self, vault: NoteVault, authorization: Authorization, links: LinkService) -> None:
        self.vault = vault
        self.authorization = authorization
        self.links = links

    def writable(self, p: Principal, path: str, field: str = "path") -> NotePath:
        """The checked path of a note p may write; NotFound naming ``path`` when its project is hidden or
        missing, Forbidden when p may read it but not write there."""
        self.authorization.authorize(p, WRITE)
        target = note_path(path, self.vault.settings.file_types, field)
        if not self.authorization.allowed(p, "project:see", target.project):  # hidden: as a missing note
            raise NotFound(f"Not found: {path}")
        self.authorization.authorize(p, WRITE, target.project)
        check_not_ignored(self.vault.settings.vault, target, field)
        return target

    @property
    def max_bytes(self) -> int:
        """The most a note may hold: the vault's file limit (notewell.toml's [index] max_file_bytes)."""
        return self.vault.max_bytes

    def read_for_edit(self, p: Principal, path: str) -> tuple[str, str, bool]:
        """(the note's text as it is on disk, its version, whether it starts with a byte-order mark), for an
        editor: only for a caller who may write it. The mark is not in the text; an editor that saves the
        whole note puts it back (as "\ufeff" first), so a save changes only what the person changed."""
        target = self.writable(p, path)
        data = self._existing(target, path)
        text, bom = decode_note(data, target.vault_path)
        return text, version_of(data), bool(bom)

    def save_edited(self, p: Principal, path: str, edited: str, *, tool: str,
                    expected_version: str | None) -> NoteChange | None:
        """The whole note as an editor sends it back (line breaks as a browser sends them: every one CRLF), saved
        over ``expected_version`` with the note's own line endings and byte-order mark given back
        (line_endings.py); None, and nothing written, when the person changed nothing."""
        text, version, bom = self.read_for_edit(p, path)
        content = restored(text, edited.replace("\r\n", "\n").replace("\r", "\n"))
        if content == text and check_version(expected_version) == version:
            return None
        return self.write_note(p, path, ("\ufeff" if bom else "") + content, tool=tool, overwrite=True,
                               expected_version=expected_version)

    def write_note(self, p: Principal, path: str, content: str, *, tool: str, overwrite: bool = False,
                   expected_version: str | None = None) -> NoteChange:
        """Create the note (its folders too); over an existing note only with ``overwrite``."""
        target = self.writable(p, path)
        expected = check_version(expected_version)
        data = content.encode("utf-8")
        self.vault.check_size(data)

        def attempt() -> NoteChange:
            before = self.vault.read(target)
            if before is None:
                refuse_unprintable_name(target)
            if before is not None and not overwrite:
                raise Conflict(f"Conflict: {target.vault_path} exists already; edit it instead", field="path",
                               remedy="overwrite-whole")
            self.vault.check(target, before, expected)
            return self.vault.put(Write(p, tool, "write"), target, before, data)

        with self.vault.locks.holding(target.vault_path):
            return self.vault.settled(target, attempt)

    def edit_note(self, p: Principal, path: str, edit: Edit, *, tool: str,
                  expected_version: str | None = None) -> NoteChange:
        """Apply one edit operation (note_edits.py) to the note as it is on disk now; an argument its operation
        does not take is refused."""
        check_arguments(edit)
        target = self.writable(p, path)
        expected = check_version(expected_version)

        def attempt() -> NoteChange:
            before = self._existing(target, path)
            self.vault.check(target, before, expected)
            text, bom = decode_note(before, target.vault_path)
            after = bom + apply_edit(text, edit, markdown=is_markdown(target.vault_path)).encode("utf-8")
            if after == before:
                raise InvalidArgument("fields" if edit.operation == "set_front_matter" else "content",
                                      "the edit changes nothing: the note already reads so")
            return self.vault.put(Write(p, tool, "edit"), target, before, after)

        with self.vault.locks.holding(target.vault_path):
            return self.vault.settled(target, attempt)

    def move_note(self, p: Principal, path: str, new_path: str, *, tool: str,
                  expected_version: str | None = None, update_links: bool = True) -> NoteChange:
        """Move (or rename) the note within its project; never over another note. With ``update_links``, the
        links that named it (in the notes p may write) and its own relative links are rewritten to keep naming
        what they named (vault/link_rewrite.py), each rewritten note a journal entry of its own."""
        source = self.writable(p, path)
        target = self.writable(p, new_path, "new_path")
        refuse_unprintable_name(target, "new_path")
        if target.project != source.project:
            raise InvalidArgument("new_path", f"must stay in the project {source.project}; to move a note to another "
                                              "project, write it there and delete it here")
        if target == source:
            raise InvalidArgument("new_path", "is the note's own path; name where it should go")
        expected = check_version(expected_version)
        with self.vault.locks.holding(source.vault_path, target.vault_path):
            data = self._existing(source, path)
            self.vault.check(source, data, expected)
            if self.vault.read(target, "new_path") is not None:
                raise Conflict(f"Conflict: {target.vault_path} exists already; a move never overwrites a note",
                               field="new_path")
            readable = self.links.readable(p)
            before = self._resolved(source, readable, target.vault_path)
            try:
                change = self.vault.move(Write(p, tool, "move"), source, target, data)
            except FileExistsError as err:
                raise Conflict(f"Conflict: {target.vault_path} exists already; a move never overwrites a note",
                               field="new_path") from err
        unlinked = sorted(before - self._resolved(target, readable, target.vault_path))
        relinked: list[str] = []
        if update_links and unlinked:
            move = self.links.move((source.project, source.rel), (target.project, target.rel), readable)
            for where in sorted({where for where, _ in unlinked}):
                relinked += self._relink(p, where, move, tool)
            unlinked = sorted(before - self._resolved(target, readable, target.vault_path))
        summary = change.summary
        if relinked:
            notes = len({place.rpartition(":")[0] for place in relinked})
            summary += (f"; {len(relinked)} line{'' if len(relinked) == 1 else 's'} of {notes} "
                        f"note{'' if notes == 1 else 's'} rewritten to keep {'its' if notes == 1 else 'their'} "
                        "links to or from it: see relinked")
        if unlinked:
            summary += (f"; {len(unlinked)} link{'' if len(unlinked) == 1 else 's'} to or from it no longer resolve "
                        "(a markdown link or a mention names the old place, or a relative link the old folder): "
                        "see unlinked")
        return replace(change, summary=summary, relinked=tuple(relinked[:UNLINKED_SHOWN]),
                       unlinked=tuple(f"{where}:{line}" for where, line in unlinked[:UNLINKED_SHOWN]))

    def _relink(self, p: Principal, where: str, move: Move, tool: str) -> list[str]:
        """Rewrite the links of the note at vault path ``where`` that the move broke, when p may write it (a
        note p may not write keeps its links: they stay in the answer's unlinked); the places rewritten."""
        try:
            note = self.writable(p, where)
        except (NotFound, Forbidden, InvalidArgument):
            return []
        if not is_markdown(note.vault_path):
            return []

        def attempt() -> list[int]:
            data = self.vault.read(note)
            if data is None:
                return []
            try:
                text, bom = decode_note(data, note.vault_path)
            except InvalidArgument:
                return []
            rewritten, lines = relinked(text, (note.project, note.rel), move)
            if lines:
                self.vault.put(Write(p, tool, "edit"), note, data, bom + rewritten.encode("utf-8"))
            return lines

        with self.vault.locks.holding(note.vault_path):
            try:
                lines = self.vault.settled(note, attempt)
            except (InvalidArgument, Conflict):  # grown past the size limit, or another program keeps writing it
                return []
        return [f"{note.vault_path}:{line}" for line in lines]

    def _resolved(self, note: NotePath, readable: list[str], moved_to: str) -> set[tuple[str, int]]:
        """Where the links that reach ``note`` (from other documents p reads) and the links it makes that resolve
        are written, as (vault path of the linking document, line): what a move should keep resolving. The
        note's own links are named by where it is moved to, before the move as after."""
        key = (note.project, note.rel)
        reaching = {(link.source, link.line) for link in self.links.backlinks(key, readable, MOVE_LINKS_READ)
                    if link.source != note.vault_path}
        made = {(moved_to, link.line) for link in self.links.outgoing(key, readable, MOVE_LINKS_READ)
                if link.path is not None}
        return reaching | made

    def delete_note(self, p: Principal, path: str, *, tool: str, expected_version: str | None = None) -> NoteChange:
        """Delete the note into the trash (``.notewell/trash/``); the journal's undo brings it back."""
        target = self.writable(p, path)
        expected = check_version(expected_version)

        def attempt() -> NoteChange:
            before = self._existing(target, path)
            self.vault.check(target, before, expected)
            return self.vault.remove(Write(p, tool, "delete"), target, before)

        with self.vault.locks.holding(target.vault_path):
            return self.vault.settled(target, attempt)

    def _existing(self, target: NotePath, path: str) -> bytes:
        data = self.vault.read(target)
        if data is None:
            raise NotFound(f"Not found: {path}")
        return data
