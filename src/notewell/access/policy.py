"""The permission rules, all of them: one pure function answers "may p do action on this target".

The shape follows Datasette's permissions: a fixed table of named actions, and one ``refusal()`` (None:
allowed) that every service asks through ``notewell.access.authorization``. A caller's right is the
intersection of what its person may do and what its token allows: the token's project binding narrows
visibility, and each action needs a scope the token holds.

Visibility (what a caller sees at all):
- a token bound to a project sees that project only (and only if it would see it anyway);
- a home is seen by its owner alone: staff and admin never see another person's home;
- a member sees each ordinary project where they hold a grant; staff and admin see every ordinary one;
- archived projects are hidden from everyone, except from an admin listing them (``project:list``).

Rights on what is visible: reading needs nothing more; writing needs a write grant, ownership of the
home, or the admin role; writing a document of the vault needs a write grant or the home whatever the
role (admins and staff write only where they hold write; the local owner, the vault's own command line,
everywhere); changing a memory (supersede, forget) or retiring taught knowledge needs to be
its author, an admin, or a writer of its project; resolving an action item needs that, or to be one of
its assignees; managing (users, grants, tokens, project settings) needs the admin role and the admin
scope on a user-scoped token, and applies to ordinary projects only; carrying the whole store (export,
import, migrate), every home included, is the local owner's alone.

The External Brain's own rules are actions here too: a coding session is its owner's alone (another
person's is answered as missing), and a project-scoped token works only in sessions of its project;
personal brain projects are created in the caller's home, so only a person (not the local owner) on a
user-scoped token who may write their home creates them; the confidence loop and ``supersedes`` touch
only the caller's own knowledge.

Beside the one rule, this module checks the scopes a token may be minted with (``check_token_scopes``,
``check_own_token``): they name fields by their domain name (``scopes``, ``project``), and each door
words the fix in its own terms.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from notewell.access.principal import SCOPES, Principal
from notewell.errors import Forbidden, InvalidArgument
from notewell.records.identity import ROLES, GrantLevel, Project, Role, TokenRecord, User

Action = Literal[
    "project:see",  # the project exists for p (binding a token to it); no scope needed
    "project:list",  # the project is in p's listing: archived ones too, for an admin
    "knowledge:read",  # list, read and search the project's documents and brains
    "knowledge:write",  # the write right with the knowledge:write scope (a write grant, the home, or admin)
    "note:write",  # write, edit, move, delete a document, undo a write: a write grant or the home, admins included
    "memory:read",  # read and search the project's memories
    "memory:write",  # keep a new memory in the project
    "memory:change",  # supersede or forget one memory (the target names its author)
    "sessions:use",  # coding sessions and taught knowledge in a project p sees (the External Brain)
    "sessions:write",  # teach knowledge into the project
    "session:own",  # log to, close or read one coding session (the target names its owner and project)
    "brain-project:create",  # create a personal brain project, in p's home (the target: the home)
    "brain-project:delete",  # delete one of p's personal brain projects that holds nothing (the target: the home)
    "knowledge:retire",  # retire one taught item (the target names its author)
    "knowledge:own",  # supersede an item, or move its confidence by a session's outcome: its author's alone
    "action-item:resolve",  # retire an open action item (the target names its author and assignees)
    "project:manage",  # a project's settings, archiving and grants
    "access:manage",  # users, tokens and the audit log (no target)
    "store:carry",  # export, import or migrate the whole store, every home included: the local owner alone
    "jobs:manage",  # list and retry the learning loop's jobs (no target): an admin
]


@dataclass(frozen=True)
class ActionRule:
    scope: str | None  # the scope a token needs; None: none
    # what p needs on the target beyond the scope: see it, list it, write there, change a thing there (author,
    # admin or writer), resolve an item (that, or an assignee), own it (author alone), own the coding session,
    # write the caller's own home as a person, write where a write grant or the home says so (the role adds
    # nothing: a team's handbook is written by its writers, admins too only with a grant), or manage
    right: Literal["see", "list", "write", "change", "resolve", "author", "session", "home", "granted", "manage",
                   "operator"]


ADMIN_SCOPE = "admin"
ACTIONS: dict[Action, ActionRule] = {
    "project:see": ActionRule(None, "see"),
    "project:list": ActionRule("knowledge:read", "list"),
    "knowledge:read": ActionRule("knowledge:read", "see"),
    "knowledge:write": ActionRule("knowledge:write", "write"),
    "note:write": ActionRule("knowledge:write", "granted"),
    "memory:read": ActionRule("memory:read", "see"),
    "memory:write": ActionRule("memory:write", "write"),
    "memory:change": ActionRule("memory:write", "change"),
    "sessions:use": ActionRule("sessions", "see"),
    "sessions:write": ActionRule("sessions", "write"),
    "session:own": ActionRule("sessions", "session"),
    "brain-project:create": ActionRule("sessions", "home"),
    "brain-project:delete": ActionRule("sessions", "home"),
    "knowledge:retire": ActionRule("sessions", "change"),
    "knowledge:own": ActionRule("sessions", "author"),
    "action-item:resolve": ActionRule("sessions", "resolve"),
    "project:manage": ActionRule(ADMIN_SCOPE, "manage"),
    "access:manage": ActionRule(ADMIN_SCOPE, "manage"),
    "jobs:manage": ActionRule(ADMIN_SCOPE, "manage"),
    "store:carry": ActionRule(ADMIN_SCOPE, "operator"),
}
ROLE_SCOPES: dict[Role, frozenset[str]] = {
    "member": frozenset(SCOPES) - {ADMIN_SCOPE},
    "staff": frozenset(SCOPES) - {ADMIN_SCOPE},
    "admin": frozenset(SCOPES),
}

Refusal = Literal[
    "scope",  # the token lacks the action's scope
    "manager",  # managing needs an admin's user-scoped token with the admin scope
    "operator",  # the whole store is the local owner's alone (the command line on the server)
    "hidden",  # the project is missing or p may not see it (answered as missing)
    "home",  # a home takes no settings, archiving or grants
    "right",  # p sees the project but may not do this there
    "bound",  # the token is bound to a project and the target lies outside it, or needs a user-scoped token
]


@dataclass(frozen=True)
class Target:
    """What an action applies to, as the rules need it: the project (None when it does not exist), the
    caller's grant on it, and for a memory its author and, when it is private, whose alone it is; for an
    action item the emails of its assignees; for a coding session its owner (``author_user_id``) and the
    brain project it belongs to (``session_project``)."""

    project: Project | None
    grant: GrantLevel | None = None
    author_user_id: str | None = None
    private_to: str | None = None
    assignees: tuple[str, ...] = ()
    session_project: str | None = None


def refusal(p: Principal, action: Action, target: Target | None = None) -> Refusal | None:
    """Why p may not do ``action`` on ``target``, or None when p may. Without a target: whether p may do
    the action at all (on some project), which is the scope, and for managing the manager's rights."""
    rule = ACTIONS[action]
    if rule.right == "operator":  # every home's memories and sessions: no person's token reaches them all
        return None if p.local_owner else "operator"
    if rule.right == "manage":
        if not _is_manager(p):
            return "manager"
        if target is None or action == "access:manage":
            return None
        if target.project is None or not _is_visible(p, target.project, None, include_archived=True):
            return "hidden"
        return "home" if target.project.kind == "home" else None
    if rule.scope is not None and not p.has_scope(rule.scope):
        return "scope"
    if target is None:
        return None
    if rule.right == "session":
        return _session_refusal(p, target)
    if rule.right == "home" and (p.bound_project is not None or p.local_owner):
        return "bound" if p.bound_project is not None else "right"
    project, grant = target.project, target.grant
    if project is None or not _is_visible(p, project, grant, include_archived=rule.right == "list"):
        return "hidden"
    if not sees_memory(p, target.private_to):
        return "hidden"
    if rule.right == "resolve" and _is_author_or_assignee(p, target):  # in a project p still sees: an ungrant counts
        return None
    if rule.right in ("write", "home", "resolve") and not _may_write(p, project, grant):
        return "right"
    if rule.right == "granted" and not (grant == "write" or _owns_home(p, project) or p.local_owner):
        return "right"
    if rule.right == "change" and not (target.author_user_id == p.user_id or p.role == "admin"
                                       or _may_write(p, project, grant)):
        return "right"
    if rule.right == "author" and target.author_user_id != p.user_id:
        return "right"
    return None


def allowed(p: Principal, action: Action, target: Target | None = None) -> bool:
    return refusal(p, action, target) is None


def missing_scope(p: Principal, action: Action) -> str | None:
    """The scope p's token lacks for ``action``, when that is what refuses it."""
    return ACTIONS[action].scope if refusal(p, action) == "scope" else None


def _session_refusal(p: Principal, target: Target) -> Refusal | None:
    """A coding session is its owner's alone (another's is hidden, as a missing one); a project-scoped token
    works only in sessions of its own project."""
    if target.author_user_id is None or target.author_user_id != p.user_id:
        return "hidden"
    if p.bound_project is not None and target.session_project != p.bound_project:
        return "bound"
    return None


def _is_author_or_assignee(p: Principal, target: Target) -> bool:
    return target.author_user_id == p.user_id or p.email.strip().lower() in target.assignees


def _is_visible(p: Principal, project: Project, grant: GrantLevel | None, *, include_archived: bool) -> bool:
    if p.bound_project is not None and project.id != p.bound_project:
        return False
    if project.status == "archived" and not (include_archived and p.role == "admin"):
        return False
    if project.kind == "home":
        return _owns_home(p, project)
    if p.role in ("staff", "admin"):
        return True
    return grant is not None


def _owns_home(p: Principal, project: Project) -> bool:
    return project.kind == "home" and project.owner_user_id is not None and project.owner_user_id == p.user_id


def _may_write(p: Principal, project: Project, grant: GrantLevel | None) -> bool:
    return grant == "write" or _owns_home(p, project) or p.role == "admin"


def _is_manager(p: Principal) -> bool:
    """Admin role with the admin scope on a user-scoped token, or the local owner."""
    if p.local_owner:
        return True
    return p.role == "admin" and p.has_scope(ADMIN_SCOPE) and p.bound_project is None


def sees_memory(p: Principal, private_to: str | None) -> bool:
    """Within a project the caller reads: a private memory is its author's alone, whatever the caller's role."""
    return private_to is None or private_to == p.user_id


# --- the scopes a token may be minted with ----------------------------------------------------------


def check_role(role: str) -> Role:
    for known in ROLES:
        if role == known:
            return known
    raise InvalidArgument("role", f"{role!r} is not a role; choose one of {', '.join(ROLES)}")


def _wanted_scopes(scopes: Iterable[str]) -> set[str]:
    wanted = {s.strip() for s in scopes if s.strip()}
    if not wanted:
        raise InvalidArgument("scopes", f"name at least one scope, from {', '.join(SCOPES)}")
    unknown = sorted(wanted - set(SCOPES))
    if unknown:
        raise InvalidArgument("scopes", f"unknown scope {', '.join(unknown)}; choose from {', '.join(SCOPES)}")
    return wanted


def check_token_scopes(role: Role, scopes: Iterable[str], *, project_bound: bool) -> tuple[str, ...]:
    """The scopes, in canonical order, if a token of a ``role`` user may hold them; else a clear error."""
    wanted = _wanted_scopes(scopes)
    refused = sorted(wanted - ROLE_SCOPES[role])
    if refused:
        raise Forbidden(f"a {role} may not hold {', '.join(refused)}; only admins hold the admin scope", field="scopes")
    if project_bound and ADMIN_SCOPE in wanted:
        raise Forbidden("the admin scope needs a user-scoped token; drop the project or the admin scope",
                        field="scopes")
    return tuple(s for s in SCOPES if s in wanted)


def grantable_scopes(p: Principal) -> tuple[str, ...]:
    """The scopes, in canonical order, p may give a token of their own: those of the role and of p's token."""
    return tuple(s for s in SCOPES if s in ROLE_SCOPES[p.role] and s in p.scopes)


ASKED_FOR_SCOPES = frozenset({ADMIN_SCOPE, "knowledge:write"})  # never on a new token unless its person asks


def default_token_scopes(p: Principal) -> tuple[str, ...]:
    """What a new token of p's holds unless p chooses: every grantable scope but admin and knowledge:write,
    which are asked for (an agent changes the team's documents only when its person chose that)."""
    return tuple(s for s in grantable_scopes(p) if s not in ASKED_FOR_SCOPES)


TokenState = Literal["active", "revoked", "expired", "user deactivated", "no usable scope"]


def token_scopes_now(role: Role, scopes: Iterable[str]) -> tuple[str, ...]:
    """The scopes a token minted with ``scopes`` can use at its next call: those its user's role still allows
    (authentication cuts them so at every call), in the order minted."""
    return tuple(s for s in scopes if s in ROLE_SCOPES[role])


def token_state_now(token: TokenRecord, user: User | None, now: str) -> TokenState:
    """What the token's next call meets, as ``Authentication.authenticate`` decides it: revoked or expired (for
    good), its user deactivated (until reactivated), no usable scope (its user's role allows none of the scopes
    it was minted with, as a token minted with admin alone after a demotion: the call is let in, but every action
    needing a scope is refused, until the role allows one again), else active."""
    state = token.state(now)
    if state != "active":
        return state
    return live_token_state(user.role if user is not None else None, user is not None and user.active, token.scopes)


def live_token_state(role: Role | None, user_active: bool, scopes: Iterable[str]) -> TokenState:
    """``token_state_now`` of a token neither revoked nor expired, minted with ``scopes``, whose user has ``role``
    (None: the user is gone) and is active or not: what a count of such tokens by kind is judged by."""
    if role is None or not user_active:
        return "user deactivated"
    if not token_scopes_now(role, scopes):
        return "no usable scope"
    return "active"


def reaches_own_token(p: Principal, token_id: str, scopes: Iterable[str], project_id: str | None) -> bool:
    """Whether p may see and revoke this token of their own: the one p calls with, or one that can do nothing
    beyond what p can and has no wider binding (a narrower token never reaches a wider one; a signed-in person,
    or a user-scoped token with every scope of the role, reaches them all: a token keeping a scope the role has
    lost since, such as admin after a demotion, counts as without it)."""
    if token_id == p.token_id:
        return True
    within = p.bound_project is None or project_id == p.bound_project
    return within and set(scopes) & ROLE_SCOPES[p.role] <= p.scopes  # what the token can do now, role and all


def reaches_every_own_token(p: Principal) -> bool:
    """Whether p reaches every token of their own (reaches_own_token for each): a signed-in person, or a token bound
    to no project holding every scope of the role. A page of p's tokens is then the store's page as it is."""
    return p.bound_project is None and ROLE_SCOPES[p.role] <= p.scopes


def check_own_token(p: Principal, scopes: Iterable[str], project_id: str | None) -> tuple[str, ...]:
    """The scopes, in canonical order, of a token p may mint for themselves: no scope beyond the role,
    none beyond p's own token, and a project-bound caller binds the new token to the same project."""
    wanted = _wanted_scopes(scopes)
    beyond_role = sorted(wanted - ROLE_SCOPES[p.role])
    if beyond_role:
        raise Forbidden(f"a {p.role} may not hold {', '.join(beyond_role)}; only admins hold the admin scope",
                        field="scopes")
    beyond_token = sorted(wanted - p.scopes)
    if beyond_token:
        raise Forbidden(f"this token lacks {', '.join(beyond_token)}, so it cannot mint a token that holds it; "
                        "a token never gives more than its holder has", field="scopes")
    if p.bound_project is not None and project_id != p.bound_project:
        raise Forbidden(f"this token is bound to {p.bound_project}, so the tokens it mints must be bound to "
                        f"{p.bound_project} too", field="project")
    if project_id is not None and ADMIN_SCOPE in wanted:
        raise Forbidden("the admin scope needs a user-scoped token; drop the project or the admin scope",
                        field="scopes")
    return tuple(s for s in SCOPES if s in wanted)
