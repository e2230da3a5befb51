"""Where an agent may write: a note's path checked before anything is read or written.

A path is vault-relative and starts with its project (``handbook/decisions.md``, as searchKnowledge returns
it). It may not hold a ``.`` or ``..`` part (refused, never folded away: ``beta/../alpha/x.md`` would land in
alpha), name a hidden entry (any part starting with ``.``, so never the index folder ``.notewell/``), be passed
over by an ignore file, or end in a type the vault does not index. What lies on
disk is checked when the file is opened (note_files.py: no symlink is followed on the way).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from notewell.errors import InvalidArgument
from notewell.paths import normalize_path
from notewell.services.memory_checks import unprintable
from notewell.vault.scan import IGNORE_FILES, ROOT_PROJECT, is_ignored

NAME_MAX_BYTES = 255  # a file or folder name, as Linux allows


@dataclass(frozen=True)
class NotePath:
    project: str
    rel: str  # project-relative

    @property
    def vault_path(self) -> str:
        return f"{self.project}/{self.rel}"


def note_path(path: str, file_types: tuple[str, ...], field: str = "path") -> NotePath:
    """The path checked as written (it reads nothing), or InvalidArgument naming ``field`` and what to write
    instead; ``check_not_ignored`` asks the vault's ignore files once the caller may write there."""
    if path != path.strip():  # normalize_path would drop it, and the write would land on another name
        raise InvalidArgument(field, f"{path!r} starts or ends with a space; write the path without it")
    norm = normalize_path(path, field)
    refuse_dot_segments(path, field)
    project, _, rel = norm.partition("/")
    if not rel:
        raise InvalidArgument(field, f"{path!r} names no file inside a project; write <project>/<file>, such as "
                                     "handbook/decisions.md")
    if project == ROOT_PROJECT:
        raise InvalidArgument(field, f"the files at the vault root ({ROOT_PROJECT}) are not written by agents; "
                                     "write inside a project folder")
    parts = norm.split("/")
    for part in parts:
        if part.startswith("."):
            raise InvalidArgument(field, f"{path!r} names a hidden entry ({part}); hidden files and folders, the "
                                         "index folder among them, are never written")
        if len(part.encode("utf-8", errors="surrogatepass")) > NAME_MAX_BYTES:
            raise InvalidArgument(field, f"a name in {path!r} is longer than {NAME_MAX_BYTES} bytes; shorten it")
        if any(ord(c) < 32 for c in part):
            raise InvalidArgument(field, f"{path!r} holds a control character; use printable names")
        if part != part.strip():
            raise InvalidArgument(field, f"a name in {path!r} starts or ends with a space ({part!r}); names do not")
    if parts[-1] in IGNORE_FILES:
        raise InvalidArgument(field, f"{parts[-1]} is an ignore file, not a note")
    ext = os.path.splitext(parts[-1])[1].lower()
    if ext not in file_types:
        raise InvalidArgument(field, f"{path!r} is not of a type the vault indexes; end it with one of "
                                     f"{', '.join(file_types)}")
    return NotePath(project, rel)


def refuse_unprintable_name(target: NotePath, field: str = "path") -> None:
    """A name a write gives (a new note, a move's destination) holds no control character (C1 and DEL too) and
    no bidirectional override or isolate, as a memory's path may not: shown in a listing, invoice\u202Edm.exe.md
    reads invoiceexe.md. A note that already has such a name (put there by hand) can still be read, edited,
    moved away from it and deleted."""
    found = unprintable(target.rel)
    if found is not None:
        raise InvalidArgument(field, f"{target.vault_path!r} holds U+{ord(found):04X}, a control character or a "
                                     "bidirectional override; a note's new name may not: choose another")


def refuse_dot_segments(path: str, field: str = "path") -> None:
    """InvalidArgument naming ``field`` when the path holds a "." or ".." segment: folded away, "beta/../alpha/x.md"
    would name a note of another project than the one it starts with, so a note's path is taken only as written."""
    for part in path.strip().strip("/").split("/"):
        if part in (".", ".."):
            raise InvalidArgument(field, f"{path!r} holds a {part!r} segment; write the note's path without . or .., "
                                         "project first, such as handbook/decisions.md")


def check_not_ignored(vault: Path, target: NotePath, field: str = "path") -> None:
    if is_ignored(vault, target.vault_path):
        raise InvalidArgument(field, f"{target.vault_path!r} is excluded by an ignore file (.gitignore or "
                                     ".notewellignore), so it would never be indexed; choose another path")
