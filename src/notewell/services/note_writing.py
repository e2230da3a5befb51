"""Writing notes into the vault: create, edit, move and delete, for agents and people alike (docs/writing.md).

Every method asks Authorization for ``note:write`` on the note's project first (the knowledge:write scope on
the token, then a write grant or the caller's own home: the role adds nothing); a project the caller may not see answers
``Not found: <path>`` exactly as a missing note does. Paths are checked by note_paths.py, the files written
by note_files.py (atomic, through the vault's descriptor), each write done under the note's lock by
note_vault.py, which journals it and indexes it before the method returns: a search right after a write
finds the new text.

``expected_version`` (the version readDoc and every write answer with; REST's If-Match may name several, or any:
note_vault.AnyOf) makes a write conditional: a note changed since is refused with its current version
(VersionConflict), never silently overwritten.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from notewell.access.policy import Action
from notewell.access.principal import Principal
from notewell.errors import Conflict, Forbidden, InvalidArgument, NotewellError, NotFound
from notewell.paths import spelled_as
from notewell.records.documents import DocKey
from notewell.services.line_endings import restored
from notewell.services.note_diff import version_of
from notewell.services.note_edits import Edit, apply_edit, check_arguments
from notewell.services.note_paths import NotePath, check_not_ignored, note_path, refuse_unprintable_name
from notewell.services.note_vault import AnyOf, NoteChange, NoteVault, Write, check_version, decode_note
from notewell.vault.link_rewrite import Move, Relinked, relinked
from notewell.vault.links import leading_to
from notewell.vault.note_links import MAX_LINKS_PER_DOCUMENT, is_markdown, name_key
from notewell.vault.scan import symlinks_below

if TYPE_CHECKING:
    from notewell.access.authorization import Authorization
    from notewell.services.links import LinkService

WRITE: Action = "note:write"
ADDING = ("append", "prepend", "insert_under_heading")  # the edit operations whose content is what they add
MOVE_NOTES_READ = 1000  # the notes linking to a moved note whose links a move compares (before it, and after)
UNLINKED_SHOWN = 50
"""The places a move's answer lists in each of its lists (relinked, unlinked, dangling), on every door; its summary
counts them all. The MCP door keeps the three within its 32 KB answer (mcp/tools/note_writing.py); REST and the
CLI send them whole."""
NOT_INDEXED_CHARS = 300  # the start of an indexing error a move's summary quotes; the log has it whole
_log = logging.getLogger("notewell.notes")


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
        target = self.vault.found(self.writable(p, path))
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
        checked = check_version(expected_version)
        if content == text and checked is not None and checked.holds(version):
            return None
        return self.write_note(p, path, ("\ufeff" if bom else "") + content, tool=tool, overwrite=True,
                               expected_version=expected_version)

    def write_note(self, p: Principal, path: str, content: str, *, tool: str, overwrite: bool = False,
                   expected_version: str | AnyOf | None = None) -> NoteChange:
        """Create the note (its folders too); over an existing note only with ``overwrite``, which writes over the
        note's file by either Unicode form of its name (a new name in another form than a note's is refused)."""
        target = self.writable(p, path)
        if overwrite:
            target = self.vault.found(target)
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
                  expected_version: str | AnyOf | None = None) -> NoteChange:
        """Apply one edit operation (note_edits.py) to the note as it is on disk now; an argument its operation
        does not take is refused."""
        check_arguments(edit)
        target = self.vault.found(self.writable(p, path))
        expected = check_version(expected_version)

        def attempt() -> NoteChange:
            before = self._existing(target, path)
            self.vault.check(target, before, expected)
            text, bom = decode_note(before, target.vault_path)
            after = bom + apply_edit(text, edit, markdown=is_markdown(target.vault_path)).encode("utf-8")
            if after == before and not edit.content and edit.operation in ADDING:
                raise InvalidArgument("content", f"is required for {edit.operation}: the text to add")
            if after == before:
                raise InvalidArgument("fields" if edit.operation == "set_front_matter" else "content",
                                      "the edit changes nothing: the note already reads so")
            return self.vault.put(Write(p, tool, "edit"), target, before, after)

        with self.vault.locks.holding(target.vault_path):
            return self.vault.settled(target, attempt)

    def move_note(self, p: Principal, path: str, new_path: str, *, tool: str,
                  expected_version: str | AnyOf | None = None, update_links: bool = True) -> NoteChange:
        """Move (or rename) the note within its project; never over another note. Every link the move breaks
        (to the note, of the note, or one the note now captures) is compared one by one in the documents p
        reads that link to it, before the move and after; with ``update_links`` it is rewritten to name what it
        named (vault/link_rewrite.py) in the notes p may write, each rewritten note a journal entry of its own,
        and what stays broken is named (``unlinked``)."""
        source = self.vault.found(self.writable(p, path))
        target = self.writable(p, new_path, "new_path")
        refuse_unprintable_name(target, "new_path")
        if target.project != source.project:
            raise InvalidArgument("new_path", f"must stay in the project {source.project}; to move a note to another "
                                              "project, write it there and delete it here")
        if target == source:
            raise InvalidArgument("new_path", "is the note's own path; name where it should go")
        expected = check_version(expected_version)

        def as_expected(data: bytes | None) -> bytes:
            if data is None:
                raise NotFound(f"Not found: {path}")
            self.vault.check(source, data, expected)
            return data
        return self.moved(p, source, target, Write(p, tool, "move"), as_expected, update_links=update_links)

    def moved(self, p: Principal, source: NotePath, target: NotePath, write: Write,
              check: Callable[[bytes | None], bytes], *, update_links: bool) -> NoteChange:
        """The move of move_note (and of the journal's undo of a move, which moves the note back): under both
        paths' locks, ``check`` is given the note's bytes (None: it is not there) and answers them, or refuses;
        then the move and its links' rewrite (move_note's docstring)."""
        tool = write.tool
        moved_from, moved_to = (source.project, source.rel), (target.project, target.rel)
        with self.vault.locks.holding(source.vault_path, target.vault_path):
            data = check(self.vault.read(source))
            if self.vault.read(target, "new_path") is not None:
                raise Conflict(f"Conflict: {target.vault_path} exists already; a move never overwrites a note",
                               field="new_path")
            readable = self.links.readable(p)
            unsynced = self._sync_changed(source.project) if source.project in readable else None
            names = sorted({name_key(posixpath.basename(source.rel)), name_key(posixpath.basename(target.rel))})
            linking = self.links.linking(moved_from, names, readable, MOVE_NOTES_READ + 1)
            crowded = self.links.crowded(readable, MOVE_NOTES_READ + 1)  # links past the index's bound: read whole
            try:
                change = self.vault.move(write, source, target, data)
            except FileExistsError as err:
                raise Conflict(f"Conflict: {target.vault_path} exists already; a move never overwrites a note",
                               field="new_path") from err
        captured = self.links.linking(moved_to, names, readable, MOVE_NOTES_READ + 1)
        move = self.links.move(moved_from, moved_to, readable, self._attachment(readable))
        outcome = _Relinking(cut=max(len(linking), len(captured), len(crowded)) > MOVE_NOTES_READ,
                             update_links=update_links, undoing=write.undoes is not None,
                             unread=None if source.project in readable else source.project, unsynced=unsynced)
        read = {*linking[:MOVE_NOTES_READ], *captured[:MOVE_NOTES_READ], *crowded[:MOVE_NOTES_READ], moved_to}
        for key in sorted(read - {moved_from}):
            self._relink(p, key, move, tool, update_links, target, outcome)
        outcome.dangling, outcome.followed = self._symlinks_to(readable, source, target)
        self._index(outcome)
        return outcome.answer(change)

    def _sync_changed(self, project: str) -> str | None:
        """Index what changed on disk in the moved note's project since its last sync, before the move looks for
        the notes linking to it in the index: a note a person just saved, which the watcher has not indexed yet,
        is found and rewritten too (its link stayed broken, named nowhere). Bounded: when more than
        MOVE_NOTES_READ files changed, none is read (the watcher indexes them); None, or why the links of the
        changed files were not looked for, which the summary says."""
        try:
            report = self.vault.indexing.sync_changed(project, MOVE_NOTES_READ)
        except (NotewellError, OSError) as err:  # the store refused: the move goes on with the index as it is
            _log.warning("the changes on disk of %s are not indexed before a move: %s", project, err)
            return "they could not be indexed first (the server's log says why)"
        if report.not_read:
            return (f"{report.not_read} files of the project changed on disk since its last sync, more than the "
                    f"{MOVE_NOTES_READ} a move indexes first")
        return None

    def _index(self, outcome: _Relinking) -> None:
        """Index every note the move rewrote, and the symlinks of the note's project that led to it or lead to it
        now (``followed``: a dangling one leaves the index, one the move brought back to life, a move back, is a
        document again), in one sync: one transaction, each note read as it is on disk then, so its row matches its
        file. Each note was written (fsynced, renamed whole) and journaled under its lock before, so a failure here
        leaves every note whole and journaled, and the answer says they are not indexed yet."""
        paths = [*outcome.written, *outcome.followed]
        if not paths:
            return
        try:
            self.vault.indexing.sync_paths(paths)
        except (NotewellError, OSError) as err:  # as a note's own write: the store refused, a file vanished
            _log.warning("a move's rewritten notes are not indexed yet: %s", err)
            said = f"{err}"
            outcome.not_indexed = said if len(said) <= NOT_INDEXED_CHARS else said[:NOT_INDEXED_CHARS] + "…"

    def _symlinks_to(self, readable: list[str], source: NotePath, target: NotePath) -> tuple[list[str], list[str]]:
        """(dangling, followed). Dangling: the symbolic links of the vault that led to the note before it moved, in
        the projects p reads (none when p reads not even the note's own: a token that may only write learns no name
        it could not read), found in a walk of the note's project (no hidden or ignored entry, no symlinked folder
        entered, as the index walks it) and among the links elsewhere the index passed over as leading out of their
        project; they are named, never re-pointed: Notewell writes no symlink (docs/links.md). Followed: the links
        of the note's project that led to it or lead to it now, whoever moved it: the index's documents (a link
        leading out of its project is none), which the move changed."""
        root = self.vault.settings.vault.resolve()
        own = symlinks_below(root, [source.project])
        elsewhere = symlinks_below(root, self.links.passed_over_symlinks(readable))
        named = {**(own if source.project in readable else {}), **elsewhere}
        followed = sorted({*leading_to(own, source.vault_path), *leading_to(own, target.vault_path)})
        return leading_to(named, source.vault_path), followed

    def _relink(self, p: Principal, key: DocKey, move: Move, tool: str, update_links: bool, moved: NotePath,
                outcome: _Relinking) -> None:
        """Mend the links of the document at ``key`` that the move broke, when p may write it and
        ``update_links``; otherwise, or when the write fails, name them in the outcome's unlinked."""
        where = f"{key[0]}/{key[1]}"
        if not is_markdown(key[1]):
            return
        try:
            note = note_path(where, self.vault.settings.file_types)
        except InvalidArgument:
            return
        if not (update_links and self._may_write(p, where)):
            outcome.broken(where, self._found(note, key, move), rewritable=False)
            return

        def attempt() -> Relinked | None:
            data = self.vault.read(note)
            if data is None:
                return None
            text, bom = decode_note(data, where)
            found = relinked(text, key, move)
            if not found.changed:
                return found
            if not (self.vault.settings.vault / moved.vault_path).is_file():
                raise Conflict(f"Conflict: {moved.vault_path} moved again meanwhile")  # its links are now another's
            written = self.vault.put(Write(p, tool, "edit"), note, data, bom + found.text.encode("utf-8"), index=False)
            outcome.written.append(note.vault_path)  # indexed with the others once all are written (_index)
            if key == move.moved_to:
                outcome.version = written.version
            return found

        with self.vault.locks.holding(*{note.vault_path, moved.vault_path}):  # an undo of the move waits
            try:
                found = self.vault.settled(note, attempt)
            except (NotewellError, OSError):  # over the size limit, moved again, a file that cannot be written
                outcome.broken(where, self._found(note, key, move), rewritable=False)
                return
        outcome.mended(where, found)

    def _found(self, note: NotePath, key: DocKey, move: Move) -> Relinked | None:
        """The note's links as the move left them and mended (vault/link_rewrite.py); None for a note gone or
        not UTF-8."""
        try:
            data = self.vault.read(note)
            if data is None:
                return None
            return relinked(decode_note(data, note.vault_path)[0], key, move)
        except (NotewellError, OSError):
            return None

    def _may_write(self, p: Principal, where: str) -> bool:
        try:
            self.writable(p, where)
        except (NotFound, Forbidden, InvalidArgument):
            return False
        return True

    def _attachment(self, readable: list[str]) -> Callable[[str], str | None]:
        """The spelling on disk of a vault path (as a markdown link names one: normalised, inside the vault) that
        names a file of a project p reads, not hidden, None for none: what a moved note's relative link to an image
        or a PDF keeps naming. Typed in the other Unicode form than the file's name, or in a mix of its names'
        forms, it names the file all the same, as a link to a note does (paths.spelled_as)."""
        root = self.vault.settings.vault

        def is_file(path: str) -> bool:
            parts = path.split("/")
            return parts[0] in readable and not any(part.startswith(".") for part in parts) \
                and (root / path).is_file()
        return lambda path: spelled_as(path, is_file, lambda folder: (root / folder).is_dir())

    def delete_note(self, p: Principal, path: str, *, tool: str,
                    expected_version: str | AnyOf | None = None) -> NoteChange:
        """Delete the note into the trash (``.notewell/trash/``); the journal's undo brings it back."""
        target = self.vault.found(self.writable(p, path))
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


@dataclass
class _Relinking:
    """What a move's link work did: the lines rewritten and the lines left broken (``project/path:line``), the
    moved note's version once its own links were rewritten, and whether the linking notes were cut."""

    cut: bool
    update_links: bool
    # an undo's move back: the note is where its links name it already, so moving it again would redo the move
    undoing: bool = False
    relinked: list[str] = field(default_factory=list)
    unlinked: list[str] = field(default_factory=list)
    version: str | None = None
    # the note's project, when p may not read it (a token with knowledge:write alone): p sees no link, so none was
    # looked for; the answer says so, never which links there are
    unread: str | None = None
    written: list[str] = field(default_factory=list)  # the notes rewritten, indexed together at the end
    dangling: list[str] = field(default_factory=list)  # the symlinks that led to the note, as p may see them
    followed: list[str] = field(default_factory=list)  # the symlinks of its project that led or lead to it: indexed
    not_indexed: str | None = None  # why indexing the rewritten notes failed
    unsynced: str | None = None  # why the files changed on disk were not indexed before the links were looked for

    def mended(self, where: str, found: Relinked | None) -> None:
        if found is not None:
            self.relinked += [f"{where}:{line}" for line in found.changed]
            self.unlinked += [f"{where}:{line}" for line in found.broken]

    def broken(self, where: str, found: Relinked | None, *, rewritable: bool) -> None:
        if found is not None:
            lines = found.broken if rewritable else sorted({*found.changed, *found.broken})
            self.unlinked += [f"{where}:{line}" for line in lines]

    def answer(self, change: NoteChange) -> NoteChange:
        """The move's change with its lists (each the first UNLINKED_SHOWN places found) and its summary, which
        counts every place and says how many a list names; the summary is bounded: sentences of its own, counts,
        a project id and NOT_INDEXED_CHARS of an error."""
        relinked, unlinked, dangling = _shown(self.relinked), _shown(self.unlinked), _shown(self.dangling)
        summary = change.summary
        if self.relinked:
            notes = len({place.rpartition(":")[0] for place in self.relinked})
            summary += (f"; {len(self.relinked)} line{'' if len(self.relinked) == 1 else 's'} of {notes} "
                        f"note{'' if notes == 1 else 's'} rewritten to keep {'its' if notes == 1 else 'their'} "
                        f"links naming what they named: {_see('relinked', self.relinked, relinked)}")
        if self.unlinked:
            why = "in a note you may not write, or no wording could mend it" if self.update_links else \
                "update_links was false"
            summary += (f"; {len(self.unlinked)} line{'' if len(self.unlinked) == 1 else 's'} with a link that "
                        f"no longer names what it named ({why}): {_see('unlinked', self.unlinked, unlinked)}")
        if self.unread is not None:
            summary += ("; links to and of the note were not looked for or rewritten: this token may not read the "
                        f"project {self.unread}, so it sees no link")
            if self.update_links and not self.undoing:  # an undo's advice would redo the move it took back
                summary += ("; to have them rewritten, undo this move and move the note again with a token that "
                            "also holds knowledge:read")
        if self.cut:
            summary += (f"; more than {MOVE_NOTES_READ} notes link to it (or hold more than {MAX_LINKS_PER_DOCUMENT} "
                        f"links): only the first {MOVE_NOTES_READ} of each by path were read")
        if self.unsynced is not None:
            summary += (f"; the notes changed on disk since the last sync were not looked in for links to it "
                        f"({self.unsynced}): a link of theirs to its old path is left as written")
        if self.dangling:
            count = len(self.dangling)
            led = ("a symbolic link led to it and now leads" if count == 1
                   else f"{count} symbolic links led to it and now lead")
            summary += f"; {led} nowhere: {_see('dangling', self.dangling, dangling)}"
        if self.not_indexed is not None:
            count = len(set(self.written))
            summary += (f"; the {count} rewritten note{'' if count == 1 else 's'} {'is' if count == 1 else 'are'} "
                        f"written and journaled but not indexed yet ({self.not_indexed}): the next sync of the vault "
                        "indexes them")
        return replace(change, summary=summary, version=self.version or change.version, relinked=relinked,
                       unlinked=unlinked, dangling=dangling)


def _shown(places: list[str]) -> tuple[str, ...]:
    """The leading places a list of a move's answer names: at most UNLINKED_SHOWN."""
    return tuple(places[:UNLINKED_SHOWN])


def _see(name: str, places: list[str], shown: tuple[str, ...]) -> str:
    """Where the summary sends the reader for these places: the list ``name``, and how many of them it names."""
    if len(shown) == len(places):
        return f"see {name}"
    return f"see {name}, which names the first {len(shown)}"
