"""The permission rules, all of them, as pure functions of a Principal, a Project and a grant level.

Visibility (what a caller sees at all):
- a token bound to a project sees that project only (and only if it would see it anyway);
- a home is seen by its owner alone: staff and admin never see another person's home;
- a member sees each ordinary project where they hold a grant; staff and admin see every ordinary one;
- archived projects are hidden from everyone, except from an admin who asks for them.

Rights on what is visible: reading needs nothing more; writing needs a write grant, ownership of the
home, or the admin role; managing (users, grants, tokens, project settings) needs the admin role and
the admin scope on a user-scoped token, and applies to ordinary projects only.

Scopes narrow every decision: the effective right is visibility ∩ the token's binding ∩ its scopes.
The AccessService feeds these functions from the store; nothing else decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from notewell.access.principal import SCOPES, Principal
from notewell.errors import Forbidden, InvalidArgument
from notewell.records.identity import ROLES, GrantLevel, Project, Role

Action = Literal["list", "read", "search", "write", "manage"]
ACTIONS: tuple[Action, ...] = ("list", "read", "search", "write", "manage")
ACTION_SCOPES: dict[Action, str] = {
    "list": "knowledge:read", "read": "knowledge:read", "search": "knowledge:read",
    "write": "knowledge:write", "manage": "admin",
}
ADMIN_SCOPE = "admin"
ROLE_SCOPES: dict[Role, frozenset[str]] = {
    "member": frozenset(SCOPES) - {ADMIN_SCOPE},
    "staff": frozenset(SCOPES) - {ADMIN_SCOPE},
    "admin": frozenset(SCOPES),
}


def is_visible(p: Principal, project: Project, grant: GrantLevel | None, *, include_archived: bool = False) -> bool:
    if p.bound_project is not None and project.id != p.bound_project:
        return False
    if project.status == "archived" and not (include_archived and p.role == "admin"):
        return False
    if project.kind == "home":
        return project.owner_user_id is not None and project.owner_user_id == p.user_id
    if p.role in ("staff", "admin"):
        return True
    return grant is not None


def owns_home(p: Principal, project: Project) -> bool:
    return project.kind == "home" and project.owner_user_id is not None and project.owner_user_id == p.user_id


def may_write(p: Principal, project: Project, grant: GrantLevel | None) -> bool:
    """Write right on a project, scopes aside: visible, and a write grant, the own home, or the admin role."""
    if not is_visible(p, project, grant):
        return False
    return grant == "write" or owns_home(p, project) or p.role == "admin"


def may_manage(p: Principal) -> bool:
    """Admin role with the admin scope on a user-scoped token, or the local owner."""
    if p.local_owner:
        return True
    return p.role == "admin" and p.has_scope(ADMIN_SCOPE) and p.bound_project is None


def may_manage_project(p: Principal, project: Project) -> bool:
    """Settings, archiving and grants of a project: managers only, ordinary projects only."""
    return may_manage(p) and project.kind == "ordinary"


def decide(action: Action, p: Principal, project: Project, grant: GrantLevel | None) -> bool:
    """The one answer to "may p do action on project", scopes included."""
    if action == "manage":
        return may_manage_project(p, project)
    if not p.has_scope(ACTION_SCOPES[action]):
        return False
    if action == "list":
        return is_visible(p, project, grant, include_archived=True)
    if action in ("read", "search"):
        return is_visible(p, project, grant)
    return may_write(p, project, grant)


def check_role(role: str) -> Role:
    if role not in ROLES:
        raise InvalidArgument("--role", f"{role!r} is not a role; choose one of {', '.join(ROLES)}")
    return role


def check_token_scopes(role: Role, scopes: Iterable[str], *, project_bound: bool) -> tuple[str, ...]:
    """The scopes, in canonical order, if a token of a ``role`` user may hold them; else a clear error."""
    wanted = {s.strip() for s in scopes if s.strip()}
    if not wanted:
        raise InvalidArgument("--scopes", f"name at least one scope, from {', '.join(SCOPES)}")
    unknown = sorted(wanted - set(SCOPES))
    if unknown:
        raise InvalidArgument("--scopes", f"unknown scope {', '.join(unknown)}; choose from {', '.join(SCOPES)}")
    refused = sorted(wanted - ROLE_SCOPES[role])
    if refused:
        raise Forbidden(f"--scopes: a {role} may not hold {', '.join(refused)}; only admins hold the admin scope")
    if project_bound and ADMIN_SCOPE in wanted:
        raise Forbidden("--scopes: the admin scope needs a user-scoped token; drop --project or the admin scope")
    return tuple(s for s in SCOPES if s in wanted)


def check_own_token(p: Principal, scopes: Iterable[str], project_id: str | None) -> tuple[str, ...]:
    """The scopes, in canonical order, of a token p may mint for themselves: no scope beyond the role,
    none beyond p's own token, and a project-bound caller binds the new token to the same project."""
    wanted = {s.strip() for s in scopes if s.strip()}
    if not wanted:
        raise InvalidArgument("scopes", f"name at least one scope, from {', '.join(SCOPES)}")
    unknown = sorted(wanted - set(SCOPES))
    if unknown:
        raise InvalidArgument("scopes", f"unknown scope {', '.join(unknown)}; choose from {', '.join(SCOPES)}")
    beyond_role = sorted(wanted - ROLE_SCOPES[p.role])
    if beyond_role:
        raise Forbidden(f"Forbidden: scopes: a {p.role} may not hold {', '.join(beyond_role)}; "
                        "only admins hold the admin scope")
    beyond_token = sorted(wanted - p.scopes)
    if beyond_token:
        raise Forbidden(f"Forbidden: scopes: this token lacks {', '.join(beyond_token)}, so it cannot mint a token "
                        "that holds it; a token never gives more than its holder has")
    if p.bound_project is not None and project_id != p.bound_project:
        raise Forbidden(f"Forbidden: project: this token is bound to {p.bound_project}, so the tokens it mints "
                        f"must be bound to {p.bound_project} too")
    if project_id is not None and ADMIN_SCOPE in wanted:
        raise Forbidden("Forbidden: scopes: the admin scope needs a user-scoped token; drop the project or "
                        "the admin scope")
    return tuple(s for s in SCOPES if s in wanted)


def sees_memory(p: Principal, private_to: str | None) -> bool:
    """Within a project the caller reads: a private memory is its author's alone, whatever the caller's role."""
    return private_to is None or private_to == p.user_id
