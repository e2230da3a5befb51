"""The access matrix through REST: each role and grant, token kind (user-scoped, bound to the project asked
about, bound to another project) and scope, against each kind of resource, with real tokens over real HTTP
on both backends. ``expected`` restates the rules (docs/security.md) on its own, not from the code."""

from __future__ import annotations

import itertools
from typing import Any

from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER
from rest_world import BOUND, RestWorld

OTHER = "handbook"  # an ordinary project: staff and admin see it, the members hold no grant on it
PEOPLE = {"alice": "read", "dave": "write", "bob": None, "staff": None, "admin": None}  # grant on BOUND
ROLES = {"alice": "member", "dave": "member", "bob": "member", "staff": "staff", "admin": "admin"}
KINDS = ("user-scoped", "bound-here", "bound-elsewhere")
SCOPE_SETS = (("knowledge:read",), ("memory:read",), ("memory:write",), ("knowledge:write",),
              ("knowledge:read", "memory:read", "memory:write"))
# resource -> (method, path, body, the scope it needs, what it touches)
RESOURCES: dict[str, tuple[str, str, dict[str, Any] | None, str, str]] = {
    "project documents": ("GET", f"/projects/{BOUND}/documents", None, "knowledge:read", "read project"),
    "a document's lines": ("GET", f"/projects/{BOUND}/documents/pricing-policy.md?limit=2", None,
                           "knowledge:read", "read project"),
    "search in the project": ("GET", f"/search?q=rate&project={BOUND}", None, "knowledge:read", "read project"),
    "own home": ("GET", "/projects/~{me}/documents", None, "knowledge:read", "own home"),
    "another person's home": ("GET", "/projects/~{other}/documents", None, "knowledge:read", "other home"),
    "project memories": ("GET", f"/memories?project={BOUND}", None, "memory:read", "read project"),
    "write a memory to the project": ("POST", "/memories", {"project": BOUND}, "memory:write", "write project"),
}


def visible(person: str, kind: str) -> bool:
    """Whether the token sees BOUND: members need a grant, staff and admin see every ordinary project; a
    bound token sees its own project only."""
    if kind == "bound-elsewhere":
        return False
    return ROLES[person] in ("staff", "admin") or PEOPLE[person] is not None


def expected(person: str, kind: str, scopes: tuple[str, ...], resource: str) -> int:
    _, _, _, needed, touches = RESOURCES[resource]
    if needed not in scopes:
        return 403  # a scope is the token's own: it is checked before anything about the project
    if touches == "own home":
        return 200 if kind == "user-scoped" else 404  # a bound token sees nothing beyond its project
    if touches == "other home":
        return 404  # nobody, admin included, sees another person's home
    if not visible(person, kind):
        return 404
    if touches == "write project":
        return 201 if PEOPLE[person] == "write" or ROLES[person] == "admin" else 403
    return 200


def test_every_role_token_kind_and_scope_against_every_resource(rest: RestWorld) -> None:
    rt = rest.runtime
    checked = 0
    mismatches: list[str] = []
    for person, kind, scopes in itertools.product(PEOPLE, KINDS, SCOPE_SETS):
        bound = {"user-scoped": None, "bound-here": BOUND, "bound-elsewhere": OTHER}[kind]
        if bound is not None and not rt.authorization.allowed(user_principal(
                rt.administration.user(LOCAL_OWNER, f"{person}@northwind.test")), "project:see", bound):
            continue  # no token can be bound to a project its person cannot see
        secret = rt.administration.mint_token(LOCAL_OWNER, f"{person}@northwind.test", scopes, project_id=bound).secret
        other = "bob" if person != "bob" else "alice"
        for resource, (method, path, body, _, _) in RESOURCES.items():
            payload = {**body, "content": f"{person} {kind} {'+'.join(scopes)} {checked}"} if body else None
            answer = rest.call(method, path.format(me=person, other=other), secret, json=payload)
            want = expected(person, kind, scopes, resource)
            checked += 1
            if answer.status_code != want:
                mismatches.append(f"{person} {kind} {scopes} {resource}: {answer.status_code} != {want} "
                                  f"{answer.text[:160]}")
            elif want == 403 and RESOURCES[resource][3] not in scopes:
                assert answer.json()["scope"] == RESOURCES[resource][3], answer.text  # names the missing scope
    assert not mismatches, "\n".join(mismatches)
    assert checked == 55 * len(RESOURCES)  # 5 people x 3 kinds x 5 scope sets, less the 20 unmintable bindings
