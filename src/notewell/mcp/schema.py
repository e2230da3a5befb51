"""Small builders for the JSON Schemas of tool inputs and results (draft 2020-12)."""

from __future__ import annotations

from typing import Any

JSON_SCHEMA = "https://json-schema.org/draft/2020-12/schema"


def string(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def integer(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "description": description, **extra}


def boolean(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "boolean", "description": description, **extra}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema or null, as anyOf branches with one type each: a ``type`` array is legal JSON Schema but
    less portable (clients that map schemas onto a one-type dialect reject it; the Inspector warns)."""
    described = {k: v for k, v in schema.items() if k not in ("description", "title")}
    outer = {k: v for k, v in schema.items() if k in ("description", "title")}
    return {"anyOf": [described, {"type": "null"}], **outer}


def array(items: dict[str, Any], description: str = "") -> dict[str, Any]:
    return {"type": "array", "items": items, **({"description": description} if description else {})}


def obj(properties: dict[str, Any], required: list[str] | None = None, *, closed: bool = True,
        description: str = "") -> dict[str, Any]:
    """An object schema; ``required`` defaults to every property."""
    schema: dict[str, Any] = {"type": "object", "properties": properties,
                              "required": list(properties) if required is None else required}
    if closed:
        schema["additionalProperties"] = False
    if description:
        schema["description"] = description
    return schema


def tool_input(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "$schema": JSON_SCHEMA, "properties": properties, "required": required}


def tool_output(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"$schema": JSON_SCHEMA, "type": "object", "properties": properties, "required": required,
            "additionalProperties": False}
