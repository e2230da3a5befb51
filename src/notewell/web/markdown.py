"""Documents as HTML: markdown rendered block by block with line anchors, other text as numbered lines.

Sanitised by construction: markdown-it runs with raw HTML off (a <script> in the vault shows as text) and
its link check refuses javascript:, vbscript:, file: and data: (but images) URLs; the page's
Content-Security-Policy blocks anything else. Each top-level block carries an anchor ``L<n>`` for every
source line it covers, so a search hit links to ``#L<n>`` and lands on the block holding that line; the
block with the wanted line is marked.
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup, escape

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    ["table", "strikethrough"])
MARKDOWN_ENDINGS = (".md", ".markdown", ".mdx")


@dataclass(frozen=True)
class Block:
    first: int  # 1-based source line
    last: int
    html: Markup
    marked: bool  # holds the line the reader asked for


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


def render_markdown(text: str, wanted_line: int | None = None) -> list[Block]:
    lines = text.split("\n")
    skip = _front_matter_end(lines)
    out: list[Block] = []
    if skip:
        front = escape("\n".join(lines[:skip]))
        out.append(Block(1, skip, Markup(f'<pre class="front-matter">{front}</pre>'),
                         wanted_line is not None and 1 <= wanted_line <= skip))
    body = "\n".join(lines[skip:])
    env: dict[str, object] = {}
    for begin, stop, tokens in _top_level_blocks(_MD.parse(body, env)):
        first, last = begin + 1 + skip, max(stop, begin + 1) + skip
        html = Markup(_MD.renderer.render(tokens, _MD.options, env))
        out.append(Block(first, last, html, wanted_line is not None and first <= wanted_line <= last))
    return out


def numbered_lines(text: str) -> list[str]:
    """The document's lines for the numbered source view (a final newline ends the last line)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]
