"""How deeply a JSON argument may nest, on every door: one limit, measured without recursion.

An argument nested deeper than JSON_DEPTH_MAX (objects and arrays inside one another) is invalid arguments
naming it: REST answers 400 naming the field, MCP -32602 naming the argument. The limit sits far below what
every reader of a stored value copes with (the JSON encoders, pydantic's serializer, the web templates, the
search text of an event), so whatever was accepted once can always be read back.
"""

from __future__ import annotations

from typing import Any, Final

from notewell.errors import InvalidArgument

JSON_DEPTH_MAX: Final = 32
"""The deepest nesting of objects and arrays any JSON argument may have (a scalar is 0, ``{}`` is 1)."""


def json_depth(value: Any, stop_above: int = JSON_DEPTH_MAX) -> int:
    """How deeply ``value`` nests objects and arrays; counting stops at ``stop_above + 1`` (too deep already)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        level += 1
        if level > stop_above:
            return level
        deepest = max(deepest, level)
        stack.extend((child, level) for child in children)
    return deepest


def check_json_depth(field: str, value: Any) -> None:
    """InvalidArgument naming ``field`` when ``value`` nests deeper than JSON_DEPTH_MAX."""
    if json_depth(value) > JSON_DEPTH_MAX:
        raise InvalidArgument(field, f"is nested more than {JSON_DEPTH_MAX} levels deep (objects and arrays "
                                     f"inside one another); a JSON argument may nest at most {JSON_DEPTH_MAX}: "
                                     "send a flatter value")
