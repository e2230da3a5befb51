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
    return {**schema, "type": [schema["type"], "null"]}


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
