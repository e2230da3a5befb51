"""No path or query parameter may carry NUL: no name, path or text in the vault or the store holds it.

A global dependency of the REST application: it refuses the request as a validation error (422, naming
the parameter, as every operation documents), instead of letting a NUL reach the store (PostgreSQL
refuses NUL in text with an error of its own).
"""

from __future__ import annotations

from fastapi import Request
from fastapi.exceptions import RequestValidationError


def refuse_nul(request: Request) -> None:
    for where, params in (("path", list(request.path_params.items())),
                          ("query", request.query_params.multi_items())):
        for name, value in params:
            if isinstance(value, str) and "\x00" in value:
                raise RequestValidationError([{"loc": (where, name), "type": "value_error",
                                               "msg": "must not contain the NUL character (%00); remove it"}])
