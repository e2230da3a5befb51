"""Authorization: the one place services ask "may p do this", answered by notewell.access.policy.

It reads what the rule needs from the store on every call (the project, the caller's grant), so a
revoke, an ungrant or an archive counts on the very next call, and turns a refusal into the error a
person reads: a hidden project is ``Not found: <id>``, byte for byte as a missing one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, overload

from notewell.access.policy import ACTIONS, Action, Refusal, Target, refusal
from notewell.access.principal import Principal
from notewell.errors import Forbidden, MissingScope, NotFound
from notewell.records.brain import KnowledgeRecord, SessionRecord
from notewell.records.identity import GrantLevel, Project
from notewell.store.base import IdentityRepository

MANAGE_REFUSAL = ("Forbidden: managing users, projects, grants and tokens needs an admin's user-scoped token "
                  "with the admin scope (or the local command line)")


class Authored(Protocol):
    """A thing kept in a project by someone: a memory."""

    @property
    def project(self) -> str: ...

    @property
    def author_user_id(self) -> str: ...

    @property
    def private_to(self) -> str | None: ...  # set when it is its author's alone


# A project id; a thing in a project (a memory); taught knowledge or an action item; a coding session.
Resource = str | Authored | KnowledgeRecord | SessionRecord
ASSIGNEE_TAG = "for:"  # an action item's tag naming an assignee by email: for:ada@example.com


def not_found(project_id: str) -> NotFound:
    """The one answer for a project that is missing or hidden: byte-identical in both cases."""
    return NotFound(f"Not found: {project_id}")


class Authorization:
    def __init__(self, identity: IdentityRepository) -> None:
        self.identity = identity

    def _project(self, p: Principal, project_id: str) -> tuple[Project | None, GrantLevel | None]:
        """The project and p's grant level on it (the local owner holds none), read in one statement."""
        project, level = self.identity.project_with_grant(project_id, p.user_id)
        return project, None if p.local_owner else level

    def _target(self, p: Principal, resource: Resource) -> Target:
        if isinstance(resource, str):
            return Target(*self._project(p, resource))
        if isinstance(resource, SessionRecord):
            return Target(None, author_user_id=resource.user_id, session_project=resource.brain_project)
        if isinstance(resource, KnowledgeRecord):
            assignees = tuple(t[len(ASSIGNEE_TAG):].strip().lower() for t in resource.tags
                              if t.startswith(ASSIGNEE_TAG))
            return Target(*self._project(p, resource.project), resource.owner_user_id, assignees=assignees)
        return Target(*self._project(p, resource.project), resource.author_user_id, resource.private_to)

    def refusal(self, p: Principal, action: Action, resource: Resource | None = None) -> Refusal | None:
        """Why p may not do ``action`` on ``resource`` (None: p may), for a service that words its own refusals
        (the External Brain's seed codes); the others use ``authorize``."""
        return refusal(p, action, None if resource is None else self._target(p, resource))

    def allowed(self, p: Principal, action: Action, resource: Resource | None = None) -> bool:
        """Whether p may do ``action`` on ``resource`` (None: at all, i.e. p holds the scope, or manages)."""
        return self.refusal(p, action, resource) is None

    @overload
    def authorize(self, p: Principal, action: Action, resource: Resource) -> Project: ...

    @overload
    def authorize(self, p: Principal, action: Action, resource: None = None) -> None: ...

    def authorize(self, p: Principal, action: Action, resource: Resource | None = None) -> Project | None:
        """The resource's project if p may do ``action`` on it (None without a resource). Forbidden for a
        missing scope or right; NotFound, identical for hidden and missing, when p may not see it."""
        target = None if resource is None else self._target(p, resource)
        why = refusal(p, action, target)
        if why is not None:
            project_id = resource if isinstance(resource, str) else _project_of(resource)
            raise self._error(why, action, project_id, p)
        return target.project if target is not None else None

    def projects(self, p: Principal, action: Action) -> list[Project]:
        """Every project p may do ``action`` on, sorted by id (none when the token lacks the scope)."""
        return self.seen(p).projects(action)

    def managed(self, p: Principal, projects: Iterable[Project]) -> list[Project]:
        """Those of ``projects`` (a page the caller read) p may manage (``project:manage``), in their order: the
        managing rule reads no grant, so the rows read are all it needs."""
        return [project for project in projects if refusal(p, "project:manage", Target(project)) is None]

    def seen(self, p: Principal) -> Seen:
        """The projects p could see, read once for the questions of one call (``Seen``)."""
        return Seen(self, p)

    @staticmethod
    def _error(why: Refusal, action: Action, project_id: str, p: Principal) -> Forbidden | NotFound:
        if why == "hidden":
            return not_found(project_id)
        if why == "manager":
            return Forbidden(MANAGE_REFUSAL)
        if why == "operator":
            return Forbidden("Forbidden: the whole store (every home included) is carried by the local owner "
                             "alone: run the command on the server without --as")
        if why == "scope":
            return MissingScope(str(ACTIONS[action].scope))
        if why == "home":
            return Forbidden(f"Forbidden: {project_id} is a home: it belongs to its owner and takes no settings, "
                             "archiving or grants")
        if action in ("knowledge:write", "note:write", "memory:write"):
            home = f" (or write in your home, {p.home_project})" if action == "note:write" and _has_home(p) else ""
            return Forbidden(f"Forbidden: you may read {project_id} but not write to it; "
                             f"ask an admin for a write grant{home}")
        return Forbidden(f"Forbidden: {action} on {project_id} is not allowed")


class Seen:
    """The projects p could see (every ordinary project and p's homes), each with p's grant on it, read when first
    needed in one statement and then answering a call's several questions about them (the projects p may read,
    whether p may write one of them). Made for one call and dropped with it: the next call reads again, so a
    removed grant or an archived project counts there. A project outside them is read as ``Authorization`` reads
    it."""

    def __init__(self, authorization: Authorization, p: Principal) -> None:
        self._authorization = authorization
        self._p = p
        self._held: dict[str, tuple[Project, GrantLevel | None]] | None = None

    def _rows(self) -> dict[str, tuple[Project, GrantLevel | None]]:
        if self._held is None:
            local = self._p.local_owner  # holds no grant
            self._held = {project.id: (project, None if local else level)
                          for project, level in self._authorization.identity.projects_seen_by(self._p.user_id)}
        return self._held

    def projects(self, action: Action) -> list[Project]:
        """Every project p may do ``action`` on, sorted by id (none, and nothing read, without the scope)."""
        if refusal(self._p, action) is not None:
            return []
        return [project for project, level in self._rows().values()
                if refusal(self._p, action, Target(project, level)) is None]

    def refusal(self, action: Action, project_id: str) -> Refusal | None:
        """As ``Authorization.refusal`` for the project ``project_id``."""
        held = self._rows().get(project_id)
        if held is None:
            return self._authorization.refusal(self._p, action, project_id)
        return refusal(self._p, action, Target(*held))

    def allowed(self, action: Action, project_id: str) -> bool:
        return self.refusal(action, project_id) is None


def _has_home(p: Principal) -> bool:
    """Whether p may write a home of its own: a person, not the local owner, on a token bound to no project."""
    return not p.local_owner and p.bound_project is None


def _project_of(resource: Resource | None) -> str:
    if resource is None or isinstance(resource, str):
        return resource or ""
    return resource.brain_project if isinstance(resource, SessionRecord) else resource.project
