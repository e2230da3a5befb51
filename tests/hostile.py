"""Hostile values for the standing hostile-input suite: hypothesis strategies built from JSON Schemas.

A value for a schema is either one that fits it (within its types, enums and bounds) or a hostile one:
huge strings, NUL, lone surrogates, path tricks, regex bombs, wrong types, numbers at the edges.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

HOSTILE_STRINGS: tuple[str, ...] = (
    "",
    " ",
    "\x00",
    "a\x00b\x00c",
    "\ud800",  # a lone surrogate (sent as the JSON escape \ud800)
    "x\udfffy",
    "../../../../etc/passwd",
    "..",
    "/",
    "northwind-advisory/../../..",
    "~bob/../~alice/x.md",
    ".notewell/quickstart-token",
    "back\\slash.md",
    "C:\\Windows\\system32",
    "%2e%2e%2f%2e%2e%2f",
    "a" * 1001,
    "z" * 5000,
    "q" * 200_000,
    "(a|" * 300 + "b" + ")" * 300,
    "(" * 499 + "x" + ")" * 499,
    "(((a+)+)+)+$",
    "(.*){1000}",
    "\\pL{1,1000}\\pN{1,1000}",
    "[" * 50,
    "\\",
    "\n\r\n",
    "'; DROP TABLE documents; --",
    "%_%_%",
    "\u202e\u0301\ufeff",
    "🦄" * 300,
)

HOSTILE_OTHERS: tuple[Any, ...] = (None, True, 0, -1, 2**63, -(2**63), 1e308, 0.5, [], {}, ["x"] * 3, {"a": 1})


def hostile_text() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(HOSTILE_STRINGS), st.text(max_size=40))


def for_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value for ``schema``: mostly what fits it, often something hostile."""
    return st.one_of(_fitting(schema), hostile_text(), st.sampled_from(HOSTILE_OTHERS))


def _fitting(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of(*(_fitting(sub) for sub in schema[key]))
    if schema.get("allOf"):
        return _fitting(schema["allOf"][0])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of(*(_fitting({**schema, "type": k}) for k in kind))
    if kind == "string":
        return hostile_text()
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", -(2**31)))
        high = schema.get("maximum", schema.get("exclusiveMaximum", 2**31))
        return st.one_of(st.integers(int(low), int(high)), st.sampled_from([low, high, low - 1, high + 1]))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(_fitting(schema.get("items", {})), max_size=4)
    if kind == "object":
        return arguments(schema)
    return st.sampled_from(HOSTILE_OTHERS)


def arguments(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """An arguments object for an object schema: its required properties, some optional ones, sometimes an
    unknown one."""
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    fixed = {name: for_schema(sub) for name, sub in properties.items() if name in required}
    optional = {name: for_schema(sub) for name, sub in properties.items() if name not in required}
    extra = st.dictionaries(st.sampled_from(["unknownArgument", "__proto__", "\x00"]), hostile_text(), max_size=1)
    return st.builds(lambda a, b, c: {**a, **b, **c}, st.fixed_dictionaries(fixed, optional=optional),
                     st.just({}) | extra, st.just({}))
