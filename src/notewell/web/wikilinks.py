"""Wikilinks on the rendered document page: ``[[name|label]]`` as a link to the document it resolves to, or as
marked text when it names none the reader may read (what the links service answered for this document).

A markdown-it inline rule, run before the link rule (so ``[[x]]`` is not read as a link reference) and after
code spans (so a wikilink in code stays code). Its targets come in the render's ``env`` under ``wikilinks``: the
name as written to the page of its target, or None. A markdown link written vault-absolute (``/project/path``)
is pointed at that document's page too; a relative one already works, the page's URL mirroring the vault.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import escape

from notewell.vault.note_links import MAX_TARGET_CHARS, markdown_target, wikilink_parts
from notewell.web.heading_ids import fragment_for, link_with_heading

ENV_KEY = "wikilinks"
UNRESOLVED_KEY = "unresolved"  # (project, path, the vault paths of its markdown links that lead to no document)


def document_page(vault_path: str) -> str:
    """The URL of the page of the document at ``vault_path`` (project first)."""
    project, _, rel = vault_path.partition("/")
    return f"/p/{quote(project, safe='')}/doc/{quote(rel)}"


def _wikilink(state: StateInline, silent: bool) -> bool:
    src, start = state.src, state.pos
    if ENV_KEY not in state.env or not src.startswith("[[", start):  # a summary: no targets, left as written
        return False
    end = src.find("]]", start + 2)
    if end < 0 or end - start > MAX_TARGET_CHARS * 2 or "\n" in src[start:end] or "[" in src[start + 2 : end]:
        return False
    parts = wikilink_parts(src[start + 2 : end])
    if parts is None or parts[0] not in state.env[ENV_KEY]:  # beyond the links the page knows: left as written
        return False
    if not silent:
        name, anchor, label = parts
        shown = label or (f"{name}#{anchor}" if anchor else name)
        targets: Mapping[str, str | None] = state.env[ENV_KEY]
        href = targets[name]
        if href is None:
            token = state.push("html_inline", "", 0)  # escaped here: never the vault's markup
            token.content = f'<span class="unresolved" title="unresolved">{escape(shown)}</span>'
        else:
            opening = state.push("link_open", "a", 1)
            fragment = f"#{fragment_for(anchor)}" if anchor and not anchor.startswith("^") else ""
            opening.attrSet("href", href + fragment)
            opening.meta["wikilink"] = True  # its href is a page already
            state.push("text", "", 0).content = shown
            state.push("link_close", "a", -1)
    state.pos = end + 2
    return True


def _unresolved(href: str, env: EnvType) -> bool:
    """Whether a markdown link of the page leads to a vault path the index found no readable document at (the
    page's env holds its project, its path and those targets, as note_links reads them)."""
    found = env.get(UNRESOLVED_KEY)
    if not found:
        return False
    project, source, targets = found
    target = markdown_target(project, source, href)
    return target is not None and target[0] in targets


def _relative_page(href: str, env: EnvType) -> str | None:
    """The page of the document a relative markdown link names from the page's own document (``../other/x.md``
    into another project too: the browser would resolve it against the page's URL, /p/PROJECT/doc/..., and
    leave the project at the first ``..``); None for a URL, an anchor alone, or a page with no document."""
    found = env.get(UNRESOLVED_KEY)
    if not found or href.startswith(("#", "//")):
        return None
    project, source, _ = found
    target = markdown_target(project, source, href)
    if target is None:
        return None
    _, hash_mark, fragment = href.partition("#")
    return document_page(target[0]) + hash_mark + fragment


def use_wikilinks(md: MarkdownIt) -> MarkdownIt:
    """``md`` reading wikilinks, and pointing vault-absolute markdown links (``/project/path``) at the page of
    that document."""
    md.inline.ruler.before("link", "wikilink", _wikilink)

    def link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict,
                  env: EnvType) -> str:
        href = tokens[idx].attrGet("href")
        if isinstance(href, str) and not tokens[idx].meta.get("wikilink") and _unresolved(href, env):
            tokens[idx].attrSet("class", "unresolved")  # a link to no document the reader may read: marked
            tokens[idx].attrSet("title", "unresolved")
        if isinstance(href, str) and not tokens[idx].meta.get("wikilink"):
            href = link_with_heading(href)  # its anchor meets the heading's id
            if href.startswith("/") and not href.startswith("//"):
                target, hash_mark, fragment = href.partition("#")  # the anchor stays an anchor, the query goes
                page = document_page(unquote(target.partition("?")[0].lstrip("/")))
                href = page + hash_mark + fragment
            else:
                href = _relative_page(href, env) or href
            tokens[idx].attrSet("href", href)
        return self.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md
