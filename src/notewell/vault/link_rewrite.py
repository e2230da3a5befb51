"""A document's links written again after a note moved, so that each names what it named before (no store:
the caller hands in the documents before and after the move as two resolvers).

A link is rewritten only when it resolved before the move and resolves elsewhere (or nowhere) after it: a
link to the moved note is made to name its new place, and the moved note's own relative links are made to
name, from its new folder, what they named from the old one. Only the part naming the target changes: a
wikilink's name (its ``#heading`` and ``|label`` stay), a markdown link's path (its label, anchor, query and
title stay), a mention's text. Each is written as the link was: a markdown link vault-absolute or relative,
``.md`` left out or not, inside ``<...>`` or percent-escaped; a wikilink by the shortest end of the path that
picks the note out from the linking document; a mention by the first of its project path, its path from the
document's folder and its vault path that names the note. A link that no wording can make name it (a
wikilink to another project) is left as it is. Every new wording is resolved again before it is used.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

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

_ESCAPED = {" ": "%20", "(": "%28", ")": "%29", "<": "%3C", ">": "%3E", "#": "%23", "?": "%3F", "%": "%25",
            "\t": "%09"}
_NOT_IN_A_WIKILINK = set("[]|#\n")


@dataclass(frozen=True)
class Move:
    """The note that moved, and the documents before and after (the same documents but for that one)."""

    moved_from: DocKey
    moved_to: DocKey
    before: Resolver
    after: Resolver


def relinked(text: str, source: DocKey, move: Move) -> tuple[str, list[int]]:
    """``text`` of the document now at ``source`` with its links rewritten (above), and the lines changed
    (counting from 1). The moved note's own text is read from its old place before the move."""
    was_at = move.moved_from if source == move.moved_to else source
    after = {(w.link.line, w.start): w for w in written_links(source[0], source[1], text)}
    lines = text.split("\n")
    changed: dict[int, list[tuple[WrittenLink, str]]] = {}
    for before in written_links(was_at[0], was_at[1], text):
        named = move.before.locate(before.link.kind, before.link.target, was_at)
        if named is None:
            continue
        wanted = move.moved_to if named == move.moved_from else named
        now = after.get((before.link.line, before.start))
        if now is not None and move.after.locate(now.link.kind, now.link.target, source) == wanted:
            continue
        line = lines[before.link.line - 1]
        wording = _wording(before, line, was_at, named, wanted, source, move.after)
        if wording is not None:
            changed.setdefault(before.link.line, []).append((before, wording))
    for number, rewrites in changed.items():
        line = lines[number - 1]
        for written, wording in sorted(rewrites, key=lambda item: -item[0].start):
            line = line[:written.start] + wording + line[written.end:]
        lines[number - 1] = line
    return "\n".join(lines), sorted(changed)


def _wording(written: WrittenLink, line: str, was_at: DocKey, named: DocKey, wanted: DocKey, source: DocKey,
             after: Resolver) -> str | None:
    """What to write in place of the link's target (``named`` from ``was_at`` before the move) so that it names
    ``wanted`` from ``source``; None when nothing does."""
    old = line[written.start:written.end]
    kind = written.link.kind
    if kind == "wikilink":
        return _wikilink_name(old, wanted, source, after)
    if kind == "markdown":
        return _markdown_path(old, line[written.start - 1:written.start] == "<", wanted, source, after)
    return _mention(old, was_at, named, wanted, source, after)


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
        name = "/".join(parts[-count:])
        if _NOT_IN_A_WIKILINK.isdisjoint(name) and after.locate("wikilink", name, source) == wanted:
            return name
    return None


def _markdown_path(old: str, angled: bool, wanted: DocKey, source: DocKey, after: Resolver) -> str | None:
    target = f"{wanted[0]}/{wanted[1]}"
    if _without_markdown_ending(old) == old and _without_markdown_ending(target) != target:
        target = _without_markdown_ending(target)  # the link left the ending out: so does its new path
    if old.startswith("/"):
        path = "/" + target
    else:
        path = posixpath.relpath(target, posixpath.dirname(f"{source[0]}/{source[1]}"))
    if angled:
        if any(c in path for c in "<>\n"):
            return None
    else:
        path = "".join(_ESCAPED.get(c, c) for c in path)
    named = markdown_target(source[0], source[1], path)
    if named is None or after.locate("markdown", named[0], source) != wanted:
        return None
    return path


def _mention(old: str, was_at: DocKey, named: DocKey, wanted: DocKey, source: DocKey,
             after: Resolver) -> str | None:
    """A mention written the way it was when that still names ``wanted`` (from the document's folder, inside
    its project, or as a vault path: the order a mention is tried in), else the first other way that does."""
    bare = old.lstrip("/")
    was_named = [None if old.startswith("/") else vault_path(was_at[0], was_at[1], bare),
                 vault_path(was_at[0], "", bare), vault_path(was_at[0], "", "/" + bare)]
    named_path = f"{named[0]}/{named[1]}"
    way = next((i for i, path in enumerate(was_named)
                if path is not None and path in (named_path, _without_markdown_ending(named_path))), 0)
    wanted_path = f"{wanted[0]}/{wanted[1]}"
    ways = [posixpath.relpath(wanted_path, posixpath.dirname(f"{source[0]}/{source[1]}")),
            wanted[1] if wanted[0] == source[0] else None, wanted_path]
    for text in [ways[way], *ways[:way], *ways[way + 1:]]:
        if text is not None and looks_like_path(text) and "`" not in text \
                and after.locate("mention", text, source) == wanted:
            return text
    return None
