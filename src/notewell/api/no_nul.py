"""No path or query parameter may carry NUL: no name, path or text in the vault or the store holds it.

A global dependency of the REST application: it refuses the request as invalid arguments (400, naming
the parameter, as every operation documents), instead of letting a NUL reach the store (PostgreSQL
refuses NUL in text with an error of its own).
"""

from __future__ import annotations

from fastapi import Request

from notewell.errors import InvalidArgument


def refuse_nul(request: Request) -> None:
    for name, value in (*request.path_params.items(), *request.query_params.multi_items()):
        if isinstance(value, str) and "\x00" in value:
            raise InvalidArgument(name, "must not contain the NUL character (%00); remove it")
