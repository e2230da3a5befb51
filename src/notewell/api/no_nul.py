"""No path or query parameter may carry NUL, and no path or query value bytes that are not UTF-8: no name, path
or text in the vault or the store holds them.

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
    raw_path: bytes = request.scope.get("raw_path") or b""
    if not _utf8(raw_path):
        name = next((n for n, v in request.path_params.items() if isinstance(v, str) and "\ufffd" in v), "path")
        raise InvalidArgument(name, _NOT_UTF8)
    for pair in (request.scope.get("query_string") or b"").split(b"&"):
        key, _, value = pair.partition(b"=")
        if not _utf8(value):
            raise InvalidArgument(unquote_to_bytes(key).decode("utf-8", "replace"), _NOT_UTF8)


_NOT_UTF8 = "is not UTF-8 text once its %-escapes are decoded; percent-encode the text's UTF-8 bytes"


def _utf8(raw: bytes) -> bool:
    """Whether ``raw`` (a path or a query value as sent, %-escapes and all) is UTF-8 once unescaped."""
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
