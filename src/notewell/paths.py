"""Turning a vault-relative path ("projects/apollo") into a project and a project-relative prefix."""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Callable
from typing import Any, Protocol

from notewell.errors import InvalidArgument, not_unicode


class IndexedDocuments(Protocol):
    """What ``indexed_spelling`` asks of the store's documents (store.base.DocumentRepository has it)."""

    def meta(self, project: str, path: str) -> Any: ...

    def metas(self, project: str, prefix: str = "", *, limit: int | None = None, offset: int = 0,
              after: str | None = None) -> list[Any]: ...


PATH_MAX_CHARS = 4096  # Linux's PATH_MAX: no real vault path is longer

PROJECT_ID_MAX_CHARS = 255
"""A project's id is its top-level folder's name, so no id is longer than a folder's name can be on the file
systems a vault lives on: Linux's 255 bytes (at most 255 characters), APFS's 255 characters, NTFS's 255 UTF-16
units. Every door that takes a project id accepts this many characters and refuses more, naming the field."""


def normalize_path(path: str, field: str = "path") -> str:
    """A clean "/"-separated relative path; refuses anything that climbs out of the vault.

    A backslash is part of a name (a file may be called back\\slash.md), never a separator.
    """
    if len(path) > PATH_MAX_CHARS:
        raise InvalidArgument(field, f"is {len(path)} characters; keep it to {PATH_MAX_CHARS} or fewer")
    if (why := not_unicode(path)) is not None:  # a command line's bytes that are not UTF-8: no name holds them
        raise InvalidArgument(field, why)
    cleaned = path.strip().strip("/")
    if not cleaned:
        return ""
    norm = posixpath.normpath(cleaned)
    if norm == "." :
        return ""
    if norm == ".." or norm.startswith("../") or "\x00" in norm:
        raise InvalidArgument(field, "must be a folder or file inside the vault, such as projects/apollo")
    return norm


def split_vault_path(path: str, field: str = "path") -> tuple[str, str]:
    """("projects", "apollo/plan.md") for "projects/apollo/plan.md"; ("", "") for an empty path."""
    norm = normalize_path(path, field)
    if not norm:
        return "", ""
    project, _, rest = norm.partition("/")
    return project, rest


def composed(path: str) -> str:
    """``path`` in its composed form (NFC). A memory's path is a name Notewell keeps, not a file's: "café"
    typed composed or as "e" and a combining accent (NFD, as a Mac names files) is one place, kept composed,
    as the word indexes read it. A note's path is never composed so: its file is named as it is on disk."""
    return unicodedata.normalize("NFC", path)


def spellings(path: str) -> list[str]:
    """The path as given, then composed (NFC) and decomposed (NFD) where those differ: a file named on a Mac
    may be kept decomposed ("e" and a combining accent) while a person or an agent types it composed, and the
    two are different names to the file system."""
    return list(dict.fromkeys([path, unicodedata.normalize("NFC", path), unicodedata.normalize("NFD", path)]))


def spelled_as(rel: str, has: Callable[[str], bool], has_folder: Callable[[str], bool]) -> str | None:
    """The spelling of ``rel`` that ``has`` finds (None: none): one of ``spellings`` of the whole path, else each
    of its folders and its last name in either form, as each is named there: a folder named composed may hold
    a file a Mac named decomposed, or the other way round, and no whole-path form names that. ``has_folder``
    answers for a folder (one lookup each, never a listing of it). Folders are tried only once the whole-path
    forms have missed, and only when two names or more have two forms (else the whole-path forms were every
    mix); each is taken in the first form found and never searched again in another (``mixed_forms``)."""
    for spelled in spellings(rel):
        if has(spelled):
            return spelled
    return mixed_forms(rel.split("/"), has, has_folder) if mixable(rel) else None


def mixable(rel: str) -> bool:
    """Whether ``rel`` has two names or more that have two forms: only then may a file be named by a mix of
    forms no whole-path form (``spellings``) names."""
    return sum(len(spellings(name)) > 1 for name in rel.split("/")) > 1


def mixed_forms(names: list[str], has: Callable[[str], bool], has_folder: Callable[[str], bool]) -> str | None:
    """The path of ``names`` with each folder in the first of its forms ``has_folder`` finds, one level after
    the other, and its last name in the first form ``has`` finds there. No folder is searched in a second form
    (a folder in both forms, two folders on Linux, is searched as the first found): at most three lookups a
    name, where searching each form found was 2^n on a file system that finds a folder by either form (macOS)."""
    found = ""
    for name in names[:-1]:
        form = next((f for f in spellings(name) if has_folder(f"{found}{f}")), None)
        if form is None:
            return None
        found = f"{found}{form}/"
    return next((f"{found}{f}" for f in spellings(names[-1]) if has(f"{found}{f}")), None)


def indexed_spelling(documents: IndexedDocuments, project: str, rel: str) -> str | None:
    """The spelling of ``rel`` the index holds a document of ``project`` by (``spelled_as``; the index names each
    document as its file is named), None when it holds none: a folder is one indexed lookup of the first
    document at or below it."""
    return spelled_as(rel, lambda r: documents.meta(project, r) is not None,
                      lambda r: bool(documents.metas(project, r, limit=1)))


def indexed_prefix(documents: IndexedDocuments, project: str, rel: str) -> str | None:
    """The spelling of the folder or file ``rel`` the index holds documents of ``project`` at or below
    (``spelled_as``), None when it holds none: a search's or a listing's ``path`` typed in either Unicode form,
    or in a mix of its names' forms, names what readDoc would find by it. The path as given is tried first."""
    def held(r: str) -> bool:
        return bool(documents.metas(project, r, limit=1))
    return spelled_as(rel, held, held)


def indexed_start(documents: IndexedDocuments, project: str, start: str) -> str | None:
    """The spelling of ``start``, the first characters of a path (XMemo's path_filter: ``auth/tok`` finds
    ``auth/tokens.md``), that the index holds a document of ``project`` whose path begins with (``spelled_as``),
    None when it holds none: typed in either Unicode form, or a mix of its names' forms, it finds what the file's
    own spelling finds. The characters as given are tried first, so of two folders named alike in two forms (two on
    Linux) the one typed is searched, never both. Each try is one indexed lookup: the first path from ``start`` on."""
    def begins(r: str) -> bool:
        if documents.meta(project, r) is not None:
            return True
        first = documents.metas(project, limit=1, after=r)
        return bool(first) and str(first[0].path).startswith(r)

    def held(r: str) -> bool:
        return bool(documents.metas(project, r, limit=1))
    return spelled_as(start, begins, held)
