"""Conditional reads (RFC 9110, section 13): a client holding a document's part at a version asks again with that
version's ETag in If-None-Match and gets 304 Not Modified, without the text, while the document is unchanged; a
read with If-Match naming a version the document no longer has is 412, as a write's.

A part's answer is a function of the document's version and the URL's query (offset, limit, column), so the
version is a validator of every part of a document: one ETag per version, whichever part was read. The
conditions are evaluated after the read's permission check (a document the caller may not read is 404 whatever
they name), If-Match first (strong comparison), then If-None-Match (weak), each header's lines read as one list."""

from __future__ import annotations

from typing import Annotated

from fastapi import Header, Request, Response

from notewell.api.problems import problem

CONDITION_MAX_CHARS = 2_000  # about 100 versions: more than a client holds of one document

IfNoneMatch = Annotated[str | None, Header(alias="If-None-Match", max_length=CONDITION_MAX_CHARS,
                                           description="ETags held of the document (or *): 304 while its version "
                                                       "is one of them.")]
IfMatchRead = Annotated[str | None, Header(alias="If-Match", max_length=CONDITION_MAX_CHARS,
                                           description="ETags the read is meant for (or *): 412 when the "
                                                       "document's version is none of them.")]


def _tags(request: Request, name: str) -> list[str] | None:
    """The entity tags of every ``name`` line of the request, as one list (RFC 9110, 5.3); None without one."""
    lines = request.headers.getlist(name)
    if not lines:
        return None
    return [tag.strip() for line in lines for tag in line.split(",") if tag.strip()]


def answered(request: Request, version: str, link: str | None) -> Response | None:
    """412 when If-Match names no version the document has, 304 when If-None-Match names its version, None when
    the read is to be answered in full. A value that is no list of ETags matches nothing: If-Match is then 412
    and If-None-Match answers in full, as RFC 9110 has a server do with a condition that does not hold."""
    if not version:
        return None
    current = f'"{version}"'
    held = _tags(request, "if-match")
    if held is not None and "*" not in held and current not in held:  # strong: W/"v" is no match
        return problem(412, f'If-Match: the document is at version {current}, not {", ".join(held)[:200]}; read it '
                            "again, or send If-Match with the ETag of the last read", field="If-Match",
                       headers={"ETag": current})
    unchanged = _tags(request, "if-none-match")
    if unchanged is not None and ("*" in unchanged or current in (t.removeprefix("W/") for t in unchanged)):
        headers = {"ETag": current}
        if link is not None:
            headers["Link"] = link
        return Response(status_code=304, headers=headers)
    return None
