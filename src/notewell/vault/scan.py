"""Walk a vault and list the files to index, with the reason for each one left out.

Each top-level folder is a project whose id is the folder's name. Hidden files and folders, the index
folder, and what a .gitignore or .notewellignore (at any level, gitignore syntax) excludes are skipped
without a record; files of other types are passed over; files that are too large, names that are not
UTF-8, and symlinks the link policy does not follow (links.py) are recorded as skipped with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from notewell.vault.links import Folder, Followed, judge_link

IGNORE_FILES = (".gitignore", ".notewellignore")


@dataclass(frozen=True)
class VaultFile:
    project: str
    path: str  # relative to the project folder, "/"-separated
    abspath: Path
    size: int
    mtime_ns: int
    source: str  # the vault-relative real path to read: the file itself, or a followed link's target


@dataclass(frozen=True)
class SkippedFile:
    project: str
    path: str
    size: int
    reason: str


@dataclass
class ScanResult:
    files: list[VaultFile]
    skipped: list[SkippedFile]
    projects: list[str]  # every project folder walked, empty ones too, sorted
    root: Path  # the vault, resolved: sources are relative to it


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


def _valid_name(name: str) -> bool:
    """Can the name be stored and shown? A name of bytes that are not UTF-8 comes with surrogates."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def scan_vault(
    vault: Path, file_types: tuple[str, ...], max_file_bytes: int, exclude: tuple[Path, ...] = ()
) -> ScanResult:
    """List the indexable files of ``vault``; ``exclude`` names folders (the index's own) to pass over."""
    root = vault.resolve()
    excluded = {str(p.resolve()) for p in exclude}
    result = ScanResult(files=[], skipped=[], projects=[], root=root)
    ignores = _Ignores()
    pushed = ignores.load(root, "")
    types = {t.lower() for t in file_types}
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False) or not _valid_name(entry.name):
            continue
        if entry.path in excluded or ignores.excluded(entry.name, True):
            continue
        result.projects.append(entry.name)
        _walk_project(root, Path(entry.path), entry.name, types, max_file_bytes, excluded, ignores, result)
    ignores.pop(pushed)
    return result


def _walk_project(
    root: Path,
    folder: Path,
    project: str,
    types: set[str],
    max_bytes: int,
    excluded: set[str],
    ignores: _Ignores,
    result: ScanResult,
) -> None:
    for item in _walk(folder, project, ignores, excluded):
        rel_in_project = item[len(project) + 1:]
        if not _valid_name(rel_in_project):
            printable = os.fsencode(rel_in_project).decode("utf-8", "replace")
            result.skipped.append(SkippedFile(project, printable, 0, "file name is not valid UTF-8"))
            continue
        if not _indexable(item, types):
            continue
        abspath = root / item
        source, size, mtime_ns = item, 0, 0
        try:
            if abspath.is_symlink():
                verdict = judge_link(root, project, abspath, lambda name: _indexable(name, types),
                                     lambda rel: _path_excluded(root, rel, excluded))
                if isinstance(verdict, Folder):
                    continue
                if not isinstance(verdict, Followed):
                    result.skipped.append(SkippedFile(project, rel_in_project, 0, verdict.reason))
                    continue
                source, size, mtime_ns = verdict.source, verdict.size, verdict.mtime_ns
            else:
                lst = abspath.lstat()
                size, mtime_ns = lst.st_size, lst.st_mtime_ns
        except OSError as exc:
            result.skipped.append(SkippedFile(project, rel_in_project, 0, f"unreadable: {exc.strerror}"))
            continue
        if size > max_bytes:
            result.skipped.append(SkippedFile(project, rel_in_project, size, f"larger than the {max_bytes} byte limit"))
            continue
        result.files.append(VaultFile(project, rel_in_project, abspath, size, mtime_ns, source))


def _indexable(name: str, types: set[str]) -> bool:
    return os.path.splitext(name)[1].lower() in types


def _walk(folder: Path, rel: str, ignores: _Ignores, excluded: set[str]) -> Iterator[str]:
    """Yield vault-relative file paths below ``folder`` in sorted order, honouring ignore files.

    ``folder`` lies below the resolved vault and symlinked folders are never entered, so an entry's path
    is already its real path: it is compared with ``excluded`` as it is.
    """
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        entries = []
    pushed = ignores.load(folder, rel, {e.name for e in entries})
    for entry in entries:
        if entry.name.startswith("."):
            continue
        child = f"{rel}/{entry.name}"
        if not _valid_name(entry.name):  # reported by the caller; ignore patterns cannot be matched against it
            yield child
            continue
        if entry.is_dir(follow_symlinks=False):
            if entry.path in excluded or ignores.excluded(child, True):
                continue
            yield from _walk(Path(entry.path), child, ignores, excluded)
        elif (entry.is_symlink() or entry.is_file(follow_symlinks=False)) and not ignores.excluded(child, False):
            yield child
    ignores.pop(pushed)
