"""Turning a vault-relative path ("projects/apollo") into a project and a project-relative prefix."""

from __future__ import annotations

import posixpath
import unicodedata

from notewell.errors import InvalidArgument

PATH_MAX_CHARS = 4096  # Linux's PATH_MAX: no real vault path is longer


def normalize_path(path: str, field: str = "path") -> str:
    """A clean "/"-separated relative path; refuses anything that climbs out of the vault.

    A backslash is part of a name (a file may be called back\\slash.md), never a separator.
    """
    if len(path) > PATH_MAX_CHARS:
        raise InvalidArgument(field, f"is {len(path)} characters; keep it to {PATH_MAX_CHARS} or fewer")
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


def spellings(path: str) -> list[str]:
    """The path as given, then composed (NFC) and decomposed (NFD) where those differ: a file named on a Mac
    may be kept decomposed ("e" and a combining accent) while a person or an agent types it composed, and the
    two are different names to the file system."""
    return list(dict.fromkeys([path, unicodedata.normalize("NFC", path), unicodedata.normalize("NFD", path)]))
