"""Conditional reads (RFC 9110, If-None-Match): a client holding a document's part at a version asks again with
that version's ETag and gets 304 Not Modified, without the text, while the document is unchanged.

A part's answer is a function of the document's version and the URL's query (offset, limit, column), so the
version is a validator of every part of a document: one ETag per version, whichever part was read."""

from __future__ import annotations

from typing import Annotated

from fastapi import Header, Response

IF_NONE_MATCH_MAX_CHARS = 2_000  # about 100 versions: more than a client holds of one document

IfNoneMatch = Annotated[str | None, Header(alias="If-None-Match", max_length=IF_NONE_MATCH_MAX_CHARS,
                                           description="ETags held of the document (or *): 304 while its version "
                                                       "is one of them.")]


def unchanged(if_none_match: str | None, version: str) -> bool:
    """Whether ``If-None-Match`` names ``version`` (its weak comparison: W/"v" and "v" alike) or is ``*`` (the
    document exists). A value that names no version in ETag form matches nothing, so the read is answered in
    full, as RFC 9110 has a server do with a condition it cannot evaluate as true."""
    if if_none_match is None or not version:
        return False
    held = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in held or f'"{version}"' in held


def not_modified(version: str, link: str | None) -> Response:
    """304: no body, the ETag and Link a 200 would carry (RFC 9110: the headers a 200 would have sent)."""
    headers = {"ETag": f'"{version}"'}
    if link is not None:
        headers["Link"] = link
    return Response(status_code=304, headers=headers)
