"""A query parameter the operation does not take is refused, naming it and the one that was meant; so is one
given twice that takes one value (FastAPI kept the last: ``?project=a&project=b`` searched b alone).

FastAPI ignores query parameters an operation does not declare, so a misspelt one was silently dropped:
``GET /api/v1/context?path=a.md&max_tokens=100`` answered with the default budget of tokens, since REST
spells it ``maxTokens``. A global dependency of the REST application (as ``refuse_nul``): it runs after
routing, so it knows the operation's own parameters, its dependencies' included, by the names a request
uses (their aliases).
"""

from __future__ import annotations

import difflib
from types import UnionType
from typing import Union, get_args, get_origin

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from notewell.errors import InvalidArgument, UnknownParameter


def refuse_unknown_query(request: Request) -> None:
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    params = _params(route.dependant)  # name -> whether it takes several values
    known = frozenset(params)
    for name in request.query_params:
        if name not in known:
            raise UnknownParameter(name, f"is not a parameter of {route.methods and sorted(route.methods)[0]} "
                                        f"{route.path}; {hint(name, known)}")
        given = len(request.query_params.getlist(name))
        if given > 1 and not params[name]:
            raise InvalidArgument(name, f"is given {given} times; it takes one value: give it once")


def _takes_several(annotation: object) -> bool:
    """A list (or one in a union with None): a parameter that may be repeated (``tag=a&tag=b``)."""
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        return any(_takes_several(arg) for arg in get_args(annotation))
    return origin in (list, tuple, set, frozenset)


def _params(dependant: Dependant) -> dict[str, bool]:
    own = {p.alias: _takes_several(p.field_info.annotation) for p in dependant.query_params}
    for d in dependant.dependencies:
        own |= _params(d)
    return own


def hint(name: str, known: frozenset[str]) -> str:
    """The name that was meant, or the names there are (of query parameters, or of a body's fields)."""
    if not known:
        return "this operation takes no query parameters"

    def plain(word: str) -> str:
        return word.replace("_", "").replace("-", "").lower()

    meant = [k for k in sorted(known) if plain(k) == plain(name)] or difflib.get_close_matches(name, sorted(known), 1)
    if meant:
        return f"did you mean {meant[0]}?"
    return "it takes " + ", ".join(sorted(known))
