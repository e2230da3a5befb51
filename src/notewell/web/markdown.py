"""Documents as HTML: markdown rendered block by block with line anchors, other text as numbered lines.

Sanitised by construction: markdown-it runs with raw HTML off (a <script> in the vault shows as text) and
its link check refuses javascript:, vbscript:, file: and data: (but images) URLs; the page's
Content-Security-Policy blocks anything else. Each top-level block carries an anchor ``L<n>`` for every
source line it covers, so a search hit links to ``#L<n>`` and lands on the block holding that line; the
block with the wanted line is marked. Each heading has an id, so a link's ``#heading`` lands on it
(web/heading_ids.py).

A leading YAML front matter block becomes a small list of its fields (kind "front"; shown as the raw text
when it is not a mapping), and a first heading that says the document's title is the page's title (kind
"title"), so the title shows once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup, escape

from notewell.vault.parse import split_front_matter
from notewell.web.heading_ids import unique_ids
from notewell.web.readable import plain
from notewell.web.wikilinks import ENV_KEY, UNRESOLVED_KEY, use_wikilinks

_MD = use_wikilinks(MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    ["table", "strikethrough"]))
MARKDOWN_ENDINGS = (".md", ".markdown", ".mdx")


@dataclass(frozen=True)
class Block:
    first: int  # 1-based source line
    last: int
    html: Markup
    marked: bool  # holds the line the reader asked for
    kind: str = ""  # "front": the front matter; "title": the heading that is the page's title; "": the body
    anchor: str = ""  # the title heading's id (its html is not shown: the page's h1 is)
    fields: tuple[tuple[str, str], ...] = ()  # the front matter's fields, when it is a YAML mapping


def is_markdown(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_ENDINGS)


def _front_matter_end(lines: list[str]) -> int:
    """The number of lines of a leading YAML front matter block ("---" ... "---"), or 0."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for n, line in enumerate(lines[1:], start=2):
        if line.rstrip() in ("---", "..."):
            return n
    return 0


def _top_level_blocks(tokens: list[Token]) -> list[tuple[int, int, list[Token]]]:
    """(first line, last line, tokens) of each top-level block, lines 0-based and half-open as markdown-it maps."""
    blocks: list[tuple[int, int, list[Token]]] = []
    start = 0
    while start < len(tokens):
        token = tokens[start]
        end = start + 1
        if token.nesting == 1:
            depth = 1
            while end < len(tokens) and depth:
                depth += tokens[end].nesting
                end += 1
        begin, stop = token.map if token.map else (0, 0)
        blocks.append((begin, stop, tokens[start:end]))
        start = end
    return blocks


def _front_fields(text: str, title: str) -> tuple[tuple[str, str], ...] | None:
    """The front matter's fields as (key, text), the title left out when it is the page's; None when the
    block is not a YAML mapping."""
    meta, _body, _start = split_front_matter(text)
    if not meta:
        return None
    return tuple((key, plain(value)) for key, value in meta.items()
                 if not (key == "title" and _same(plain(value), title)))


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def _is_title(tokens: list[Token], title: str) -> bool:
    """A level-1 heading whose text is ``title`` (what the index took as the title)."""
    return bool(title) and len(tokens) == 3 and tokens[0].type == "heading_open" and tokens[0].tag == "h1" \
        and _same(tokens[1].content, title)


def render_markdown(text: str, wanted_line: int | None = None, title: str = "",
                    wikilinks: Mapping[str, str | None] | None = None,
                    unresolved: tuple[str, str, frozenset[str]] | None = None) -> list[Block]:
    """The blocks of a markdown text; when ``title`` is given, a first heading saying it is kind "title". With
    ``wikilinks`` (a wikilink's name as written -> its target's page, or None), wikilinks are links or marked
    unresolved; with ``unresolved`` (the page's project and path, and the vault paths its markdown links lead to
    that hold no document the reader may read), those links are marked too (web/wikilinks.py)."""
    lines = text.split("\n")
    skip = _front_matter_end(lines)
    out: list[Block] = []
    if skip:
        fields = _front_fields(text, title)
        raw = fields is None and "".join(lines[1:skip - 1]).strip()
        html = Markup(f'<pre class="front-matter">{escape(chr(10).join(lines[:skip]))}</pre>') if raw else Markup("")
        marked = wanted_line is not None and 1 <= wanted_line <= skip
        out.append(Block(1, skip, html, marked, "front", fields=fields or ()))
    body = "\n".join(lines[skip:])
    env: dict[str, object] = {} if wikilinks is None else {ENV_KEY: wikilinks, UNRESOLVED_KEY: unresolved}
    parsed = _MD.parse(body, env)
    _name_headings(parsed)
    for n, (begin, stop, tokens) in enumerate(_top_level_blocks(parsed)):
        first, last = begin + 1 + skip, max(stop, begin + 1) + skip
        html = Markup(_MD.renderer.render(tokens, _MD.options, env))
        kind = "title" if n == 0 and _is_title(tokens, title) else ""
        anchor = str(tokens[0].attrGet("id") or "") if kind else ""
        out.append(Block(first, last, html, wanted_line is not None and first <= wanted_line <= last, kind,
                         anchor=anchor))
    return out


def _name_headings(tokens: list[Token]) -> None:
    """Give each heading its id (web/heading_ids.py), from the text it shows."""
    headings = [i for i, t in enumerate(tokens) if t.type == "heading_open"]
    texts = ["".join(c.content for c in tokens[i + 1].children or [] if c.type in ("text", "code_inline"))
             for i in headings]
    for i, found in zip(headings, unique_ids(texts), strict=True):
        tokens[i].attrSet("id", found)


def inline_summary(text: str) -> Markup:
    """A document's summary as one line of HTML: its inline markdown rendered (code, emphasis), links shown as
    their text (a summary's relative link would point nowhere from a listing), raw HTML as text."""
    tokens = _MD.parseInline(text)
    for token in tokens:
        token.children = [c for c in token.children or [] if c.type not in ("link_open", "link_close")]
    return Markup(_MD.renderer.render(tokens, _MD.options, {}))


def numbered_lines(text: str) -> list[str]:
    """The document's lines for the numbered source view (a final newline ends the last line)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]
