"""A document's neighbourhood as a small SVG drawn on the server (no script library): the document in the
middle, the documents it links to and that link to it around it, each a link to its page.

The map repeats what the lists under it say (they are the text alternative), so it is hidden from assistive
technology and its links are left out of the tab order. Names are escaped; nothing of the vault is markup.
"""

from __future__ import annotations

import math
import posixpath
from collections import Counter
from dataclasses import dataclass
from typing import Final

from markupsafe import Markup, escape

MAP_NODES: Final = 12  # neighbours drawn at most; the lists name every one
WIDTH: Final = 480
HEIGHT: Final = 300
RADIUS: Final = 110
LABEL_CHARS: Final = 22


@dataclass(frozen=True)
class Neighbour:
    path: str  # vault path
    href: str
    outgoing: bool  # the document links to it
    backlink: bool  # it links to the document


def neighbours(outgoing: list[tuple[str, str]], backlinks: list[tuple[str, str]]) -> list[Neighbour]:
    """The distinct documents of (vault path, href) pairs, in the order met, marked by direction; at most MAP_NODES."""
    order: dict[str, tuple[str, bool, bool]] = {}
    for path, href in outgoing:
        order[path] = (href, True, order.get(path, ("", False, False))[2])
    for path, href in backlinks:
        order[path] = (href, order.get(path, ("", False, False))[1], True)
    return [Neighbour(path, href, out, back) for path, (href, out, back) in list(order.items())[:MAP_NODES]]


def _label(path: str, shared: bool = False) -> str:
    """The file name (with its folder when another node has the same name), cut to LABEL_CHARS."""
    name = "/".join(path.split("/")[-2:]) if shared else posixpath.basename(path)
    if len(name) <= LABEL_CHARS:
        return name
    return "…" + name[1 - LABEL_CHARS :] if shared else name[: LABEL_CHARS - 1] + "…"


def link_map(here: str, around: list[Neighbour]) -> Markup:
    """The SVG for the document ``here`` (a vault path) and its neighbours; empty when it has none."""
    if not around:
        return Markup("")
    cx, cy = WIDTH / 2, HEIGHT / 2
    names = Counter(posixpath.basename(node.path) for node in around)
    parts = [f'<svg class="link-map" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
             'aria-hidden="true" focusable="false">']
    for i, node in enumerate(around):
        angle = 2 * math.pi * i / len(around) - math.pi / 2
        x, y = cx + RADIUS * 1.6 * math.cos(angle), cy + RADIUS * math.sin(angle)
        kind = "both" if node.outgoing and node.backlink else "out" if node.outgoing else "back"
        label = _label(node.path, names[posixpath.basename(node.path)] > 1)
        parts.append(f'<line class="edge {kind}" x1="{cx:.1f}" y1="{cy:.1f}" x2="{x:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<a href="{escape(node.href)}" tabindex="-1"><circle class="node" cx="{x:.1f}" cy="{y:.1f}" '
                     f'r="6"/><text x="{x:.1f}" y="{y + 18:.1f}" text-anchor="middle">{escape(label)}'
                     "</text></a>")
    parts.append(f'<circle class="node here" cx="{cx:.1f}" cy="{cy:.1f}" r="9"/><text x="{cx:.1f}" y="{cy + 24:.1f}" '
                 f'text-anchor="middle" class="here">{escape(_label(here))}</text></svg>')
    return Markup("".join(parts))
