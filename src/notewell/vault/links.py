"""The symlink policy: which links the scan follows, and why it passes over the others.

A link inside a project is followed only when its target is a regular file of an indexed type that
resolves inside the same project's folder, and is neither hidden (no component of its path starts with
"."; this covers the index folder .notewell and everything kept in it), nor excluded by an ignore file,
nor inside a folder the scan passes over. A home (~handle) is a project of its own, so a link never
reaches another person's home. Everything else is skipped with the reason, which `notewell index`
prints. Symlinked folders are never entered.

The decision is made at scan time, on the target's real path; the indexer then reads that real path
through descriptors verified component by component (verified_read.py), so a link or folder swapped in
after the decision cannot lead the read anywhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BROKEN = "broken symlink"
OUTSIDE_VAULT = "symlink leads outside the vault"
OUTSIDE_PROJECT = "symlink leads outside its project"
HIDDEN = "symlink leads to a hidden file or folder"
IGNORED = "symlink leads to an ignored or excluded file"
OTHER_TYPE = "symlink leads to a file of a type that is not indexed"


@dataclass(frozen=True)
class Followed:
    """A link the policy follows: the vault-relative real path of its target, and its size and mtime."""

    source: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class NotFollowed:
    reason: str


class Folder:
    """A link to a folder: passed over without a record, as symlinked folders are never entered."""


def judge_link(
    root: Path,
    project: str,
    link: Path,
    indexable: Callable[[str], bool],
    excluded: Callable[[str], bool],
) -> Followed | NotFollowed | Folder:
    """Apply the policy to the symlink ``link`` found in ``project`` of the vault at ``root`` (resolved).

    ``indexable(name)`` says whether a file of that name is of an indexed type; ``excluded(rel)`` whether
    the scan passes over the vault-relative path ``rel`` (ignore files, the index folder).
    """
    try:
        target = link.resolve(strict=True)
        info = target.stat()
    except (OSError, RuntimeError):  # missing target, or a loop
        return NotFollowed(BROKEN)
    try:
        rel = target.relative_to(root)
    except ValueError:
        return NotFollowed(OUTSIDE_VAULT)
    parts = rel.parts
    if not parts or parts[0] != project:
        return NotFollowed(OUTSIDE_PROJECT)
    if any(part.startswith(".") for part in parts):
        return NotFollowed(HIDDEN)
    if target.is_dir():
        return Folder()
    source = "/".join(parts)
    if excluded(source):
        return NotFollowed(IGNORED)
    if not indexable(parts[-1]) or not target.is_file():
        return NotFollowed(OTHER_TYPE)
    return Followed(source, info.st_size, info.st_mtime_ns)


def leading_to(symlinks: dict[str, str], target: str) -> list[str]:
    """The links of ``symlinks`` (each vault path -> what it names, one hop, as a scan records them) that lead
    to ``target``: naming it, or naming a link that leads to it; sorted."""
    found: set[str] = set()
    frontier = {target}
    while frontier:
        frontier = {link for link, named in symlinks.items() if named in frontier and link not in found}
        found |= frontier
    return sorted(found)
