"""Small builders for the JSON Schemas of tool inputs and results (draft 2020-12), and the schema of a record
shown by both doors derived from its model (``record``, ``properties``): the model's JSON Schema turned into
this door's dialect (one type per schema, anyOf with null for nullable, definitions inlined, every object
closed and its fields required), with this door's descriptions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel

JSON_SCHEMA = "https://json-schema.org/draft/2020-12/schema"
JsonObject = dict[str, Any]


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


# Records shown by both doors: a record's model (notewell.records.models) gives the field set, the types and
# the nullability; this door adds only its words (a description per field) and, where a product's page fixes
# them, its own names, a narrower enum, or a field it leaves out or adds.

@dataclass(frozen=True)
class Shown:
    """How this door shows one field of a record.

    ``name`` is this door's name for it when not the model's; ``items`` describes each item of a list of
    plain values; ``of`` is how the record (or each record of a list) the field holds is shown; ``extra``
    are keywords the door adds (an enum narrower than the record's type); ``absent_when_null``: the answer
    leaves the field out instead of giving null (the schema is then the type alone, and not required).
    """

    description: str = ""
    name: str | None = None
    items: str = ""
    of: View | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    absent_when_null: bool = False


@dataclass(frozen=True)
class View:
    """How this door shows a record: its fields, in this door's order, by the model's (camelCase) name,
    each a description or a ``Shown``; a value that is a schema is a field this door adds (the record has
    no such field). ``omit`` names the record's fields this door leaves out: every field of the record is
    either shown or omitted, so a field added to the record fails here until each door has decided.
    ``required`` defaults to every field shown (but those absent when null). ``by_alias`` False: the fields
    go by the record's own (snake_case) names, as XMemo's page has them, here and in the views inside."""

    words: Mapping[str, str | Shown | JsonObject]
    omit: Sequence[str] = ()
    required: Sequence[str] | None = None
    closed: bool = True
    by_alias: bool = True


def properties(model: type[BaseModel], view: View) -> dict[str, Any]:
    """The properties of ``model``'s record as ``view`` shows them, in this door's dialect."""
    schema = model.model_json_schema(by_alias=view.by_alias)
    return _properties(schema, schema.get("$defs", {}), view)


def record(model: type[BaseModel], view: View, description: str = "") -> dict[str, Any]:
    """The object schema of ``model``'s record as ``view`` shows it."""
    schema = model.model_json_schema(by_alias=view.by_alias)
    return _record(schema, schema.get("$defs", {}), view, description)


def required_of(view: View) -> list[str]:
    """The names ``view`` requires: ``view.required``, else every field shown but those absent when null."""
    if view.required is not None:
        return list(view.required)
    return [_name(key, said) for key, said in view.words.items()
            if not (isinstance(said, Shown) and said.absent_when_null)]


def _name(key: str, said: str | Shown | JsonObject) -> str:
    return said.name or key if isinstance(said, Shown) else key


def _record(schema: JsonObject, defs: JsonObject, view: View, description: str) -> dict[str, Any]:
    return obj(_properties(schema, defs, view), required_of(view), closed=view.closed, description=description)


def _properties(schema: JsonObject, defs: JsonObject, view: View) -> dict[str, Any]:
    fields: JsonObject = _resolve(schema, defs)["properties"]
    shown = {key for key, said in view.words.items() if not isinstance(said, dict)}
    problems = {
        "unknown": sorted((shown | set(view.omit)) - set(fields)),
        "neither shown nor omitted": sorted(set(fields) - shown - set(view.omit)),
        "both shown and omitted": sorted(shown & set(view.omit)),
        "added but the record's": sorted(k for k, said in view.words.items() if isinstance(said, dict) and k in fields),
    }
    if any(problems.values()):
        wrong = "; ".join(f"{what} {names}" for what, names in problems.items() if names)
        raise ValueError(f"{schema.get('title')}: the view does not match the record's fields: {wrong}")
    out: dict[str, Any] = {}
    for key, said in view.words.items():
        if isinstance(said, dict):
            out[key] = said
        else:
            out[_name(key, said)] = _field(fields[key], defs, said if isinstance(said, Shown) else Shown(said))
    return out


def _resolve(schema: JsonObject, defs: JsonObject) -> JsonObject:
    ref = schema.get("$ref")
    return defs[ref.rpartition("/")[2]] if isinstance(ref, str) else schema


def _field(schema: JsonObject, defs: JsonObject, said: Shown) -> JsonObject:
    branches = schema.get("anyOf")
    if branches:
        values = [b for b in branches if b != {"type": "null"}]
        if len(values) != 1 or len(branches) != 2:
            raise ValueError(f"{schema}: only a type or null is shown")
        if said.absent_when_null:
            return _field(values[0], defs, replace(said, absent_when_null=False))
        return nullable(_field(values[0], defs, said))
    schema = _resolve(schema, defs)
    kind = schema.get("type")
    if kind == "object":
        if said.of is None:
            raise ValueError(f"{schema.get('title')}: a record field needs the view of its record (of=...)")
        return _record(schema, defs, said.of, said.description)
    if kind == "array":
        item = Shown(said.items) if said.of is None else Shown(of=said.of)
        return array(_field(schema["items"], defs, item), said.description)
    if kind not in ("string", "integer", "number", "boolean"):
        raise ValueError(f"{schema}: not a type this door shows")
    enum = {"enum": list(schema["enum"])} if "enum" in schema else {}
    return {"type": kind, "description": said.description, **enum, **said.extra}
