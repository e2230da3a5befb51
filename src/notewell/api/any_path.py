"""A document's path in a route takes any character, a line break included, so that the service says what is
wrong with it (a 400 naming ``path``); Starlette's own path convertor (``.*``) matched no route for a line break,
and the answer was the 404 of an unknown URL."""

from __future__ import annotations

from starlette.convertors import PathConvertor, register_url_convertor


class AnyPathConvertor(PathConvertor):
    regex = r"(?s:.*)"


register_url_convertor("anypath", AnyPathConvertor())
DOCUMENT = "/projects/{project}/documents/{path:anypath}"
