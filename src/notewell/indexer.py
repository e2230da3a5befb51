"""Sync the store with the vault: new, changed, deleted and renamed files.

A file is unchanged when its size and mtime match the store, unless the watcher saw it written; otherwise
its sha256 decides (a touched but identical file only gets its mtime updated). A file modified in the last
seconds is hashed again at the next sync (see RACY_WINDOW_NS). A file gone from one place whose exact content
appears at a new place is a rename: its row moves, and its text and index entries stay as they are.
Brains are derived from the brain.md files and rebuilt whenever anything changed. Links are parsed from
each markdown document written (or moved: a relative link reads differently from a new folder) and
resolved once the sync's documents are in place; the stored links a document's arrival, departure or
move may resolve differently (the ones naming its file name) are resolved again (``_Writing.relink``).
Meeting notes' action items follow each document written, moved or removed, in the same transaction
(vault/meeting_sync.py); a full sync reads again the notes holding live items. The temporary files of note
writes killed before their rename, which a scan passes over as hidden, are removed (scratch_files.py) and logged.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import posixpath
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property

from notewell.config import INDEX_DIR_NAME, TRASH_DIR_NAME, Settings
from notewell.log_lines import line
from notewell.paths import composed
from notewell.records.documents import BrainRecord, DocKey, DocState, DocumentInput, SkippedRecord, brain_id
from notewell.records.links import LinkInput
from notewell.scratch_files import note_temps_below, remove_stale_note_temps
from notewell.store.base import DocumentWriter, Store
from notewell.vault.link_resolution import Resolver
from notewell.vault.meeting_sync import MeetingItems
from notewell.vault.note_links import ParsedLink, name_key, parse_links
from notewell.vault.parse import BRAIN_FILE, ParsedDocument, parse_brain, parse_document
from notewell.vault.scan import (
    EVERYTHING,
    LeftOut,
    LinkedFile,
    ScanResult,
    Subtrees,
    VaultFile,
    disk_path,
    left_out_reason,
    scan_vault,
)
from notewell.vault.verified_read import FileTooLarge, VerifiedReader

BINARY_SNIFF_BYTES = 8192
# A file modified this recently may be modified again within the same tick of the file system's clock,
# keeping its size and mtime (git's "racy clean" case): its stored mtime is left one short of the real
# one, so the next sync hashes it again, until it is older than this.
RACY_WINDOW_NS = 2_000_000_000
Progress = Callable[[int, int], None]  # (bytes done, bytes to do): (0, total) first, then after each file
LEFT_OUT_REASONS = ("type", "size", "ignored", "unreadable")
_log = logging.getLogger("notewell.index")


@dataclass
class IndexReport:
    added: int = 0
    changed: int = 0
    removed: int = 0
    renamed: int = 0
    skipped: int = 0
    unchanged: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    passed_over: list[str] = field(default_factory=list)  # "project/path: reason" for each skipped file
    left_out: list[LeftOut] = field(default_factory=list)  # every vault entry that is not a document
    symlinks: dict[str, str] = field(default_factory=dict)  # every symlink the sync covered -> what it names
    not_read: int = 0  # the files to read when there were more than sync's read_most: nothing was done

    @property
    def did_work(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.renamed)

    def left_out_counts(self) -> dict[str, int]:
        """How many entries were left out, per reason (type, size, ignored, unreadable)."""
        counts = Counter(item.why for item in self.left_out)
        return {why: counts[why] for why in LEFT_OUT_REASONS}

    def summary(self, listed: bool = False) -> str:
        """The run in one line, and a line of what was left out (pointing to --verbose unless ``listed``)."""
        mb = self.bytes_read / 1_000_000
        if not self.did_work:
            line = (f"Up to date: nothing changed ({self.unchanged} documents, {self.skipped} skipped, "
                    f"{self.seconds:.2f} s)")
        else:
            line = (f"Indexed: {self.added} added, {self.changed} changed, {self.removed} removed, "
                    f"{self.renamed} renamed, {self.skipped} skipped, {mb:.1f} MB in {self.seconds:.2f} s")
        if not self.left_out:
            return line
        counts = ", ".join(f"{n} {why}" for why, n in self.left_out_counts().items() if n)
        return f"{line}\nLeft out: {counts}{'' if listed else ' (--verbose lists them)'}"


@dataclass(frozen=True)
class _Loaded:
    file: VaultFile
    data: bytes
    sha256: str
    changed_since_scan: bool  # its mtime when read was not the scan's: it changed after this sync's scan
    mtime_ns: int  # its mtime as the file read had it

    @cached_property
    def content(self) -> _Content | None:
        """The decoded and parsed text; None for a binary file."""
        decoded = _decode(self.data)
        return None if decoded is None else _Content(*decoded, parse_document(self.file.path, decoded[0]))


@dataclass(frozen=True)
class _Content:
    text: str
    note: str
    parsed: ParsedDocument


def _decode(data: bytes) -> tuple[str, str] | None:
    """(text, note), or None for a binary file."""
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8-sig"), ""
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), "not valid UTF-8: decoded with replacement characters"


HINT_AHEAD = 64


def _taken(files: list[VaultFile], hints: VerifiedReader) -> Iterator[VaultFile]:
    """``files`` in order, each removed from the list as it is taken, and the kernel asked to read the file
    ``HINT_AHEAD`` places further on into its page cache (VerifiedReader.hint). A vault larger than the page
    cache is read mostly from the disk, one file at a time, by the thread that indexes it: with the reads
    started ahead, a 10 GB build's reading took 597 to 623 s in three runs against 667 to 680 s in three."""
    files.reverse()  # taken from the end: each pop is O(1)
    for file in files[-HINT_AHEAD:][::-1]:
        hints.hint(file.source)
    while files:
        file = files.pop()
        if len(files) >= HINT_AHEAD:
            hints.hint(files[-HINT_AHEAD].source)
        yield file


def _load(reader: VerifiedReader, file: VaultFile) -> _Loaded | str:
    """The file's bytes, read through verified descriptors (a swap since the scan cannot escape); else why not."""
    try:
        data, mtime_ns = reader.read_stamped(file.source)
    except FileTooLarge:
        return f"larger than the {reader.max_bytes} byte limit"
    except OSError:
        return "unreadable (missing, or replaced by a symlink or a folder since the scan)"
    return _Loaded(file, data, hashlib.sha256(data).hexdigest(), mtime_ns != file.mtime_ns, mtime_ns)


def _brains(store: Store) -> list[BrainRecord]:
    parsed = []
    projects = set(store.documents.vault_projects())
    for project, path in store.documents.named(BRAIN_FILE):  # never every document's metadata (a million at 10 GB)
        if project in projects and (doc := store.documents.get(project, path)) is not None:
            parsed.append((project, parse_brain(posixpath.dirname(path), doc.text)))
    folders = {(p, b.folder) for p, b in parsed}
    records = []
    for project, brain in parsed:
        parent = _declared_parent(project, brain.declared_parent, folders)
        if parent is None or parent == brain_id(project, brain.folder):
            parent = _enclosing_brain(project, brain.folder, folders)
        records.append(BrainRecord(project, brain.folder, brain.title, brain.summary, parent, tuple(
            (d.path, d.title) for d in brain.documents)))
    return records


def _declared_parent(project: str, declared: str | None, folders: set[tuple[str, str]]) -> str | None:
    """The id of the brain brain.md names as its parent: a folder of its own project (project-relative, or as a
    brain id), else a brain of another project by its id (``handbook/brains/company``, or ``handbook`` for that
    project's root brain). Whether a reader may see it is asked when it is read (services/knowledge.py)."""
    if declared is None:
        return None
    for folder in (declared, declared.removeprefix(f"{project}/")):
        if (project, folder) in folders:
            return brain_id(project, folder)
    other, _, folder = declared.partition("/")
    return brain_id(other, folder) if (other, folder) in folders else None


def _enclosing_brain(project: str, folder: str, folders: set[tuple[str, str]]) -> str | None:
    current = folder
    while current:
        current = posixpath.dirname(current)
        if (project, current) in folders:
            return brain_id(project, current)
    return None


@dataclass
class _Plan:
    """What a sync will do, worked out from the scan and the stored state before anything is written."""

    state: dict[DocKey, DocState]  # what the store holds under the paths this sync covers
    on_disk: int  # how many files the scan found
    to_read: list[VaultFile]  # new files, and files whose size or mtime changed
    gone_by_sha: dict[str, list[DocKey]]  # stored documents no longer on disk, by content: rename sources
    brain_touched: bool  # a brain.md is among the files read or gone: the brains are rebuilt


def _plan(store: Store, scan: ScanResult, only: Subtrees, written: Collection[str]) -> _Plan:
    state = {key: st for key, st in store.documents.state(under=only.store_keys()).items()
             if only.covers(disk_path(*key))}
    # a first build reads every file: the scan's own list, not a copy of it (8 bytes a file, 1.18 million at 10 GB).
    # A file the watcher saw written is read whatever its size and mtime, and so is each link to it: an edit
    # that keeps its size and puts its mtime back (cp -p, touch -r, rsync -t) was written all the same.
    to_read = [f for f in scan.files if (st := state.get((f.project, f.path))) is None
               or (st.size, st.mtime_ns) != (f.size, f.mtime_ns)
               or (written and (disk_path(f.project, f.path) in written
                                or (isinstance(f, LinkedFile) and f.target in written)))] if state else scan.files
    gone: dict[DocKey, DocState] = {}
    if state:  # which stored documents are no longer on disk: paths by project, no (project, path) per file
        on_disk: dict[str, set[str]] = {}
        for f in scan.files:
            on_disk.setdefault(f.project, set()).add(f.path)
        gone = {key: st for key, st in state.items() if key[1] not in on_disk.get(key[0], ())}
    gone_by_sha: dict[str, list[DocKey]] = {}
    for key, st in sorted(gone.items()):
        gone_by_sha.setdefault(st.sha256, []).append(key)
    brain_touched = any(posixpath.basename(path) == BRAIN_FILE
                        for path in itertools.chain((f.path for f in to_read), (key[1] for key in gone)))
    return _Plan(state, len(scan.files), to_read, gone_by_sha, brain_touched)


@dataclass
class _Writing:
    """One sync's writes: each changed file applied in turn, what it did counted in ``report``."""

    store: Store
    writer: DocumentWriter
    plan: _Plan
    report: IndexReport
    skipped: list[SkippedRecord]
    racy_from: int  # a file modified at or after this (ns) may change again within its clock tick
    meetings: MeetingItems  # the action items of the meeting notes written, moved and removed
    everything: bool  # a sync of the whole vault, or a note writer's (reread): a file changed since the scan is indexed
    linked: dict[DocKey, list[ParsedLink]] = field(default_factory=dict)  # documents whose links are new
    names: set[str] = field(default_factory=set)  # file names (name_key) of documents added, removed or moved
    _gone_forms: dict[DocKey, DocKey] | None = None  # (project, composed path) -> the gone document: _renamed_in_form

    def stored_mtime(self, file: VaultFile) -> int:
        """The mtime to store: one short of the real one while an edit could still share its clock tick."""
        return file.mtime_ns - 1 if file.mtime_ns >= self.racy_from else file.mtime_ns

    def apply(self, file: VaultFile, loaded: _Loaded | str) -> None:
        """A file read from disk (or why it could not be) into the store: unchanged, skipped, renamed,
        added or changed."""
        key = (file.project, file.path)
        if isinstance(loaded, str):
            self.skipped.append(SkippedRecord(file.project, file.path, file.size, loaded))
            return
        if loaded.changed_since_scan and not self.everything:
            # written again after this sync's scan (a note the server writes while the watcher's sync of
            # its previous version runs): the change's own event brings a sync that reads it, and the
            # server's write indexes it itself; indexed here, it would be the watcher's doing, with the
            # scan's older mtime. A full sync (a build) has no such event to wait for: it indexes it.
            return
        self.report.bytes_read += len(loaded.data)
        old = self.plan.state.get(key)
        if old is not None and old.sha256 == loaded.sha256:
            if self.stored_mtime(file) != old.mtime_ns:
                self.writer.touch(key, self.stored_mtime(file))
            self.report.unchanged += 1
            return
        content = loaded.content
        if content is None:
            self.skipped.append(SkippedRecord(file.project, file.path, file.size, "binary file"))
            if old is not None:
                self.writer.delete(key)
                self.meetings.gone(key, "it is no longer a text file")
                self.names.add(name_key(file.path))
                self.report.removed += 1
            return
        if old is None and self.plan.gone_by_sha.get(loaded.sha256):
            self._rename(file, loaded, content)
            return
        self.writer.upsert(self._document(file, loaded, content))
        twin = self._renamed_in_form(key) if old is None else None
        if twin is not None:
            self.meetings.moved(twin, key, content.text)
        else:
            self.meetings.written(key, content.text)
        links = parse_links(file.project, file.path, content.text)
        if links or old is not None:  # a new document without links has none to replace
            self.linked[key] = links
        if old is None:
            self.names.add(name_key(file.path))
            self.report.added += 1
        else:
            self.report.changed += 1

    def _rename(self, file: VaultFile, loaded: _Loaded, content: _Content) -> None:
        """The same bytes gone from one path and found at another: the row moves, its text and index stay."""
        source = self.plan.gone_by_sha[loaded.sha256].pop(0)
        before = self.store.documents.meta(*source)
        self.writer.rename(source, (file.project, file.path), self.stored_mtime(file))
        self.meetings.moved(source, (file.project, file.path), content.text)
        self.linked[(file.project, file.path)] = parse_links(file.project, file.path, content.text)
        self.names.update((name_key(source[1]), name_key(file.path)))
        self.report.renamed += 1
        parsed = content.parsed
        if before is None or (before.title, before.summary) != (parsed.title, parsed.summary):
            # a title taken from the file name, or a new file type, reads differently at the new path
            self.writer.upsert(self._document(file, loaded, content))

    def _renamed_in_form(self, key: DocKey) -> DocKey | None:
        """The document gone this sync (unclaimed by a rename of the same bytes) whose path is the new ``key``'s in
        another Unicode form: the note renamed composed to decomposed, or back, and edited before the sync saw it.
        It is the same note, as a rename alone is (MeetingItems.moved): its action items follow it. Two files
        named alike in two forms that both stay on disk are two notes; neither is gone."""
        if key[1].isascii():
            return None
        if self._gone_forms is None:
            self._gone_forms = {(k[0], composed(k[1])): k for keys in self.plan.gone_by_sha.values() for k in keys}
        twin = self._gone_forms.get((key[0], composed(key[1])))
        if twin is None or twin == key or twin not in self.plan.gone_by_sha.get(self.plan.state[twin].sha256, ()):
            return None
        return twin

    def _document(self, file: VaultFile, loaded: _Loaded, content: _Content) -> DocumentInput:
        parsed = content.parsed
        return DocumentInput(file.project, file.path, parsed.title, parsed.summary, file.size, self.stored_mtime(file),
                             loaded.sha256, content.text, content.note)

    def remove_gone(self) -> None:
        for keys in self.plan.gone_by_sha.values():
            for key in keys:
                self.writer.delete(key)
                self.meetings.gone(key, "the note was deleted")
                self.names.add(name_key(key[1]))
                self.report.removed += 1

    def relink(self) -> None:
        """Store the new documents' links and resolve again the stored ones their names may change."""
        for key in self.writer.take_pending_links():  # stored before links (or meeting items) were kept: read once
            if key not in self.linked and (doc := self.store.documents.get(*key)) is not None:
                self.linked[key] = parse_links(*key, doc.text)
                self.meetings.written(key, doc.text)
        if not self.linked and not self.names:
            return
        documents = self.store.documents
        resolver = Resolver(lambda project: documents.ids(project) if project else {})
        changes = []  # read before the new links are written: those resolve below, and a first build reads none
        for stored in self.writer.links_named(sorted(self.names)) if self.names else []:
            if stored.source not in self.linked:
                target = resolver.resolve(stored.kind, stored.target, stored.source)
                if target != stored.target_id:
                    changes.append((stored.source_id, stored.seq, target))
        for key, links in self.linked.items():
            self.writer.set_links(key, [LinkInput(link.kind, link.line, link.target, link.anchor, link.label,
                                                  name_key(link.target), resolver.resolve(link.kind, link.target, key))
                                        for link in links])
        self.writer.retarget_links(changes)

    def keep_skipped(self, only: Subtrees) -> None:
        """The skipped files of the paths this sync covers replace the ones stored for them."""
        previous = self.store.documents.skipped()
        kept = [s for s in previous if not only.covers(disk_path(s.project, s.path))]
        if {(s.project, s.path, s.reason) for s in [*kept, *self.skipped]} != {(s.project, s.path, s.reason)
                                                                                 for s in previous}:
            self.writer.set_skipped([*kept, *self.skipped])


def _remove_killed_writes(settings: Settings, scan: ScanResult, only: Subtrees) -> None:
    """The temporary files that note writes killed before their rename left among the hidden entries the scan
    passed over, removed (scratch_files.remove_stale_note_temps), said in the log and left out of the report; with
    the whole vault, also those a delete killed as it copied the note into the trash left there, below the index
    folder the scan never enters."""
    hidden = [item.path for item in scan.left_out if item.detail == "hidden" and not item.path.endswith("/")]
    if only.everything:
        hidden += note_temps_below(settings.vault, f"{INDEX_DIR_NAME}/{TRASH_DIR_NAME}")
    removed = set(remove_stale_note_temps(settings.vault, hidden)) if hidden else set()
    if removed:
        _log.warning(line("index.removed", what="the temporary files of note writes killed before their rename",
                          files=len(removed), paths=",".join(sorted(removed))))
        scan.left_out = [item for item in scan.left_out if item.path not in removed]


def sync(
    settings: Settings, store: Store, progress: Progress | None = None, only: Subtrees = EVERYTHING,
    written: Collection[str] = frozenset(), committed: Callable[[], None] | None = None, *, reread: bool = False,
    read_most: int | None = None,
) -> IndexReport:
    """Bring the store in line with the vault, in one write transaction; returns what was done.

    ``only`` limits the work to some files and folders (what a watcher saw change): the rest of the
    store is left as it is, and brains are rebuilt only when a brain.md was among the changes. ``written``:
    the files (vault-relative) the watcher saw written, read whatever their size and mtime. ``committed``:
    called as soon as the transaction is committed (what a Ctrl-C from then on leaves is the whole sync).
    ``reread``: a file written again since the scan is indexed as read, with the size and mtime it had then (a
    note writer's own files, which no later event of theirs is sure to index), where a sync of some paths leaves
    it to the sync its own event brings. ``read_most``: when more files than this are to be read, nothing is
    written and the report's ``not_read`` counts them (what a move syncs before it looks for links: bounded).
    """
    started = time.perf_counter()
    racy_from = time.time_ns() - RACY_WINDOW_NS
    scan = scan_vault(settings.vault, settings.file_types, settings.max_file_bytes,
                      exclude=(settings.vault / INDEX_DIR_NAME,), only=only)
    _remove_killed_writes(settings, scan, only)
    report = IndexReport(symlinks=scan.symlinks)
    skipped = [SkippedRecord(s.project, s.path, s.size, s.reason) for s in scan.skipped]
    done = 0
    with store.documents.writer() as writer, VerifiedReader(scan.root, settings.max_file_bytes) as reader, \
            VerifiedReader(scan.root, settings.max_file_bytes) as hints:
        # planned under the writer's lock: a sync that ran meanwhile (a note writer indexing what it wrote
        # while the watcher's batch waited) is in the stored state, so its files are not indexed twice
        plan = _plan(store, scan, only, written)
        if read_most is not None and len(plan.to_read) > read_most:
            report.not_read = len(plan.to_read)
            return report
        total = sum(f.size for f in plan.to_read)
        writing = _Writing(store, writer, plan, report, skipped, racy_from, MeetingItems(store),
                           only.everything or reread)
        if progress and plan.to_read:
            progress(0, total)  # reading starts: how much there is to read
        report.unchanged += plan.on_disk - len(plan.to_read)
        # each file's record is let go once it is read, not at the end (a first build at 10 GB holds 1.18
        # million, about 220 MB, from the scan on); the kernel reads HINT_AHEAD files ahead (_taken)
        for file in _taken(plan.to_read, hints):
            loaded = _load(reader, file)
            done += file.size
            if progress:
                progress(done, total)
            if reread and isinstance(loaded, _Loaded) and loaded.changed_since_scan:  # stored as it was read
                file = replace(file, size=len(loaded.data), mtime_ns=loaded.mtime_ns)
            writing.apply(file, loaded)
        scan.files = []
        writing.remove_gone()
        writing.relink()
        if only.everything:
            writing.meetings.revisit()
        report.skipped = len(skipped)
        report.passed_over = [f"{disk_path(s.project, s.path)}: {s.reason}" for s in skipped]
        changed_any = report.did_work
        writing.keep_skipped(only)
        if scan.projects != store.documents.vault_projects():
            writer.set_projects(scan.projects)
            changed_any = True
        if changed_any and (only.everything or plan.brain_touched):
            writer.set_brains(_brains(store))
    if committed:
        committed()
    report.left_out = sorted(
        [*scan.left_out, *(LeftOut(disk_path(s.project, s.path), left_out_reason(s.reason), s.reason)
                           for s in skipped)], key=lambda item: item.path)
    report.seconds = time.perf_counter() - started
    return report
