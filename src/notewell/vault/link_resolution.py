"""Which document a link names, by the rules docs/links.md gives (no store: the caller hands the paths in).

- A wikilink resolves inside its own project, by name as Obsidian does: candidates are the documents whose
  file name matches the link's last segment (case-insensitive, NFC, ``.md`` optional), and whose path ends
  with the link's folders when it names any (``[[clients/kestrel]]``). The one in the linking document's
  own folder wins; else the one with the shortest path (fewest folders). Among equals an exact-case match
  wins; a tie that remains is *ambiguous* and resolves to nothing: the writer disambiguates with a folder.
- A markdown link names one vault path (case-sensitive, as the file system); ``.md`` may be left out. It may
  name another project: whether the caller may read it is decided when a link is answered. A path typed in
  the other Unicode form than the file's name (composed on Linux, decomposed by a Mac), or in a mix of its
  names' forms, names the file all the same (paths.spelled_as, as readDoc finds it): the path as typed first.
- A mention (a path in backticks) is tried relative to the document's folder, then inside its project,
  then as a vault path; the first that exists, in either Unicode form as a markdown link, is its target.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from notewell.fold import fold
from notewell.paths import spelled_as
from notewell.records.documents import DocKey
from notewell.vault.note_links import MARKDOWN_TYPES, LinkKind, name_key, vault_path

ProjectPaths = Callable[[str], Mapping[str, int]]  # a project's documents: project-relative path -> document id


@dataclass
class ProjectIndex:
    """A project's documents by path, and by name key for wikilinks (made when a wikilink first asks: a
    markdown link or a mention needs only the paths, and a large project's names take long to fold)."""

    ids: Mapping[str, int]

    @cached_property
    def by_key(self) -> dict[str, list[str]]:
        named: dict[str, list[str]] = {}
        for path in sorted(self.ids):
            named.setdefault(name_key(posixpath.basename(path)), []).append(path)
        return named

    @cached_property
    def folders(self) -> frozenset[str]:
        """Every folder holding a document, at any depth (made when a path in another Unicode form than its
        file's asks: only then may a folder be looked up alone)."""
        found: set[str] = set()
        for path in self.ids:
            folder = posixpath.dirname(path)
            while folder and folder not in found:  # a folder seen has had its own folders added
                found.add(folder)
                folder = posixpath.dirname(folder)
        return frozenset(found)


class Resolver:
    """Resolves links against the documents ``paths`` names, asking for each project once."""

    def __init__(self, paths: ProjectPaths) -> None:
        self._paths = paths
        self._projects: dict[str, ProjectIndex] = {}
        self._located: dict[tuple[str, str, str, str], DocKey | None] = {}

    def project(self, project: str) -> ProjectIndex:
        if project not in self._projects:
            self._projects[project] = ProjectIndex(self._paths(project))
        return self._projects[project]

    def resolve(self, kind: LinkKind | str, target: str, source: DocKey) -> int | None:
        """The id of the document the link names, or None (nothing, ambiguous, or out of the vault)."""
        found = self.locate(kind, target, source)
        return None if found is None else self.project(found[0]).ids[found[1]]

    def locate(self, kind: LinkKind | str, target: str, source: DocKey) -> DocKey | None:
        """The (project, path) of the document the link names, or None (each answer kept: a link resolves
        alike from every document of a folder)."""
        asked = (kind, target, source[0], posixpath.dirname(source[1]) if kind != "markdown" else "")
        if asked not in self._located:
            self._located[asked] = self._locate(kind, target, source)
        return self._located[asked]

    def _locate(self, kind: LinkKind | str, target: str, source: DocKey) -> DocKey | None:
        project, path = source
        if kind == "wikilink":
            found = wikilink_target(target, path, self.project(project).by_key)
            return None if found is None else (project, found)
        candidates = [target] if kind == "markdown" else mention_paths(project, path, target)
        for candidate in candidates:
            key = self._exists(candidate)
            if key is not None:
                return key
        return None

    def _exists(self, location: str) -> DocKey | None:
        project, _, rest = location.partition("/")
        ids = self.project(project).ids
        if rest in ids:  # the common case, a path written whole: no candidates to build
            return project, rest
        paths = (rest, *(rest + ending for ending in MARKDOWN_TYPES if not rest.lower().endswith(ending)))
        for path in paths:
            if path in ids:
                return project, path
        if rest.isascii():  # one Unicode form only: nothing else to try
            return None
        for path in paths:
            spelled = spelled_as(path, ids.__contains__, lambda folder: folder in self.project(project).folders)
            if spelled is not None:
                return project, spelled
        return None


def _comparable(path: str) -> str:
    """A path as wikilink folders compare: NFC, case-folded, no markdown ending."""
    text = fold(unicodedata.normalize("NFC", path))
    for ending in MARKDOWN_TYPES:
        if text.endswith(ending):
            return text[: -len(ending)]
    return text


def wikilink_target(name: str, source: str, by_key: Mapping[str, Iterable[str]]) -> str | None:
    """The project-relative path ``[[name]]`` in the document ``source`` resolves to, by the rules above."""
    written = name.strip().strip("/")
    candidates = list(by_key.get(name_key(written), ()))
    if "/" in written:
        wanted = _comparable(written)
        candidates = [c for c in candidates if (seen := _comparable(c)) == wanted or seen.endswith("/" + wanted)]
    if not candidates:
        return None
    folder = posixpath.dirname(source)
    same_folder = [c for c in candidates if posixpath.dirname(c) == folder]
    if same_folder:
        return _one(same_folder, written, tie_allowed=True)
    depth = min(c.count("/") for c in candidates)
    return _one([c for c in candidates if c.count("/") == depth], written, tie_allowed=False)


def _one(candidates: list[str], written: str, *, tie_allowed: bool) -> str | None:
    """The one candidate; else the exact-case match among them; else the first (``tie_allowed``) or None."""
    if len(candidates) == 1:
        return candidates[0]
    base = unicodedata.normalize("NFC", written.rsplit("/", 1)[-1])
    exact = [c for c in candidates if posixpath.splitext(posixpath.basename(c))[0] == base
             or posixpath.basename(c) == base]
    if len(exact) == 1:
        return exact[0]
    return sorted(candidates)[0] if tie_allowed else None


def mention_paths(project: str, source: str, text: str) -> list[str]:
    """The vault paths a mention may mean, in the order they are tried (each inside the vault)."""
    tried = [vault_path(project, source, text.lstrip("/")) if not text.startswith("/") else None,
             vault_path(project, "", text.lstrip("/")), vault_path(project, "", "/" + text.lstrip("/"))]
    return list(dict.fromkeys(t for t in tried if t is not None))
