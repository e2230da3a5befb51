"""The links a markdown document makes to other documents of the vault, found in its text (no store).

Three kinds, as docs/links.md describes them:
- ``wikilink``: ``[[name]]``, ``[[name|label]]``, ``[[name#heading]]``, ``[[folder/name]]`` (and the embed
  ``![[name]]``); the name is kept as written and resolved later by Obsidian's rules (link_resolution.py);
- ``markdown``: ``[label](../clients/kestrel.md#terms)`` to a vault file, relative to the document's folder
  or vault-absolute (``/project/path``), percent-escapes decoded, ``<...>`` for a path with spaces; a URL
  (any ``scheme:``) and a bare ``#anchor`` are not links to a document;
- ``mention``: an inline code span that looks like a path (``clients/kestrel.md``); it counts only once
  it names an existing document (see link_resolution.mention_paths).

Code is respected: nothing inside a fenced block (``` or ~~~) is a link, and a link written inside an
inline code span is not one either (the span may be a mention). Code spans are taken one line at a time.
A path is normalised (``.`` and ``..`` folded away) and confined to the vault: one that climbs out of it
is no link at all. Every answer is bounded: at most MAX_LINKS_PER_DOCUMENT links, targets of at most
MAX_TARGET_CHARS characters; an answer's snippet (``snippet``) is at most SNIPPET_CHARS.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Final, Literal
from urllib.parse import unquote

from notewell.fold import fold
from notewell.vault.fences import FenceTracker

LinkKind = Literal["wikilink", "markdown", "mention"]
KINDS: Final[tuple[LinkKind, ...]] = ("wikilink", "markdown", "mention")
MARKDOWN_TYPES: Final = (".md", ".markdown")
MAX_LINKS_PER_DOCUMENT: Final = 1000
MAX_TARGET_CHARS: Final = 500
SNIPPET_CHARS: Final = 160

_BACKTICKS = re.compile(r"`+")
_WIKILINK = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")
_MARKDOWN = re.compile(r"!?\[([^\[\]\n]*)\]\(\s*(?:<([^<>\n]+)>|([^\s()<>]+))(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")
_NOT_IN_A_PATH = re.compile(r"[\s<>\"|?*`]")


@dataclass(frozen=True)
class ParsedLink:
    """One link as written. ``target``: a wikilink's name as written; a markdown link's vault path
    (``project/path``, normalised); a mention's text as written."""

    kind: LinkKind
    line: int  # counting from 1
    target: str
    anchor: str  # the heading or block after "#", "" when none
    label: str  # the text shown: a wikilink's "|label", a markdown link's [label]; "" when none


def is_markdown(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_TYPES)


@lru_cache(maxsize=8192)  # a build asks for each name many times (every link to it, every document of it)
def name_key(name: str) -> str:
    """What a link's last segment and a document's file name are matched on: NFC, case-folded, without a
    markdown ending. A document may be a link's target only when the two keys are equal."""
    base = unicodedata.normalize("NFC", name.rsplit("/", 1)[-1])
    for ending in MARKDOWN_TYPES:
        if base.lower().endswith(ending):
            base = base[: -len(ending)]
            break
    return fold(base)


def vault_path(project: str, source: str, target: str) -> str | None:
    """The vault path (``project/path``) ``target`` names from the document ``project/source``: relative to
    its folder, or from the vault's root when it starts with "/". None when it leaves the vault or names no
    file inside a project."""
    if target.startswith("/"):
        joined = target.lstrip("/")
    else:
        joined = posixpath.join(project, posixpath.dirname(source), target)
    norm = posixpath.normpath(joined) if joined else ""
    if norm in ("", ".", "..") or norm.startswith(("../", "/")) or "/" not in norm:
        return None
    return norm


def snippet(line: str, near: str = "") -> str:
    """The line, stripped, cut to SNIPPET_CHARS around the first place it holds ``near`` (else its start)."""
    text = line.strip()
    if len(text) <= SNIPPET_CHARS:
        return text
    column = text.find(near) if near else 0
    start = max(0, min(column - SNIPPET_CHARS // 3, len(text) - SNIPPET_CHARS))
    return text[start : start + SNIPPET_CHARS]


@lru_cache(maxsize=64)
def _closing(ticks: int) -> re.Pattern[str]:
    """What closes a code span opened by ``ticks`` backticks: exactly as many."""
    return re.compile(rf"(?<!`){'`' * ticks}(?!`)")


def _code_spans(line: str) -> tuple[str, list[tuple[int, str]]]:
    """The line with each inline code span blanked out, and each span's (column of its content, content)."""
    spans: list[tuple[int, str]] = []
    masked = list(line)
    pos = 0
    while (opening := _BACKTICKS.search(line, pos)) is not None:
        ticks = opening.group()
        closing = _closing(len(ticks)).search(line, opening.end())
        if closing is None:
            pos = opening.end()
            continue
        spans.append((opening.end(), line[opening.end() : closing.start()]))
        masked[opening.start() : closing.end()] = " " * (closing.end() - opening.start())
        pos = closing.end()
    return "".join(masked), spans


def wikilink_parts(inner: str) -> tuple[str, str, str] | None:
    """(name, anchor, label) of the inside of ``[[...]]``; None for a link to a heading of the same note."""
    target, pipe, label = inner.partition("|")
    if pipe:
        target = target.removesuffix("\\")  # [[name\|label]] inside a table
    name, _, anchor = target.partition("#")
    name = name.strip()
    if not name or len(name) > MAX_TARGET_CHARS:
        return None
    return name, anchor.strip(), label.strip()


def markdown_target(project: str, source: str, written: str) -> tuple[str, str] | None:
    """(vault path, anchor) of a markdown link's destination; None for a URL, an anchor alone, or a path
    out of the vault."""
    if _SCHEME.match(written) or written.startswith("#") or len(written) > MAX_TARGET_CHARS:
        return None
    path, _, anchor = written.partition("#")
    path = unquote(path.partition("?")[0], errors="replace")
    target = vault_path(project, source, path) if path else None
    return (target, unquote(anchor, errors="replace")) if target else None


def looks_like_path(text: str) -> bool:
    """Is this inline code a path a mention may name: no spaces at its ends, no URL, and a folder or an ending."""
    if not text or text != text.strip() or len(text) > MAX_TARGET_CHARS or _SCHEME.match(text):
        return False
    if any(_NOT_IN_A_PATH.search(part) for part in text.split(" ")) or "  " in text:
        return False
    return "/" in text.strip("/") or _EXTENSION.search(text) is not None


@dataclass(frozen=True)
class WrittenLink:
    """A link and the columns of its line (from 0, end excluded) that name its target: a wikilink's name, a
    markdown link's path (without its anchor or query), a mention's text. What rewriting a link replaces."""

    link: ParsedLink
    start: int
    end: int


def _line_links(project: str, source: str, number: int, line: str) -> list[WrittenLink]:
    masked, spans = _code_spans(line) if "`" in line else (line, [])
    found: list[WrittenLink] = []
    for m in _WIKILINK.finditer(masked) if "[[" in masked else ():
        parts = wikilink_parts(m.group(1))
        if parts is not None:
            start = m.start(1) + m.group(1).index(parts[0])
            found.append(WrittenLink(ParsedLink("wikilink", number, *parts), start, start + len(parts[0])))
    for m in _MARKDOWN.finditer(masked) if "](" in masked else ():
        group = 2 if m.group(2) is not None else 3
        written = m.group(group)
        resolved = markdown_target(project, source, written)
        if resolved is not None:
            path = written.partition("#")[0].partition("?")[0]
            found.append(WrittenLink(ParsedLink("markdown", number, resolved[0], resolved[1], m.group(1).strip()),
                                     m.start(group), m.start(group) + len(path)))
    for column, content in spans:
        if looks_like_path(content):
            found.append(WrittenLink(ParsedLink("mention", number, content, "", ""), column, column + len(content)))
    return sorted(found, key=lambda written: written.start)


def _written(project: str, source: str, text: str) -> Iterator[WrittenLink]:
    """Each link of the markdown text in reading order, outside fenced code (none for another type)."""
    if not is_markdown(source) or ("[[" not in text and "](" not in text and "`" not in text):
        return
    fences = FenceTracker()
    for number, line in enumerate(text.split("\n"), start=1):
        if fences.code(line):
            continue
        if "[[" not in line and "](" not in line and "`" not in line:
            continue
        yield from _line_links(project, source, number, line)


def written_links(project: str, source: str, text: str,
                  limit: int | None = MAX_LINKS_PER_DOCUMENT) -> list[WrittenLink]:
    """The links of the markdown document ``project/source`` with where each names its target: those
    parse_links gives, or all (``limit`` None: what a rewrite of the document reads)."""
    return list(islice(_written(project, source, text), limit))


def parse_links(project: str, source: str, text: str) -> list[ParsedLink]:
    """The links of the markdown document ``project/source`` in reading order (none for another type)."""
    return [written.link for written in islice(_written(project, source, text), MAX_LINKS_PER_DOCUMENT)]
