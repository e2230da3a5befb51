"""The access service: authentication, visibility, rights, and the management of users, projects,
grants and tokens, with an audit entry for every change.

Every decision goes through notewell.access.policy; this module only fetches what the rules need from
the store (reading it on every call, so a revoke, an ungrant or a deactivation counts on the very next
call) and turns a refusal into the right error. Hidden and missing projects give the same NotFound.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from notewell.access import policy
from notewell.access.policy import Action
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.access.tokens import expiry_from, iso, mint_secret, secret_matches, token_id_of
from notewell.errors import (
    ConfigError,
    Conflict,
    Forbidden,
    InvalidArgument,
    MissingScope,
    NotFound,
    Unauthenticated,
)
from notewell.records.identity import (
    HOME_PREFIX,
    AuditEntry,
    Grant,
    GrantLevel,
    Project,
    TokenRecord,
    User,
    email_key,
    home_id,
    now_iso,
)
from notewell.store.base import IdentityRepository, Store
from notewell.vault.parse import split_front_matter

TOUCH_INTERVAL = timedelta(seconds=60)  # last_used_at is refreshed at most this often per token
_HANDLE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
_PROJECT_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
README_NAMES = ("README.md", "readme.md", "Readme.md")
MANAGE_REFUSAL = ("Forbidden: managing users, projects, grants and tokens needs an admin's user-scoped token "
                  "with the admin scope (or the local command line)")


def not_found(project_id: str) -> NotFound:
    """The one answer for a project that is missing or hidden: byte-identical in both cases."""
    return NotFound(f"Not found: {project_id}")


@dataclass(frozen=True)
class MintedToken:
    secret: str  # shown once; never stored, logged or audited
    token: TokenRecord


class AccessService:
    def __init__(self, store: Store, vault: Path | None = None) -> None:
        self.store = store
        self.vault = vault

    @property
    def identity(self) -> IdentityRepository:
        return self.store.identity

    # authentication
    def authenticate(self, secret: str) -> Principal:
        """The Principal for a token secret; Unauthenticated for a bad, revoked or expired token or a
        deactivated user. Reads the store every time: nothing is cached."""
        secret = secret.strip()
        if not secret:
            raise Unauthenticated("Unauthenticated: no token given; send Authorization: Bearer <token>")
        token_id = token_id_of(secret)
        found = self.identity.token_with_hash(token_id) if token_id else None
        if found is None or not secret_matches(secret, found[1]):
            raise Unauthenticated("Unauthenticated: the token is not valid; mint a new one with "
                                  "'notewell token mint'")
        token = found[0]
        now = datetime.now(UTC)
        state = token.state(iso(now))
        if state != "active":
            raise Unauthenticated(f"Unauthenticated: token {token.id} is {state}; mint a new one with "
                                  "'notewell token mint'")
        user = self.identity.user(token.user_id)
        if user is None or not user.active:
            raise Unauthenticated(f"Unauthenticated: the user of token {token.id} is deactivated")
        if token.last_used_at is None or token.last_used_at < iso(now - TOUCH_INTERVAL):
            self.identity.touch_token(token.id, iso(now))
        scopes = frozenset(token.scopes) & policy.ROLE_SCOPES[user.role]
        return Principal(user_id=user.id, email=user.email, handle=user.handle, role=user.role, scopes=scopes,
                         token_id=token.id, bound_project=token.project_id)

    @staticmethod
    def user_principal(user: User) -> Principal:
        """The user acting with every scope their role allows and no project binding (no token)."""
        return Principal(user_id=user.id, email=user.email, handle=user.handle, role=user.role,
                         scopes=policy.ROLE_SCOPES[user.role])

    # visibility and rights
    def _grant_level(self, p: Principal, project_id: str) -> GrantLevel | None:
        if p.local_owner:
            return None
        grant = self.identity.grant(p.user_id, project_id)
        return grant.level if grant else None

    def visible_projects(self, p: Principal, *, include_archived: bool = False) -> list[Project]:
        """Projects p sees, sorted by id. Scopes are not checked here."""
        levels = {} if p.local_owner else {g.project_id: g.level for g in self.identity.grants_for_user(p.user_id)}
        return [project for project in self.identity.projects_for_user(p.user_id)
                if policy.is_visible(p, project, levels.get(project.id), include_archived=include_archived)]

    def project_for_read(self, p: Principal, project_id: str) -> Project:
        project = self.identity.project(project_id)
        if project is None or not policy.is_visible(p, project, self._grant_level(p, project_id)):
            raise not_found(project_id)
        return project

    def project_for_write(self, p: Principal, project_id: str) -> Project:
        project = self.identity.project(project_id)
        level = self._grant_level(p, project_id)
        if project is None or not policy.is_visible(p, project, level):
            raise not_found(project_id)
        if not policy.may_write(p, project, level):
            raise Forbidden(f"Forbidden: you may read {project_id} but not write to it; "
                            "ask an admin for a write grant")
        return project

    def can_read(self, p: Principal, project_id: str) -> bool:
        project = self.identity.project(project_id)
        return project is not None and policy.is_visible(p, project, self._grant_level(p, project_id))

    def can_write(self, p: Principal, project_id: str) -> bool:
        project = self.identity.project(project_id)
        return project is not None and policy.may_write(p, project, self._grant_level(p, project_id))

    def require_scope(self, p: Principal, scope: str) -> None:
        if not p.has_scope(scope):
            raise MissingScope(scope)

    def can_manage(self, p: Principal) -> bool:
        return policy.may_manage(p)

    def allowed(self, p: Principal, action: Action, project_id: str) -> bool:
        """Whether p may do ``action`` (list, read, search, write, manage) on the project, scopes included."""
        project = self.identity.project(project_id)
        return project is not None and policy.decide(action, p, project, self._grant_level(p, project_id))

    def authorize(self, p: Principal, action: Action, project_id: str) -> Project:
        """The project if p may do ``action`` on it; Forbidden for a missing scope or right, NotFound
        (byte-identical for hidden and missing) when p may not see it."""
        if action == "manage":
            return self._managed_project(p, project_id)
        self.require_scope(p, policy.ACTION_SCOPES[action])
        if action == "write":
            return self.project_for_write(p, project_id)
        project = self.identity.project(project_id)
        level = self._grant_level(p, project_id)
        if project is None or not policy.is_visible(p, project, level, include_archived=action == "list"):
            raise not_found(project_id)
        return project

    def default_write_project(self, p: Principal) -> Project:
        """Where a write lands when no project is named: the bound project, else the caller's home."""
        return self.project_for_write(p, p.bound_project or p.home_project)

    # vault projects
    def sync_vault_projects(self, ids: Sequence[str], vault: Path | None = None) -> None:
        """Top-level vault folders become ordinary active projects, named and described by the folder's
        README.md front matter unless set from the command line. "~handle" folders are homes, made with
        their users: a folder with no such user stays a project nobody sees."""
        root = vault or self.vault
        existing = {project.id: project for project in self.identity.projects()}
        for project_id in ids:
            if project_id.startswith(HOME_PREFIX):
                continue
            name, description = _readme_fields(root / project_id) if root else ("", "")
            project = existing.get(project_id)
            if project is None:
                created = Project(id=project_id, name=name or project_id, description=description, kind="ordinary",
                                  status="active", created_at=now_iso())
                try:
                    self.identity.add_project(created)
                except Conflict:  # another process found it at the same moment
                    continue
                self._audit(LOCAL_OWNER, "project.discover", project_id, {"name": created.name})
                continue
            if project.kind != "ordinary":
                continue
            updated = replace(project,
                              name=project.name if project.custom_name else (name or project_id),
                              description=project.description if project.custom_description else description)
            if updated != project:
                self.identity.update_project(updated)

    # management: users
    def _require_manager(self, p: Principal) -> None:
        if not policy.may_manage(p):
            raise Forbidden(MANAGE_REFUSAL)

    def _audit(self, p: Principal, action: str, target: str, detail: dict[str, object] | None = None) -> AuditEntry:
        return self.store.audit.append(now_iso(), p.user_id, p.token_id, action, target, detail)

    def record(self, p: Principal, action: str, target: str, detail: dict[str, object] | None = None) -> AuditEntry:
        """Append an audit entry for a change another service made on p's behalf (never pass secrets)."""
        return self._audit(p, action, target, detail)

    def user(self, p: Principal, email: str) -> User:
        self._require_manager(p)
        user = self.identity.user_by_email(email)
        if user is None:
            raise NotFound(f"No user with email {email.strip()}; see 'notewell user list'")
        return user

    def users(self, p: Principal) -> list[User]:
        self._require_manager(p)
        return self.identity.users()

    def add_user(self, p: Principal, email: str, role: str, *, name: str | None = None,
                 handle: str | None = None) -> User:
        """Create a user and their home project ``~handle`` (and its vault folder when the vault is known)."""
        self._require_manager(p)
        email = email.strip()
        if not _EMAIL.match(email):
            raise InvalidArgument("EMAIL", f"{email!r} is not an email address such as ada@example.com")
        checked_role = policy.check_role(role)
        if self.identity.user_by_email(email) is not None:
            raise Conflict(f"EMAIL: {email} is already a user (emails compare without case); "
                           "see 'notewell user list'")
        if handle is None:
            handle = self._free_handle(_handle_from_email(email))
        elif not _HANDLE.match(handle):
            raise InvalidArgument("--handle", f"{handle!r} must be 1-32 lower-case letters, digits, - or _, "
                                              "starting with a letter or digit")
        elif self.identity.user_by_handle(handle) is not None or self.identity.project(home_id(handle)):
            raise Conflict(f"--handle: {handle} is taken; choose another with --handle")
        now = now_iso()
        user = User(id=f"u_{secrets.token_hex(8)}", email=email, name=(name or "").strip() or email.split("@")[0],
                    handle=handle, role=checked_role, active=True, created_at=now)
        home = Project(id=home_id(handle), name=f"{user.name} (home)", description=f"Private home of {email}",
                       kind="home", status="active", owner_user_id=user.id, created_at=now)
        self._make_home_folder(home.id)
        self.identity.add_user(user, home)
        self._audit(p, "user.add", email_key(email), {"id": user.id, "role": user.role, "handle": handle,
                                                      "home": home.id})
        return user

    def _free_handle(self, base: str) -> str:
        candidate, n = base, 1
        while self.identity.user_by_handle(candidate) or self.identity.project(home_id(candidate)):
            n += 1
            suffix = f"-{n}"
            candidate = base[:32 - len(suffix)] + suffix
        return candidate

    def _make_home_folder(self, project_id: str) -> None:
        if self.vault is None or not self.vault.is_dir():
            return
        try:
            (self.vault / project_id).mkdir(exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"--vault: cannot create the home folder {self.vault / project_id} ({exc})") from exc

    def set_user_active(self, p: Principal, email: str, active: bool) -> User:
        """Deactivate (every token of the user fails on its next call) or reactivate a user."""
        user = self.user(p, email)
        if user.active != active:
            self.identity.set_user_active(user.id, active)
            self._audit(p, "user.activate" if active else "user.deactivate", email_key(user.email), {"id": user.id})
        return replace(user, active=active)

    def set_role(self, p: Principal, email: str, role: str) -> User:
        """Change a user's role; their tokens keep only the scopes the new role allows from the next call."""
        user = self.user(p, email)
        checked = policy.check_role(role)
        if user.role != checked:
            self.identity.set_user_role(user.id, checked)
            self._audit(p, "user.role", email_key(user.email), {"id": user.id, "role": checked,
                                                                 "previous": user.role})
        return replace(user, role=checked)

    # management: projects
    def _managed_project(self, p: Principal, project_id: str) -> Project:
        self._require_manager(p)
        project = self.identity.project(project_id)
        if project is None or not policy.is_visible(p, project, None, include_archived=True):
            raise not_found(project_id)
        if project.kind == "home":
            raise Forbidden(f"Forbidden: {project_id} is a home: it belongs to its owner and takes no settings, "
                            "archiving or grants")
        return project

    def projects(self, p: Principal, *, include_archived: bool = False) -> list[Project]:
        """The projects a manager oversees: ordinary ones (archived too when asked). Homes stay private."""
        self._require_manager(p)
        return [x for x in self.visible_projects(p, include_archived=include_archived) if x.kind == "ordinary"]

    def add_project(self, p: Principal, project_id: str, *, name: str | None = None, description: str = "",
                    framework: str | None = None, language: str | None = None) -> Project:
        self._require_manager(p)
        if not _PROJECT_ID.match(project_id):
            raise InvalidArgument("ID", f"{project_id!r} must be 1-64 lower-case letters, digits, '.', '-' or '_', "
                                        "starting with a letter or digit")
        if self.identity.project(project_id) is not None:
            raise Conflict(f"ID: project {project_id} exists already; change it with 'notewell project set'")
        project = Project(id=project_id, name=(name or "").strip() or project_id, description=description.strip(),
                          kind="ordinary", status="active", framework=framework or None, language=language or None,
                          created_at=now_iso(), custom_name=bool(name), custom_description=bool(description))
        self.identity.add_project(project)
        self._audit(p, "project.add", project_id, {"name": project.name})
        return project

    def set_project_status(self, p: Principal, project_id: str, status: str) -> Project:
        project = self._managed_project(p, project_id)
        if project.status == status:
            return project
        updated = replace(project, status="archived" if status == "archived" else "active")
        self.identity.update_project(updated)
        self._audit(p, "project.archive" if status == "archived" else "project.unarchive", project_id)
        return updated

    def archive_project(self, p: Principal, project_id: str) -> Project:
        return self.set_project_status(p, project_id, "archived")

    def unarchive_project(self, p: Principal, project_id: str) -> Project:
        return self.set_project_status(p, project_id, "active")

    def set_project(self, p: Principal, project_id: str, *, name: str | None = None, description: str | None = None,
                    framework: str | None = None, language: str | None = None) -> Project:
        """Change the named fields; a name or description set here is kept over the folder's README."""
        project = self._managed_project(p, project_id)
        if name is not None and not name.strip():
            raise InvalidArgument("--name", "must not be empty")
        updated = project
        if name is not None:
            updated = replace(updated, name=name.strip(), custom_name=True)
        if description is not None:
            updated = replace(updated, description=description.strip(), custom_description=True)
        if framework is not None:
            updated = replace(updated, framework=framework.strip() or None)
        if language is not None:
            updated = replace(updated, language=language.strip() or None)
        if updated != project:
            self.identity.update_project(updated)
            given = (("name", name), ("description", description), ("framework", framework), ("language", language))
            changed: dict[str, object] = {k: v for k, v in given if v is not None}
            self._audit(p, "project.set", project_id, changed)
        return updated

    # management: grants
    def grant(self, p: Principal, email: str, project_id: str, level: GrantLevel) -> Grant:
        user = self.user(p, email)
        project = self._managed_project(p, project_id)
        previous = self.identity.grant(user.id, project.id)
        grant = Grant(user_id=user.id, project_id=project.id, level=level, created_at=now_iso())
        if previous is None or previous.level != level:
            self.identity.set_grant(grant)
            self._audit(p, "grant.set", project.id, {"user": email_key(user.email), "level": level,
                                                     "previous": previous.level if previous else None})
        return grant if previous is None else replace(previous, level=level)

    def ungrant(self, p: Principal, email: str, project_id: str) -> None:
        user = self.user(p, email)
        project = self._managed_project(p, project_id)
        previous = self.identity.grant(user.id, project.id)
        if previous is None or not self.identity.remove_grant(user.id, project.id):
            raise NotFound(f"{user.email} holds no grant on {project.id}")
        self._audit(p, "grant.remove", project.id, {"user": email_key(user.email), "previous": previous.level})

    def grants(self, p: Principal, email: str) -> list[Grant]:
        """The grants a user holds, by project id."""
        return self.identity.grants_for_user(self.user(p, email).id)

    def project_grants(self, p: Principal, project_id: str) -> list[Grant]:
        """Who holds a grant on an ordinary project, by user id."""
        return self.identity.grants_for_project(self._managed_project(p, project_id).id)

    # management: tokens
    def mint_token(self, p: Principal, email: str, scopes: Iterable[str], *, project_id: str | None = None,
                   name: str = "", expires: str | None = None) -> MintedToken:
        """A new token for the user. The secret is returned once and never stored (only its hash)."""
        user = self.user(p, email)
        if not user.active:
            raise InvalidArgument("--user", f"{user.email} is deactivated; reactivate the user first")
        checked = policy.check_token_scopes(user.role, scopes, project_bound=project_id is not None)
        if project_id is not None:
            if self.identity.project(project_id) is None:
                raise not_found(project_id)
            if not self.can_read(self.user_principal(user), project_id):
                raise Forbidden(f"--project: {user.email} cannot see project {project_id}; grant access first "
                                "with 'notewell grant'")
        expires_at = expiry_from(expires)
        minted = mint_secret()
        token = TokenRecord(id=minted.token_id, user_id=user.id, name=name.strip(), scopes=checked,
                            project_id=project_id, created_at=now_iso(), expires_at=expires_at)
        self.identity.add_token(token, minted.secret_hash)
        self._audit(p, "token.mint", token.id, {"user": email_key(user.email), "name": token.name,
                                                "scopes": list(checked), "project": project_id,
                                                "expiresAt": expires_at})
        return MintedToken(secret=minted.secret, token=token)

    def tokens(self, p: Principal, email: str | None = None) -> list[TokenRecord]:
        self._require_manager(p)
        return self.identity.tokens(self.user(p, email).id if email else None)

    def revoke_token(self, p: Principal, token_id: str) -> TokenRecord:
        """Revoke the token: it fails on its next call. Revoking a revoked token changes nothing."""
        self._require_manager(p)
        token = self.identity.token(token_id.strip())
        if token is None:
            raise NotFound(f"No token with id {token_id.strip()}; see 'notewell token list'")
        if token.revoked_at is not None:
            return token
        at = now_iso()
        self.identity.revoke_token(token.id, at)
        self._audit(p, "token.revoke", token.id, {"user": token.user_id})
        return replace(token, revoked_at=at)

    # audit
    def audit_log(self, p: Principal, since: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        """Entries at or after ``since`` (ISO 8601 UTC), oldest first."""
        self._require_manager(p)
        return self.store.audit.list_since(since, limit)


def _handle_from_email(email: str) -> str:
    local = re.sub(r"[^a-z0-9_-]+", "-", email.split("@")[0].lower()).strip("-_")
    return local[:32] or "user"


def _readme_fields(folder: Path) -> tuple[str, str]:
    """(name, description) from the folder's README front matter; empty strings when absent."""
    for readme in README_NAMES:
        path = folder / readme
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return "", ""
            meta = split_front_matter(text)[0] or _loose_front_matter(text)
            return _one_line(meta.get("name")), _one_line(meta.get("description"))
    return "", ""


def _loose_front_matter(text: str) -> dict[str, object]:
    """``key: value`` lines of a front matter block that is not valid YAML (say, an unquoted colon in
    the value), which people write and Obsidian shows; the first colon splits key from value."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}
    fields: dict[str, object] = {}
    for line in lines[1:]:
        if line.rstrip() in ("---", "..."):
            return fields
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            fields[key.strip()] = value.strip().strip("\"'")
    return {}


def _one_line(value: object) -> str:
    return " ".join(str(value).split()) if value is not None else ""
