"""The ``id`` of each heading of a rendered document, so that a link's ``#heading`` lands on it.

GitHub's rule, which most markdown links are written for: the heading's text lower-cased, every character
other than a letter, a digit, a space, ``-`` or ``_`` dropped, spaces made ``-``; a repeat gets ``-1``,
``-2``, ... (as does an id the page itself uses). A wikilink's anchor is the heading as written (Obsidian's
``[[note#Some heading]]``), and a markdown link's may be percent-encoded (``#Some%20heading``): both go
through the same rule, which leaves an id unchanged, so every spelling meets the same id. A line anchor
(``#L12``, the page's own) and a block reference (``#^id``) are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote

PAGE_IDS = frozenset({"main", "backlinks-heading", "about-heading"})  # the document page's own (templates)
_LINE_ANCHOR = re.compile(r"L[0-9]+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def heading_id(text: str) -> str:
    """The id a heading saying ``text`` is given, before repeats are numbered."""
    kept = "".join(c for c in text.strip().lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-") or "section"


def unique_ids(texts: Iterable[str]) -> list[str]:
    """The ids of headings saying ``texts``, in order, each one once on the page."""
    taken, out = set(PAGE_IDS), []
    for text in texts:
        base = found = heading_id(text)
        n = 0
        while found in taken:
            n += 1
            found = f"{base}-{n}"
        taken.add(found)
        out.append(found)
    return out


def fragment_for(anchor: str) -> str:
    """The fragment a link's anchor (as written, maybe percent-encoded) points at."""
    return anchor if _LINE_ANCHOR.fullmatch(anchor) else heading_id(unquote(anchor))


def link_with_heading(href: str) -> str:
    """``href`` with its fragment made a heading's id; a URL with a scheme (or ``//host``) is left as written."""
    target, hash_mark, fragment = href.partition("#")
    if not hash_mark or not fragment or unquote(fragment).startswith("^") or _SCHEME.match(href) \
            or href.startswith("//"):
        return href
    return target + "#" + fragment_for(fragment)
