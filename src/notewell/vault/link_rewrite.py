"""A document's links written again after a note moved, so that each names what it named before (no store:
the caller hands in the documents before and after the move as two resolvers, and which other files exist).

Every link of the document is compared, one by one: what it named before the move (read from where the
document was then) against what it names after (from where it is now). A link that named a document and now
names another, or nothing, is made to name it again: a link to the moved note names its new place; in the
moved note itself, a relative link names from the new folder what it named from the old one (a file that is
no document, an image or a PDF, too); a link the moved note now captures (a mention or a name that meant
another document before) is made to name that one. Only the part naming the target changes: a wikilink's
name (its ``#heading`` and ``|label`` stay), a markdown link's path (its label, anchor, query and title
stay), a mention's text. Each is written as the link was: a markdown link vault-absolute or relative, ``.md``
left out or not, inside ``<...>`` or percent-escaped; a wikilink by the shortest end of the path that picks
the note out from the linking document; a mention by the way it was written (from the document's folder,
inside its project, as a vault path) when that still names it, else the first other way that does. A name
the link keeps (a folder or file name the move does not change) keeps the Unicode form its writer typed it in
(composed, or decomposed as on a Mac), when that still names the note, whatever form the file is named in. A line
is rewritten only when, parsed again, each of its links names what it should; a link no wording can mend (a
wikilink when a namesake sits in the document's own folder) is left as written and reported.
"""

from __future__ import annotations

import posixpath
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from urllib.parse import quote, unquote

from notewell.paths import composed
from notewell.records.documents import DocKey
from notewell.vault.link_resolution import Resolver
from notewell.vault.note_links import (
    MARKDOWN_TYPES,
    WrittenLink,
    looks_like_path,
    markdown_target,
    vault_path,
    written_links,
)

_ESCAPED_IN_A_BARE_PATH = set("()<>#?%`[]\\")
_ESCAPED_IN_ANGLES = set("<>#?%`\\")
_NOT_IN_A_WIKILINK = set("[]|#`\n")


@dataclass(frozen=True)
class Move:
    """The note that moved, the documents before and after (the same documents but for that one), and the
    spelling on disk of a vault path that names a file of the vault that is no document (an attachment a relative
    link may name), typed in either Unicode form or a mix of its names' forms (paths.spelled_as); None: none."""

    moved_from: DocKey
    moved_to: DocKey
    before: Resolver
    after: Resolver
    attachment: Callable[[str], str | None] = lambda _path: None


@dataclass
class Relinked:
    """A document's text with its links mended, the lines changed, and the lines of links left broken."""

    text: str
    changed: list[int] = field(default_factory=list)
    broken: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _Named:
    """What a link is to name: a document (``key``) or, for a markdown link, a file that is no document
    (``file``, its vault path)."""

    key: DocKey | None = None
    file: str | None = None


def relinked(text: str, source: DocKey, move: Move) -> Relinked:
    """``text`` of the document now at ``source`` with its links mended (above). The moved note's own text is
    read from its old place for before the move."""
    was_at = move.moved_from if source == move.moved_to else source
    after = {(w.link.line, w.start): w for w in written_links(source[0], source[1], text, limit=None)}
    lines = text.split("\n")
    wanted_on: dict[int, list[tuple[WrittenLink, _Named, str | None]]] = {}
    for before in written_links(was_at[0], was_at[1], text, limit=None):
        wanted = _wanted(before, was_at, source, move)
        now = after.get((before.link.line, before.start))
        if wanted is None or (now is not None and _names(now, source, move, wanted)):
            continue
        wording = _wording(before, lines[before.link.line - 1], was_at, wanted, source, move)
        wanted_on.setdefault(before.link.line, []).append((before, wanted, wording))
    result = Relinked(text)
    for number, rewrites in sorted(wanted_on.items()):
        mended = _mended(lines[number - 1], rewrites, source, move)
        if mended is None:
            result.broken.append(number)
            continue
        lines[number - 1] = mended
        result.changed.append(number)
        if any(wording is None for _, _, wording in rewrites):
            result.broken.append(number)
    result.text = "\n".join(lines)
    return result


def _wanted(before: WrittenLink, was_at: DocKey, source: DocKey, move: Move) -> _Named | None:
    """What the link is to name after the move; None when it named nothing (so nothing is owed to it)."""
    named = move.before.locate(before.link.kind, before.link.target, was_at)
    if named is not None:
        return _Named(key=move.moved_to if named == move.moved_from else named)
    if before.link.kind == "markdown" and was_at != source:  # the moved note's relative link to an attachment
        file = move.attachment(before.link.target)
        return None if file is None else _Named(file=file)
    return None


def _names(written: WrittenLink, source: DocKey, move: Move, wanted: _Named) -> bool:
    if wanted.file is not None:
        return written.link.kind == "markdown" and move.attachment(written.link.target) == wanted.file
    return move.after.locate(written.link.kind, written.link.target, source) == wanted.key


def _mended(line: str, rewrites: list[tuple[WrittenLink, _Named, str | None]], source: DocKey,
            move: Move) -> str | None:
    """The line with each wording put in place of its link's target, when, parsed again, each rewritten link
    is there and names what it should, and each link the line held is still a link of its kind (a wording
    never swallows another); None otherwise (the line is left as written)."""
    done = sorted(((w, wanted, wording) for w, wanted, wording in rewrites if wording is not None),
                  key=lambda item: item[0].start)
    if not done:
        return None
    mended = line
    for written, _, wording in reversed(done):
        mended = mended[:written.start] + str(wording) + mended[written.end:]
    starts = [w.start for w, _, _ in done]
    grown = list(accumulate(len(str(wording)) - (w.end - w.start) for w, _, wording in done))

    def shifted(start: int) -> int:
        """Where a link's target starts in the mended line: moved by the rewrites before it."""
        before = bisect_left(starts, start)
        return start + (grown[before - 1] if before else 0)

    now = {w.start: w for w in written_links(source[0], source[1], mended, limit=None)}
    for written, wanted, _ in done:
        found = now.get(shifted(written.start))
        if found is None or found.link.kind != written.link.kind or not _names(found, source, move, wanted):
            return None
    for written in written_links(source[0], source[1], line, limit=None):
        found = now.get(shifted(written.start))
        if found is None or found.link.kind != written.link.kind:
            return None
    return mended


def _wording(written: WrittenLink, line: str, was_at: DocKey, wanted: _Named, source: DocKey,
             move: Move) -> str | None:
    """What to write in place of the link's target so that it names ``wanted`` from ``source``; None when
    nothing does."""
    old = line[written.start:written.end]
    kind = written.link.kind
    if wanted.file is not None:
        return _markdown_path(old, line[written.start - 1:written.start] == "<", wanted.file, source,
                              lambda path: move.attachment(path) == wanted.file)
    key = wanted.key
    assert key is not None
    if kind == "wikilink":
        return _wikilink_name(old, key, source, move.after)
    if kind == "markdown":
        return _markdown_path(old, line[written.start - 1:written.start] == "<", f"{key[0]}/{key[1]}", source,
                              lambda path: move.after.locate("markdown", path, source) == key)
    return _mention(old, was_at, move.before.locate(kind, written.link.target, was_at) or key, key, source,
                    move.after)


def _as_typed(path: str, typed: str) -> str:
    """``path`` with each of its names that ``typed`` (the link's target as its writer wrote it) holds in another
    Unicode form spelled as typed: a move changes where a link leads, not how its writer spells the names it
    keeps (a file a Mac named decomposed, linked composed from Linux, or the other way round)."""
    forms = {composed(name): name for name in typed.split("/")}
    return "/".join(forms.get(composed(name), name) for name in path.split("/"))


def _spellings(path: str, typed: str) -> list[str]:
    """The spellings of ``path`` a rewritten link tries, in order: its kept names as typed, then as on disk."""
    return list(dict.fromkeys([_as_typed(path, typed), path]))


def _without_markdown_ending(path: str) -> str:
    for ending in MARKDOWN_TYPES:
        if path.lower().endswith(ending):
            return path[: -len(ending)]
    return path


def _wikilink_name(old: str, wanted: DocKey, source: DocKey, after: Resolver) -> str | None:
    if wanted[0] != source[0]:  # a wikilink names a document of its own project only
        return None
    path = wanted[1] if old.lower().endswith(MARKDOWN_TYPES) else _without_markdown_ending(wanted[1])
    parts = path.split("/")
    for count in range(1, len(parts) + 1):
        for name in _spellings("/".join(parts[-count:]), old):
            if _NOT_IN_A_WIKILINK.isdisjoint(name) and name == name.strip() \
                    and after.locate("wikilink", name, source) == wanted:
                return name
    return None


def _escaped(path: str, angled: bool) -> str:
    """A markdown link's path with every character that would end or change it percent-escaped: in a bare
    destination, whitespace of any kind, brackets, parentheses, ``#``, ``?``, ``%`` and a backtick; inside
    ``<...>``, where a space may stay, the angle brackets, a backslash, ``#``, ``?``, ``%``, a backtick and
    whitespace other than a space."""
    if angled:
        return "".join(quote(c, safe="") if (c.isspace() and c != " ") or c in _ESCAPED_IN_ANGLES
                       or not c.isprintable() else c for c in path)
    return "".join(quote(c, safe="") if c.isspace() or c in _ESCAPED_IN_A_BARE_PATH or not c.isprintable() else c
                   for c in path)


def _markdown_path(old: str, angled: bool, target: str, source: DocKey,
                   names: Callable[[str], bool]) -> str | None:
    """``target`` (a vault path) as a markdown link from ``source`` writes it the way ``old`` was written;
    ``names`` says whether the vault path a wording reads as is the one wanted."""
    if _without_markdown_ending(old) == old and _without_markdown_ending(target) != target:
        target = _without_markdown_ending(target)  # the link left the ending out: so does its new path
    if old.startswith("/"):
        path = "/" + target
    else:
        path = posixpath.relpath(target, posixpath.dirname(f"{source[0]}/{source[1]}"))
    for spelled in _spellings(path, unquote(old, errors="replace")):
        escaped = _escaped(spelled, angled)
        named = markdown_target(source[0], source[1], escaped)
        if named is not None and names(named[0]):
            return escaped
    return None


def _mention(old: str, was_at: DocKey, named: DocKey, wanted: DocKey, source: DocKey,
             after: Resolver) -> str | None:
    """A mention written the way it was when that still names ``wanted`` (from the document's folder, inside
    its project, or as a vault path: the order a mention is tried in), else the first other way that does."""
    bare = old.lstrip("/")
    was_named = [None if old.startswith("/") else vault_path(was_at[0], was_at[1], bare),
                 vault_path(was_at[0], "", bare), vault_path(was_at[0], "", "/" + bare)]
    named_path = composed(f"{named[0]}/{named[1]}")
    way = next((i for i, path in enumerate(was_named)
                if path is not None and composed(path) in (named_path, _without_markdown_ending(named_path))), 0)
    wanted_path = f"{wanted[0]}/{wanted[1]}"
    ways = [posixpath.relpath(wanted_path, posixpath.dirname(f"{source[0]}/{source[1]}")),
            wanted[1] if wanted[0] == source[0] else None, wanted_path]
    for way_text in [ways[way], *ways[:way], *ways[way + 1:]]:
        for text in _spellings(way_text, old) if way_text is not None else ():
            if looks_like_path(text) and "`" not in text and after.locate("mention", text, source) == wanted:
                return text
    return None
