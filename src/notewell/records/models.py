"""One pydantic model per record: the shape both doors show of it, in camelCase.

``record_model(Record)`` derives the model from a record dataclass (nested records become nested
models), once per record and cached, so every door that shows a record shows the same model: the REST
door answers with it and publishes it in its OpenAPI document, and the MCP door derives the output
schemas of its tools from its JSON Schema (``notewell.mcp.schema.record``), each door adding only its
own words (descriptions, the names a product's page fixes). The field set, types and nullability are
the record's, never a second copy to keep in step. The CLI's --json uses the same camelCase names.
Like the rest of ``notewell.records`` it imports nothing of notewell: a record is handed in.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import operator
import types
import typing
from collections.abc import Sequence
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, create_model
from pydantic.alias_generators import to_camel

CAMEL = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True,
                   serialize_by_alias=True, from_attributes=True)
_models: dict[type, type[BaseModel]] = {}


def _shape(hint: Any) -> Any:
    """The pydantic-side type for a record field's type: records become their models, tuples lists."""
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return record_model(hint)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        return functools.reduce(operator.or_, [_shape(a) for a in args])
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return tuple.__class_getitem__(tuple(_shape(a) for a in args))  # a fixed pair stays a pair
    if origin in (list, tuple, frozenset, set, Sequence, collections.abc.Sequence):
        return list.__class_getitem__(_shape(args[0]))
    if origin is dict:
        return dict.__class_getitem__((args[0], _shape(args[1])))
    return hint


def record_model(record: type, name: str | None = None, **extra: Any) -> type[BaseModel]:
    """The camelCase model of a record dataclass (cached), with ``extra`` fields as (type, default) pairs."""
    if record in _models and not extra and name is None:
        return _models[record]
    hints = typing.get_type_hints(record)
    fields: dict[str, Any] = {f.name: (_shape(hints[f.name]), ...) for f in dataclasses.fields(record)}
    fields.update(extra)
    doc = (record.__doc__ or "").strip()
    if doc.startswith(f"{record.__name__}("):  # the signature dataclasses writes when there is no docstring
        doc = ""
    model: type[BaseModel] = create_model(name or record.__name__, __config__=CAMEL, __doc__=doc or None, **fields)
    if not extra and name is None:
        _models[record] = model
    return model


def dump(model: type[BaseModel], value: object) -> dict[str, Any]:
    """``value`` (a record) as the JSON object the API answers with."""
    return model.model_validate(value).model_dump(mode="json", by_alias=True)
