"""What a document says about itself: title, summary, and for brain.md its list of documents.

Title: front matter ``title``, else the first markdown heading (ATX ``# Title`` or setext: a line
underlined with ``===`` or ``---``; or an HTML ``<h1>``...``<h6>`` line), else the file name.
Summary: front matter ``summary`` (or ``description``), else the first paragraph, cut short. In markdown,
HTML tags and comments, images and badges are taken out of it, and a line of nothing but links (a row of
badges, a navigation bar) is passed over: a README's banner is not its summary.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote

import yaml
from markdown_it import MarkdownIt

from notewell.vault.front_matter_yaml import load_yaml
from notewell.vault.headings import title_heading

BRAIN_FILE = "brain.md"
SUMMARY_MAX_CHARS = 200
_MARKDOWN_TYPES = (".md", ".markdown")
_HTML_HEADING = re.compile(r"^\s{0,3}<h[1-6][^>]*>(.*?)</h[1-6]>\s*$", re.IGNORECASE)
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$")
# A link's parts, written so that no text makes them backtrack (a run of "[" or of "[a](" once cost time
# quadratic in the line): a label holds no bracket; a target in parentheses may hold one pair of them (a
# Wikipedia address), taken without giving back; a reference-style target holds no bracket.
_LABEL = r"\[[^\[\]]*\]"
_TARGET = r"(?:\((?:[^()]|\([^()]*\))*+\)|\[[^\[\]]*\])"
_BADGE = re.compile(rf"\[!{_LABEL}{_TARGET}\]{_TARGET}")
_IMAGE = re.compile(rf"!{_LABEL}{_TARGET}")
_LINK = re.compile(rf"{_LABEL}{_TARGET}")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_COMMENT_OR_TAG = re.compile(rf"<!--.*?-->|{_TAG.pattern}")
_LINK_SEPARATORS = " \t|·•–—-,;/"
_LIST_ITEM = re.compile(r"^(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_md = MarkdownIt("commonmark")


@dataclass(frozen=True)
class ParsedDocument:
    title: str
    summary: str


def split_front_matter(text: str) -> tuple[dict[str, object], str, int]:
    """Return (front matter, body, the body's first line number). Bad YAML counts as none."""
    if not text.startswith("---"):
        return {}, text, 1
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return {}, text, 1
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            try:
                data = load_yaml("\n".join(lines[1:i]))
            except yaml.YAMLError:
                return {}, text, 1
            if not isinstance(data, dict):
                return {}, text, 1
            return {str(k): v for k, v in data.items()}, "\n".join(lines[i + 1:]), i + 2
    return {}, text, 1


def _clean(value: object) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` as ``text.split("\\n")`` gives them, one at a time: a title and a summary
    usually sit in the first lines, and splitting a whole large file was a sixth of an index build's
    Python time."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]


def _without_broken_front_matter(body: str) -> str:
    """A front matter block that is not valid YAML is no setext heading ("title: x" over "---"): drop it."""
    lines = body.split("\n", 50)
    if not lines or lines[0].rstrip() != "---":
        return body
    for i in range(1, min(len(lines), 50)):
        if lines[i].rstrip() in ("---", "..."):
            return "\n".join(lines[i + 1:])
    return body


def _without_html(text: str) -> str:
    """``text`` without its HTML comments and tags. Comments are looked for only up to the last ``-->``: after
    it none can end, and a lazy ``<!--.*?-->`` would scan to the line's end from every ``<!--`` there."""
    close = text.rfind("-->") + 3
    if close < 3:
        return _TAG.sub("", text)
    return _COMMENT_OR_TAG.sub("", text[:close]) + _TAG.sub("", text[close:])


def _summary_text(line: str) -> str:
    """A markdown line as a summary shows it: without HTML, images and badges; "" for a line of links only."""
    text = " ".join(_without_html(_IMAGE.sub("", _BADGE.sub("", line))).split())
    if not _LINK.sub("", text).strip(_LINK_SEPARATORS):
        return ""
    return text


@dataclass
class _Reading:
    """What parse_document has read of a body so far, one line at a time: the first heading (the title)
    and the first paragraph (the summary), and the markdown structure it is inside."""

    markdown: bool
    heading_title: str = ""
    first_para: str = ""
    para_done: bool = False
    fence: str = ""  # the fence of the code block being passed over
    comment: bool = False  # inside an HTML comment
    run: list[str] = field(default_factory=list)  # the plain lines just read: a setext underline makes them a heading
    in_list: bool = False  # inside a list before the first paragraph: its items' lines are no paragraph
    after_blank: bool = False  # the line before was blank

    def markdown_line(self, line: str) -> str | None:
        """The line as the summary reads it, or None when markdown structure used it up (code, comments,
        headings, breaks, lines of images and links)."""
        stripped = line.strip()
        if self.fence:
            self.fence = "" if stripped.startswith(self.fence) else self.fence
            return None
        if self.comment or (stripped.startswith("<!--") and "-->" not in stripped):
            self.comment = "-->" not in stripped
            return None
        if stripped.startswith(("```", "~~~")):
            self.fence, self.run = stripped[:3], []
            self.para_done = self.para_done or bool(self.first_para)
            return None
        title = title_heading(line)
        html = _HTML_HEADING.match(line) if title is None else None
        heading = title if title is not None else html.group(1) if html else None
        if heading is not None or (self.run and _SETEXT_UNDERLINE.match(line)):
            words = _without_html(heading) if heading is not None else " ".join(self.run)
            self.heading_title = self.heading_title or _clean(words)
            if heading is None and self.first_para == " ".join(self.run):  # the "paragraph" was the heading's text
                self.first_para, self.para_done = "", False
            self.para_done, self.run = self.para_done or bool(self.first_para), []
            return None
        if _THEMATIC_BREAK.match(line):
            self.para_done, self.run = self.para_done or bool(self.first_para), []
            return None
        shown = _summary_text(stripped) if stripped else ""
        if not shown and stripped:
            return None
        if shown:
            self.run.append(shown)
        else:
            self.run = []
        return shown

    def paragraph_line(self, stripped: str, indented: bool = False) -> None:
        """A line of text towards the first paragraph: a blank line ends it, a list, table or quote before
        it is passed over, a list item's every line too (its continuation lines, and after a blank line the
        indented ones)."""
        blank_before, self.after_blank = self.after_blank, not stripped
        if not stripped:
            self.para_done = bool(self.first_para)
            return
        if not self.first_para and self.markdown:
            if _LIST_ITEM.match(stripped):
                self.in_list, self.run = True, []
                return
            if self.in_list and (indented or not blank_before):
                self.run = []
                return
            self.in_list = False
            if stripped.startswith(("|", ">")):
                self.run = []
                return
        self.first_para = f"{self.first_para} {stripped}".strip()
        self.para_done = len(self.first_para) > SUMMARY_MAX_CHARS


def parse_document(path: str, text: str) -> ParsedDocument:
    """Title and summary of the document at project-relative ``path``.

    The title's heading is the first one anywhere in a markdown body (fenced code is not read); the
    summary's paragraph is the first run of plain lines, passing over headings, lists, tables and quotes
    (and, in markdown, HTML, images, badges and lines of links).
    """
    ext = posixpath.splitext(path)[1].lower()
    markdown = ext in _MARKDOWN_TYPES
    meta, body, start = split_front_matter(text) if markdown else ({}, text, 1)
    if markdown and start == 1:
        body = _without_broken_front_matter(body)
    title = _clean(meta.get("title"))
    reading = _Reading(markdown)
    for line in _lines(body):
        stripped = reading.markdown_line(line) if markdown else line.strip()
        if stripped is None:
            continue
        if reading.para_done:
            if title or reading.heading_title or not markdown:
                break
            continue
        reading.paragraph_line(stripped, line[:1] in (" ", "\t"))
    title = title or reading.heading_title or posixpath.splitext(posixpath.basename(path))[0]
    summary = _clean(meta.get("summary") or meta.get("description")) or reading.first_para
    if len(summary) > SUMMARY_MAX_CHARS:
        summary = summary[: SUMMARY_MAX_CHARS - 1].rstrip() + "…"
    return ParsedDocument(title=title, summary=summary)


@dataclass(frozen=True)
class BrainDoc:
    path: str  # project-relative
    title: str


@dataclass(frozen=True)
class ParsedBrain:
    folder: str  # project-relative folder holding brain.md ("" for the project root)
    title: str
    summary: str
    declared_parent: str | None  # project-relative folder, when brain.md names one
    documents: tuple[BrainDoc, ...]


def _link_targets(body: str) -> list[tuple[str, str]]:
    """Every (href, text) of the markdown links in ``body``, in order."""
    found: list[tuple[str, str]] = []
    for token in _md.parse(body):
        if token.type != "inline" or not token.children:
            continue
        href: str | None = None
        text: list[str] = []
        for child in token.children:
            if child.type == "link_open":
                href, text = str(child.attrs.get("href", "")), []
            elif child.type == "link_close" and href is not None:
                found.append((href, "".join(text).strip()))
                href = None
            elif href is not None and child.type in ("text", "code_inline"):
                text.append(child.content)
    return found


def _resolve(folder: str, target: str) -> str | None:
    """A project-relative path for ``target`` written in a file of ``folder``; None if it leaves the project."""
    joined = posixpath.normpath(posixpath.join(folder, target)) if folder else posixpath.normpath(target)
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return "" if joined == "." else joined


def parse_brain(folder: str, text: str) -> ParsedBrain:
    """Parse the brain.md of project-relative ``folder``."""
    doc = parse_document(posixpath.join(folder, BRAIN_FILE) if folder else BRAIN_FILE, text)
    meta, body, _ = split_front_matter(text)
    title = doc.title if doc.title != "brain" else (posixpath.basename(folder) or "brain")
    declared: str | None = None
    parent = meta.get("parent")
    if isinstance(parent, str) and parent.strip():
        raw = parent.strip().rstrip("/")
        declared = _resolve(folder, raw) if raw.startswith(("./", "../")) else _resolve("", raw.lstrip("/"))
    documents: list[BrainDoc] = []
    seen: set[str] = set()
    for href, label in _link_targets(body):
        if not href or "://" in href or href.startswith(("#", "mailto:")):
            continue
        # markdown-it percent-encodes hrefs ("straße.md" -> "stra%C3%9Fe.md"); the file has the plain name
        target = _resolve(folder, unquote(href.split("#", 1)[0]))
        if not target or target in seen:
            continue
        seen.add(target)
        documents.append(BrainDoc(path=target, title=label or posixpath.basename(target)))
    return ParsedBrain(folder, title, doc.summary, declared, tuple(documents))
