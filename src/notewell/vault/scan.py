"""Walk a vault and list the files to index, with the reason for each one left out.

Each top-level folder is a project whose id is the folder's name; the files at the vault root form the
project ``_root`` (ROOT_PROJECT). A file of one of the configured types is a document, and so is a file
without an extension whose first 8 KB are UTF-8 text with no NUL byte. Files that are too large, names
that are not UTF-8, and symlinks the link policy does not follow (links.py) are recorded as skipped with
the reason (the store keeps these). Everything else left out (hidden entries, what a .gitignore or
.notewellignore excludes at any level, other types) is listed in ``ScanResult.left_out`` with its
reason, for the index report; the index folder is passed over.
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from notewell.config import CONFIG_FILE_NAME
from notewell.vault.links import OTHER_TYPE, Folder, Followed, judge_link

IGNORE_FILES = (".gitignore", ".notewellignore")
ROOT_PROJECT = "_root"  # the project of the files at the vault root; a top-level folder of this name is left out
TEXT_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class VaultFile:
    """A file to index, read at its own path. A build holds one per file until it ends (1.18 million at 10 GB),
    so it keeps only what it needs: a followed link is a ``LinkedFile``, whose target has a slot of its own."""

    project: str
    path: str  # relative to the project folder, "/"-separated
    size: int
    mtime_ns: int

    @property
    def source(self) -> str:
        """The vault-relative real path to read."""
        return disk_path(self.project, self.path)


@dataclass(frozen=True, slots=True)
class LinkedFile(VaultFile):
    """A followed symbolic link: indexed at its own path, read from its target."""

    target: str  # vault-relative

    @property
    def source(self) -> str:
        return self.target


@dataclass(frozen=True)
class SkippedFile:
    project: str
    path: str
    size: int
    reason: str


@dataclass(frozen=True)
class LeftOut:
    """A vault entry that is not a document: ``why`` is "type", "size", "ignored" or "unreadable"."""

    path: str  # vault-relative, "/"-separated; a folder (left out whole, not walked) ends with "/"
    why: str
    detail: str


@dataclass
class ScanResult:
    files: list[VaultFile]
    skipped: list[SkippedFile]
    projects: list[str]  # every project folder walked, empty ones too, and ROOT_PROJECT when it has files; sorted
    root: Path  # the vault, resolved: sources are relative to it
    left_out: list[LeftOut] = field(default_factory=list)
    # every symlink met where a file was looked for, followed or not -> what it names (vault-relative; "" outside)
    symlinks: dict[str, str] = field(default_factory=dict)


class Subtrees:
    """The part of the vault a scan covers: the whole of it, or some files and folders (vault-relative).

    Both questions cost the depth of the path asked about, not the number of paths held: a sync asks
    them for every stored document.
    """

    def __init__(self, paths: Collection[str] | None = None) -> None:
        self._paths: frozenset[str] | None = None if paths is None or "" in paths else frozenset(paths)
        self._on_the_way = frozenset(p[:i] for p in self._paths or () for i, c in enumerate(p) if c == "/")

    @property
    def everything(self) -> bool:
        return self._paths is None

    def covers(self, rel: str) -> bool:
        """Is ``rel`` one of the paths or inside one?"""
        if self._paths is None or rel in self._paths:
            return True
        cut = rel.find("/")
        while cut >= 0:
            if rel[:cut] in self._paths:
                return True
            cut = rel.find("/", cut + 1)
        return False

    def leads_to(self, folder: str) -> bool:
        """Must ``folder`` be walked: is it covered, or on the way to a covered path?"""
        return folder in self._on_the_way or self.covers(folder)

    def store_keys(self) -> list[tuple[str, str]] | None:
        """(project, path) pairs whose documents at or below them are the covered ones (None: every one).

        A top-level name may be a project folder or a file at the root, so it stands for both."""
        if self._paths is None:
            return None
        keys: list[tuple[str, str]] = []
        for path in sorted(self._paths):
            project, _, rest = path.partition("/")
            keys += [(project, rest)] if rest else [(project, ""), (ROOT_PROJECT, project)]
        return keys


EVERYTHING = Subtrees()


def disk_path(project: str, path: str) -> str:
    """The vault-relative path of a project's file."""
    return path if project == ROOT_PROJECT else f"{project}/{path}"


def left_out_reason(reason: str) -> str:
    """The report's category ("type", "size", "unreadable") of a skipped file's recorded reason."""
    if reason.startswith("larger than"):
        return "size"
    return "type" if reason in ("binary file", OTHER_TYPE) else "unreadable"


def may_read_later(reason: str) -> bool:
    """Whether a skipped file's recorded reason is a read that failed (the file being written, or swapped while
    read), worth trying again; a symlink the policy does not follow or a name that is not UTF-8 stays as it is
    until the file itself changes."""
    return reason.startswith("unreadable")


def is_text_file(path: Path) -> bool:
    """UTF-8 with no NUL byte in the first 8 KB (a character cut at the 8 KB mark still counts)."""
    try:
        with path.open("rb") as f:
            head = f.read(TEXT_SNIFF_BYTES)
    except OSError:
        return False
    if b"\x00" in head:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return True


class _Ignores:
    """The stack of ignore specs in force while walking down one branch of the tree."""

    def __init__(self) -> None:
        self._specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []

    def load(self, folder: Path, rel: str, names: set[str] | None = None) -> int:
        """Push the ignore files of ``folder``; ``names``, when given, are the folder's entries (saves a stat)."""
        added = 0
        for name in IGNORE_FILES:
            if names is not None and name not in names:
                continue
            f = folder / name
            if f.is_file():
                try:
                    lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    continue
                self._specs.append((rel, pathspec.GitIgnoreSpec.from_lines(lines)))
                added += 1
        return added

    def pop(self, count: int) -> None:
        for _ in range(count):
            self._specs.pop()

    def excluded(self, rel: str, is_dir: bool) -> bool:
        """As git decides: the deepest ignore file with a pattern for ``rel`` wins (so "!name" re-includes)."""
        for base, spec in reversed(self._specs):
            sub = rel[len(base) + 1:] if base else rel
            decision = spec.check_file(sub + "/" if is_dir else sub).include
            if decision is not None:
                return decision
        return False


def _path_excluded(root: Path, rel: str, excluded: set[str]) -> bool:
    """Would a walk from ``root`` pass over the file ``rel``: an ignore file, or a folder it does not enter?"""
    ignores = _Ignores()
    ignores.load(root, "")
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        folder_rel = "/".join(parts[:depth])
        folder = root / folder_rel
        if str(folder) in excluded or ignores.excluded(folder_rel, True):
            return True
        ignores.load(folder, folder_rel)
    return ignores.excluded(rel, False)


def is_ignored(root: Path, rel: str) -> bool:
    """Would an index of the vault ``root`` pass over the file ``rel`` (vault-relative) because an ignore
    file excludes it or a folder on its way? (Hidden names are the caller's to refuse.)"""
    return _path_excluded(root, rel, set())


def _valid_name(name: str) -> bool:
    """Can the name be stored and shown? A name of bytes that are not UTF-8 comes with surrogates."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def scan_vault(
    vault: Path, file_types: tuple[str, ...], max_file_bytes: int, exclude: tuple[Path, ...] = (),
    only: Subtrees = EVERYTHING,
) -> ScanResult:
    """List the indexable files of ``vault``; ``exclude`` names folders (the index's own) to pass over.

    With ``only``, files and left-out entries outside it are not listed (the projects always are, and the
    files at the root are always looked at, as they decide whether ROOT_PROJECT is a project).
    """
    root = vault.resolve()
    excluded = {str(p.resolve()) for p in exclude}
    result = ScanResult(files=[], skipped=[], projects=[], root=root)
    ignores = _Ignores()
    pushed = ignores.load(root, "")
    types = {t.lower() for t in file_types}
    root_files: list[str] = []
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        is_dir = entry.is_dir(follow_symlinks=False)
        if entry.path in excluded or not _valid_name(entry.name) or entry.name in IGNORE_FILES:
            continue
        shown = entry.name + ("/" if is_dir else "")
        if entry.name.startswith("."):
            _leave_out(result, only, LeftOut(shown, "ignored", "hidden"))
        elif ignores.excluded(entry.name, is_dir):
            _leave_out(result, only, LeftOut(shown, "ignored", "an ignore file"))
        elif is_dir and entry.name == ROOT_PROJECT:
            _leave_out(result, only, LeftOut(shown, "ignored", "this name is the project of the files at the "
                                                               "vault root"))
        elif is_dir:
            result.projects.append(entry.name)
            if only.leads_to(entry.name):
                _walk_project(root, Path(entry.path), entry.name, types, max_file_bytes, excluded, ignores, result,
                              only)
        elif entry.name == CONFIG_FILE_NAME:  # Notewell's settings at the vault root: never a document
            _leave_out(result, only, LeftOut(shown, "ignored", "Notewell's settings"))
        elif entry.is_symlink() or entry.is_file(follow_symlinks=False):
            root_files.append(entry.name)
    _add_root_files(root, root_files, types, max_file_bytes, excluded, result, only)
    ignores.pop(pushed)
    result.projects.sort()
    return result


def _leave_out(result: ScanResult, only: Subtrees, item: LeftOut) -> None:
    if only.covers(item.path.rstrip("/")):
        result.left_out.append(item)


def _add_root_files(root: Path, names: list[str], types: set[str], max_bytes: int, excluded: set[str],
                    result: ScanResult, only: Subtrees) -> None:
    """The files at the vault root, as ROOT_PROJECT's; it is a project when one of them is a document."""
    found = ScanResult(files=[], skipped=[], projects=[], root=root)
    for name in names:
        _add_file(root, ROOT_PROJECT, name, types, max_bytes, excluded, found)
    if found.files:
        result.projects.append(ROOT_PROJECT)
    result.files.extend(f for f in found.files if only.covers(f.path))
    result.symlinks.update((link, names) for link, names in found.symlinks.items() if only.covers(link))
    result.skipped.extend(f for f in found.skipped if only.covers(f.path))
    result.left_out.extend(f for f in found.left_out if only.covers(f.path))


def _walk_project(
    root: Path,
    folder: Path,
    project: str,
    types: set[str],
    max_bytes: int,
    excluded: set[str],
    ignores: _Ignores,
    result: ScanResult,
    only: Subtrees,
) -> None:
    for item in _walk(folder, project, ignores, excluded, result.left_out, only):
        _add_file(root, project, item[len(project) + 1:], types, max_bytes, excluded, result)


def _add_file(root: Path, project: str, rel_in_project: str, types: set[str], max_bytes: int, excluded: set[str],
              result: ScanResult) -> None:
    """Record the file at ``rel_in_project`` of ``project`` as a document, skipped or left out."""
    item = disk_path(project, rel_in_project)
    if not _valid_name(rel_in_project):
        printable = os.fsencode(rel_in_project).decode("utf-8", "replace")
        result.skipped.append(SkippedFile(project, printable, 0, "file name is not valid UTF-8"))
        return
    if not _indexable(item, types):
        result.left_out.append(LeftOut(item, "type", f"{os.path.splitext(item)[1]} is not a listed type"))
        return
    source, size, mtime_ns = item, 0, 0
    try:
        lst = os.lstat(os.path.join(root, item))
        if stat.S_ISLNK(lst.st_mode):
            result.symlinks[item] = _named_by_link(root, item)
            verdict = judge_link(root, project, root / item, lambda name: _indexable(name, types),
                                 lambda rel: _path_excluded(root, rel, excluded))
            if isinstance(verdict, Folder):
                return
            if not isinstance(verdict, Followed):
                result.skipped.append(SkippedFile(project, rel_in_project, 0, verdict.reason))
                return
            source, size, mtime_ns = verdict.source, verdict.size, verdict.mtime_ns
        else:
            size, mtime_ns = lst.st_size, lst.st_mtime_ns
    except OSError as exc:
        result.skipped.append(SkippedFile(project, rel_in_project, 0, f"unreadable: {exc.strerror}"))
        return
    if size > max_bytes:
        result.skipped.append(SkippedFile(project, rel_in_project, size, f"larger than the {max_bytes} byte limit"))
        return
    if not os.path.splitext(source)[1] and not is_text_file(root / source):
        result.left_out.append(LeftOut(item, "type", "no extension and not UTF-8 text"))
        return
    result.files.append(VaultFile(project, rel_in_project, size, mtime_ns) if source == item
                        else LinkedFile(project, rel_in_project, size, mtime_ns, source))


def symlinks_below(root: Path, paths: Collection[str]) -> dict[str, str]:
    """Every symbolic link at or below ``paths`` (vault-relative) of the vault at ``root`` (resolved) -> what it
    names, one hop, as ``ScanResult.symlinks`` has it. Hidden entries and what an ignore file excludes are passed
    over and symlinked folders never entered, as the scan does; no file is opened or stat'ed but the links and the
    ignore files (a folder's entries say their type), so a project of 10,000 notes costs a listing of its folders."""
    found: dict[str, str] = {}
    for rel in paths:
        ignores = _ignores_on_the_way(root, rel)
        if ignores is None:
            continue
        if os.path.islink(root / rel):
            if not ignores.excluded(rel, False):
                found[rel] = _named_by_link(root, rel)
        elif not ignores.excluded(rel, True):
            _symlinks_in(root, rel, ignores, found)
    return found


def _ignores_on_the_way(root: Path, rel: str) -> _Ignores | None:
    """The ignore files in force at ``rel`` as a walk from ``root`` reaches it; None when the walk does not: a
    hidden name or a folder an ignore file excludes on the way."""
    ignores = _Ignores()
    ignores.load(root, "")
    parts = rel.split("/")
    if any(part.startswith(".") for part in parts):
        return None
    for depth in range(1, len(parts)):
        folder = "/".join(parts[:depth])
        if ignores.excluded(folder, True):
            return None
        ignores.load(root / folder, folder)
    return ignores


class _Descent:
    """The folders a walk is in, deepest last, each with the entries (by name) it has yet to give and the ignore
    files it pushed: kept on a list, not the call stack, where a folder 1,000 deep (a path of 2,000 characters,
    which a writer may make) passed Python's recursion limit and no document of the vault was indexed. Iterating
    gives (the folder's vault path, an entry); ``enter`` a folder to have its entries given next."""

    def __init__(self, ignores: _Ignores) -> None:
        self._ignores = ignores
        self._levels: list[tuple[str, Iterator[os.DirEntry[str]], int]] = []

    def enter(self, path: Path, rel: str) -> None:
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError:  # gone, not a folder, or not ours to read: nothing in it
            return
        self._levels.append((rel, iter(entries), self._ignores.load(path, rel, {e.name for e in entries})))

    def __iter__(self) -> Iterator[tuple[str, os.DirEntry[str]]]:
        while self._levels:
            rel, entries, pushed = self._levels[-1]
            entry = next(entries, None)
            if entry is None:
                self._levels.pop()
                self._ignores.pop(pushed)
                continue
            yield rel, entry


def _symlinks_in(root: Path, folder: str, ignores: _Ignores, found: dict[str, str]) -> None:
    """The symlinks below ``folder`` into ``found``."""
    descent = _Descent(ignores)
    descent.enter(root / folder, folder)
    for rel, entry in descent:
        child = f"{rel}/{entry.name}"
        if entry.name.startswith(".") or not _valid_name(entry.name):
            continue
        if entry.is_symlink():
            if not ignores.excluded(child, False):
                found[child] = _named_by_link(root, child)
        elif entry.is_dir(follow_symlinks=False) and not ignores.excluded(child, True):
            descent.enter(root / child, child)


def _named_by_link(root: Path, link: str) -> str:
    """What the symlink at ``link`` names itself, one hop (vault-relative; "" when outside the vault or
    unreadable): a chain's links are known hop by hop, so a change to one on the way is a change to the first."""
    try:
        written = os.readlink(root / link)
    except OSError:
        return ""
    joined = os.path.normpath(written if os.path.isabs(written) else os.path.join(root, os.path.dirname(link), written))
    rel = os.path.relpath(joined, root)
    return "" if rel == "." or rel.startswith("..") else rel.replace(os.sep, "/")


def _indexable(name: str, types: set[str]) -> bool:
    """Of a listed type, or without an extension (then a document if its start is text: is_text_file)."""
    ext = os.path.splitext(name)[1].lower()
    return not ext or ext in types


def _walk(folder: Path, rel: str, ignores: _Ignores, excluded: set[str], left_out: list[LeftOut],
          only: Subtrees) -> Iterator[str]:
    """Yield vault-relative file paths below ``folder`` (within ``only``) in sorted order, honouring ignore
    files; hidden and ignored entries go to ``left_out``.

    ``folder`` lies below the resolved vault and symlinked folders are never entered, so an entry's path
    is already its real path: it is compared with ``excluded`` as it is. The folders being walked are kept
    on a list (``_Descent``).
    """
    descent = _Descent(ignores)
    descent.enter(folder, rel)
    for at, entry in descent:
        child = f"{at}/{entry.name}"
        if entry.path in excluded or entry.name in IGNORE_FILES or not only.leads_to(child):
            continue
        if not _valid_name(entry.name):  # reported by the caller; ignore patterns cannot be matched against it
            if not entry.name.startswith("."):
                yield child
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if entry.name.startswith(".") or ignores.excluded(child, is_dir):
            if only.covers(child):
                why = "hidden" if entry.name.startswith(".") else "an ignore file"
                left_out.append(LeftOut(child + ("/" if is_dir else ""), "ignored", why))
        elif is_dir:
            descent.enter(Path(entry.path), child)
        elif (entry.is_symlink() or entry.is_file(follow_symlinks=False)) and only.covers(child):
            yield child
