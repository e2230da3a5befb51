"""A query parameter the operation does not take is refused, naming it and the one that was meant.

FastAPI ignores query parameters an operation does not declare, so a misspelt one was silently dropped:
``GET /api/v1/context?path=a.md&max_tokens=100`` answered with the default budget of tokens, since REST
spells it ``maxTokens``. A global dependency of the REST application (as ``refuse_nul``): it runs after
routing, so it knows the operation's own parameters, its dependencies' included, by the names a request
uses (their aliases).
"""

from __future__ import annotations

import difflib

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from notewell.errors import UnknownParameter


def refuse_unknown_query(request: Request) -> None:
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    known = frozenset(_names(route.dependant))
    for name in request.query_params:
        if name not in known:
            raise UnknownParameter(name, f"is not a parameter of {route.methods and sorted(route.methods)[0]} "
                                        f"{route.path}; {_hint(name, known)}")


def _names(dependant: Dependant) -> list[str]:
    return [*(p.alias for p in dependant.query_params), *(n for d in dependant.dependencies for n in _names(d))]


def _hint(name: str, known: frozenset[str]) -> str:
    if not known:
        return "this operation takes no query parameters"

    def plain(word: str) -> str:
        return word.replace("_", "").replace("-", "").lower()

    meant = [k for k in sorted(known) if plain(k) == plain(name)] or difflib.get_close_matches(name, sorted(known), 1)
    if meant:
        return f"did you mean {meant[0]}?"
    return "it takes " + ", ".join(sorted(known))
