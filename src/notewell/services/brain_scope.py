"""Where a brain caller may work: their projects, the one a request goes to, and the sessions that are theirs.

The base of the brain service's parts (docs/brain.md). Projects: a user-scoped token works in the caller's
personal projects (under their home) and the ordinary projects they see; a project-scoped token in its
project only. Sessions are their owner's alone: another person's session id is NOT_FOUND. Who may do what is
the policy's (session:own, brain-project:create): this part asks Authorization and words the refusal.
"""

from __future__ import annotations

import threading

from notewell.access.audit import AuditTrail
from notewell.access.authorization import Authorization, Seen
from notewell.access.policy import Action
from notewell.access.principal import Principal
from notewell.errors import Conflict
from notewell.records.brain import SessionRecord
from notewell.services.brain_errors import BrainNotFound, BrainValidation, ForbiddenProject
from notewell.services.brain_projects import (
    DEFAULT_NAME,
    BrainProject,
    check_label,
    check_name,
    ensure_named,
    ordinary,
    personal,
)
from notewell.services.meaning import MeaningService, words_only
from notewell.store.base import Store

USE: Action = "sessions:use"
WRITE: Action = "sessions:write"
OWN_SESSION: Action = "session:own"
CREATE_PROJECT: Action = "brain-project:create"
DELETE_PROJECT: Action = "brain-project:delete"
RETIRE: Action = "knowledge:retire"
OWN_KNOWLEDGE: Action = "knowledge:own"
RESOLVE: Action = "action-item:resolve"


def _counted(n: int, kind: str) -> str:
    return f"{n} {kind.removesuffix('s') if n == 1 else kind}"


class ScopePart:
    def __init__(self, store: Store, authorization: Authorization, audit: AuditTrail,
                 meaning: MeaningService | None = None, job_work: threading.Event | None = None) -> None:
        self.store = store
        self.job_work = job_work or threading.Event()  # set when a job is queued: this process's runner looks
        self.brain = store.brain
        self.authorization = authorization
        self.audit = audit
        self.meaning = meaning  # None: words only (services/meaning.py)

    def words_only(self, query: str | None = None) -> str | None:
        """Why the brain's tolerant searches (of ``query``, when given) answer by words alone, or None when
        meaning is on and reads the query (services/meaning.py)."""
        return words_only(self.meaning, query)

    def _wake(self) -> None:
        """Something was queued for embedding: the runner of this process takes it now."""
        if self.meaning is not None:
            self.meaning.work.set()

    def projects(self, p: Principal, seen: Seen | None = None) -> list[BrainProject]:
        """Owned first (personal projects, oldest first), then the ordinary projects p sees (by id);
        a project-scoped token: its project only. ``seen``: the call's read of p's projects, when it has one."""
        self.authorization.authorize(p, USE)
        if p.bound_project is not None:
            return [ordinary(self.authorization.authorize(p, USE, p.bound_project), p)]
        seen = seen or self.authorization.seen(p)
        own = [personal(r, p) for r in self.brain.personal_projects(p.user_id)]
        if not seen.allowed(USE, p.home_project):
            own = []
        shared = [ordinary(project, p) for project in seen.projects(USE) if project.kind == "ordinary"]
        return own + shared

    def active_project(self, p: Principal) -> tuple[BrainProject, str] | None:
        """Where a session would go now: (project, "token_scope" | "first_project_fallback"); None when it would
        go to a "Default" personal project not made yet (or p has no project and no home to make one in)."""
        seen = self.authorization.seen(p)
        projects = self.projects(p, seen)
        if p.bound_project is not None:
            return projects[0], "token_scope"
        found = self._fallback(p, projects, seen)
        return None if found is None else (found, "first_project_fallback")

    def _fallback(self, p: Principal, projects: list[BrainProject], seen: Seen | None = None) -> BrainProject | None:
        """The project a request naming none goes to (a user-scoped token): the first of p's projects p may
        write, so that what the session learns and what is taught can be kept there (a member never writes where
        they may only read: a read grant is no destination). None when there is none: the "Default" personal
        project, made lazily in p's home, is the destination. A caller with no home to make it in falls back to
        the first project p may read, where teaching is refused and a close says its learnings were not kept."""
        seen = seen or self.authorization.seen(p)
        writable = next((bp for bp in projects if seen.allowed(WRITE, bp.store_project)), None)
        if writable is not None or seen.refusal(CREATE_PROJECT, p.home_project) is None:
            return writable
        return projects[0] if projects else None

    def create_project(self, p: Principal, name: str, framework: str | None = None,
                       language: str | None = None) -> tuple[BrainProject, bool]:
        self.authorization.authorize(p, USE)
        self._require_home(p)
        clean = check_name(name)
        fw, lang = check_label(framework, "framework"), check_label(language, "language")
        record, created = ensure_named(self.brain, p, clean, fw, lang)
        if created:
            self.audit.record(p, "brain.project.create", record.id, {"name": record.name})
        return personal(record, p), created

    def delete_project(self, p: Principal, project_id: str) -> BrainProject:
        """Delete one of p's personal projects that holds nothing (no session, knowledge item or skill
        proposal, retired ones included): a project that holds something is kept, as all written is."""
        self.authorization.authorize(p, USE)
        self._require_home(p, DELETE_PROJECT)
        record = self.brain.project(project_id)
        if record is None or record.owner_user_id != p.user_id:
            raise BrainNotFound(f"{project_id!r} is not one of your personal projects", remedy="list-brain-projects")
        held = {kind: n for kind, n in self.brain.project_holdings(project_id).items() if n}
        if held or not self.brain.delete_empty_project(project_id):
            held = held or {kind: n for kind, n in self.brain.project_holdings(project_id).items() if n}
            if not held:  # deleted meanwhile by another request
                raise BrainNotFound(f"{project_id!r} is not one of your personal projects")
            raise Conflict(f"project {project_id} holds {', '.join(_counted(n, kind) for kind, n in held.items())}: "
                           "only an empty project is deleted (what it holds is never lost); keep using it")
        self.audit.record(p, "brain.project.delete", record.id, {"name": record.name})
        return personal(record, p)

    def _require_home(self, p: Principal, action: Action = CREATE_PROJECT) -> None:
        why = self.authorization.refusal(p, action, p.home_project)
        if why == "bound":
            verb = "create" if action == CREATE_PROJECT else "delete"
            raise ForbiddenProject(f"this token is bound to {p.bound_project}: the token IS the project. Use a "
                                   f"user-scoped token to {verb} projects")
        if why is not None:
            raise ForbiddenProject("personal projects live in your home, which this caller has none of; act as "
                                   "a user", remedy="user-scoped")

    def _project(self, p: Principal, project_id: str, projects: list[BrainProject] | None = None) -> BrainProject:
        found = next((bp for bp in (self.projects(p) if projects is None else projects) if bp.id == project_id), None)
        if found is None:
            if p.bound_project is not None:
                raise ForbiddenProject(f"this token is bound to {p.bound_project}; {project_id!r} is outside it. "
                                       "Drop projectId or use a user-scoped token")
            raise ForbiddenProject(f"{project_id!r} is not a project you can use", remedy="list-brain-projects")
        return found

    def resolve(self, p: Principal, project_id: str | None = None, project_name: str | None = None,
                framework: str | None = None, language: str | None = None,
                projects: list[BrainProject] | None = None, seen: Seen | None = None) -> BrainProject:
        """The seed's precedence: token scope, projectId, projectName (created on demand), the first project
        p may write, a lazily created "Default" (``_fallback``). ``projects``: p's projects when the caller has
        them already; ``seen``: the call's read of them (Authorization.seen), likewise."""
        seen = seen or self.authorization.seen(p)
        projects = self.projects(p, seen) if projects is None else projects
        if p.bound_project is not None:
            if project_id and project_id != p.bound_project:
                self._project(p, project_id, projects)  # raises FORBIDDEN_PROJECT
            return projects[0]
        if project_id:
            return self._project(p, project_id, projects)
        if project_name is not None:
            name = check_name(project_name, "projectName")
            self._require_home(p)
            record, _ = ensure_named(self.brain, p, name, check_label(framework, "framework"),
                                     check_label(language, "language"), field="projectName")
            return personal(record, p)
        found = self._fallback(p, projects, seen)
        if found is not None:
            return found
        self._require_home(p)
        record, _ = ensure_named(self.brain, p, DEFAULT_NAME, None, None)
        return personal(record, p)

    def may_open(self, p: Principal, *, project_id: str | None = None, project_name: str | None = None) -> None:
        """Raise what ``start_session`` would refuse this caller for, creating nothing: a kept answer to a
        repeated request (Idempotency-Key) is handed back only past this check."""
        seen = self.authorization.seen(p)
        projects = self.projects(p, seen)
        if p.bound_project is not None or project_id:
            self.resolve(p, project_id, projects=projects, seen=seen)
        elif project_name is not None or self._fallback(p, projects, seen) is None:
            self._require_home(p)  # the session's project is made in the caller's home

    def may_log(self, p: Principal, session_id: str) -> None:
        """Raise what ``log_event`` would refuse this caller for (the scope, a session of theirs)."""
        self.authorization.authorize(p, USE)
        self._own_session(p, session_id)

    def _require_write(self, p: Principal, bp: BrainProject) -> None:
        if not self.authorization.allowed(p, WRITE, bp.store_project):
            raise ForbiddenProject(f"you may read {bp.id} but not write to it; ask an admin for a write grant or "
                                   "teach into one of your own projects")

    def _scope_ids(self, p: Principal, projects: list[BrainProject] | None = None) -> tuple[list[str], list[str]]:
        """(brain project ids, Notewell project ids) p's scope filter covers."""
        projects = self.projects(p) if projects is None else projects
        return [bp.id for bp in projects], list(dict.fromkeys(bp.store_project for bp in projects))

    def _own_session(self, p: Principal, session_id: object) -> SessionRecord:
        if not isinstance(session_id, str) or not session_id.strip():
            raise BrainValidation("sessionId", "must not be empty; pass the id your session was opened with",
                                  remedy="start-session")
        if "\x00" in session_id:  # no id holds one, and PostgreSQL cannot even compare one
            raise BrainValidation("sessionId", "contains a NUL character (\\x00); pass the id your session was "
                                               "opened with", remedy="start-session")
        session = self.brain.session(session_id.strip())
        why = "hidden" if session is None else self.authorization.refusal(p, OWN_SESSION, session)
        if session is None or why == "hidden":
            raise BrainNotFound(f"no session {session_id.strip()} of yours", remedy="start-session")
        if why is not None:
            raise ForbiddenProject(f"session {session.id} belongs to {session.brain_project}, outside this token's "
                                   f"project {p.bound_project}; use a token for that project")
        return session
