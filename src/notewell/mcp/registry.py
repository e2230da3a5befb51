"""Every toolset the server can offer, in tools/list order.

Adding a toolset: write notewell/mcp/tools/<name>.py defining ``TOOLSET = Toolset(...)`` and add it to
``_ALL`` below. ``notewell serve --toolsets`` and ``notewell docs`` pick it up from here.
"""

from __future__ import annotations

from collections.abc import Sequence

from notewell.errors import InvalidArgument
from notewell.mcp.tools import brain, knowledge, memory, notes
from notewell.mcp.toolset import Toolset

_ALL: tuple[Toolset, ...] = (
    knowledge.TOOLSET,
    notes.TOOLSET,
    memory.TOOLSET,
    brain.TOOLSET,
)

TOOLSETS: dict[str, Toolset] = {t.name: t for t in _ALL}


def choose(names: Sequence[str] | None) -> list[Toolset]:
    """The toolsets ``names`` picks (comma-separated items allowed), in registry order; None or "all": every one."""
    wanted = [n.strip() for item in (names or []) for n in item.split(",") if n.strip()]
    if not wanted or wanted == ["all"]:
        return list(_ALL)
    unknown = [n for n in wanted if n not in TOOLSETS]
    if unknown:
        raise InvalidArgument("--toolsets", f"unknown toolset {unknown[0]!r}; choose from {', '.join(TOOLSETS)}, all")
    return [t for t in _ALL if t.name in wanted]
