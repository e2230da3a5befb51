"""No path or query parameter may carry NUL or bytes that are not UTF-8: no name, path or text in the vault or
the store holds them.

A global dependency of the REST application: it refuses the request as invalid arguments (400, naming
the parameter, as every operation documents), instead of letting a NUL reach the store (PostgreSQL
refuses NUL in text with an error of its own), or a percent-encoded byte that is not UTF-8 (``%FF``) be read
as U+FFFD, which Starlette puts in its place: ``q=%FF`` searched for the replacement character.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from fastapi import Request

from notewell.errors import InvalidArgument


def refuse_nul(request: Request) -> None:
    for name, value in (*request.path_params.items(), *request.query_params.multi_items()):
        if isinstance(value, str) and "\x00" in value:
            raise InvalidArgument(name, "must not contain the NUL character (%00); remove it")
    raw: bytes = request.scope.get("query_string", b"")
    if b"%" not in raw:
        return
    for pair in raw.split(b"&"):
        key, _, value = pair.partition(b"=")
        try:
            unquote_to_bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidArgument(unquote_to_bytes(key).decode("utf-8", "replace"),
                                  "is not UTF-8 text once its %-escapes are decoded; percent-encode the text's UTF-8 "
                                  "bytes") from None
