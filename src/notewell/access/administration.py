"""Administration: users, projects, grants and tokens, and the audit log; an audit entry for every change.

Every method takes the Principal and asks notewell.access.authorization first: managing needs the
``access:manage`` action (users, tokens, the audit log) or ``project:manage`` on the project (its
settings, archiving and grants). Errors name fields by their domain name (``email``, ``project``,
``scopes``); each door words the fix in its own terms (the CLI's flags, a form's fields).
"""

from __future__ import annotations

import re
import secrets
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from notewell.access import policy
from notewell.access.audit import AuditTrail
from notewell.access.authentication import user_principal
from notewell.access.authorization import Authorization
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.access.token_secrets import (
    TOKEN_ID_HELP,
    expiry_from,
    is_token_id,
    mint_secret,
    secret_matches,
    secrets_in,
    token_id_of,
)
from notewell.errors import ConfigError, Conflict, Forbidden, InvalidArgument, NotFound
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
)
from notewell.store.base import IdentityRepository
from notewell.timestamps import now_iso

_HANDLE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
_PROJECT_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_EMAIL = re.compile(r"^[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)*$")  # RFC 5322's atoms, any script's letters
NAME_CHARS = 200  # a user's or a project's name
DESCRIPTION_CHARS = 1000  # a project's description
LABEL_CHARS = 100  # a project's framework or language


_REFUSED_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")  # controls, formats, surrogates, separators
_NAME_JOINERS = "\u200c\u200d\u200e\u200f"  # ZWNJ and ZWJ (Persian, Indic, emoji), LRM and RLM: parts of names


def _text(field: str, value: str | None, limit: int) -> str | None:
    """``value`` stripped, refused (naming ``field``) when longer than ``limit`` characters or holding a control
    character or a line separator (a NUL, a line break: a name is shown on one line; a no-break or ideographic
    space and a zero-width joiner are parts of names); None stays None."""
    if value is None:
        return None
    clean = value.strip()
    if len(clean) > limit:
        raise InvalidArgument(field, f"is {len(clean)} characters; keep it to {limit}")
    if any(unicodedata.category(c) in _REFUSED_CATEGORIES and c not in _NAME_JOINERS for c in clean):
        raise InvalidArgument(field, "holds a control or invisible formatting character (a NUL, a tab, a line "
                                     "break, a direction override); write it on one line, as it shows")
    return clean


@dataclass(frozen=True)
class MintedToken:
    secret: str  # shown once; never stored, logged or audited
    token: TokenRecord


@dataclass(frozen=True)
class TokenStanding:
    """A token as its next call finds it: ``state`` and ``scopes`` are what authentication gives it now (its
    user deactivated: no call; scopes its user's role no longer allows: cut), ``lost`` the minted scopes cut."""

    token: TokenRecord
    email: str
    role: str | None
    state: policy.TokenState
    scopes: tuple[str, ...]
    lost: tuple[str, ...]


def token_standing(token: TokenRecord, user: User | None, now: str | None = None) -> TokenStanding:
    scopes = policy.token_scopes_now(user.role, token.scopes) if user is not None else ()
    return TokenStanding(token=token, email=user.email if user is not None else token.user_id,
                         role=user.role if user is not None else None,
                         state=policy.token_state_now(token, user, now or now_iso()), scopes=scopes,
                         lost=tuple(s for s in token.scopes if s not in scopes))


class Administration:
    def __init__(self, identity: IdentityRepository, authorization: Authorization, audit: AuditTrail,
                 vault: Path | None = None) -> None:
        self.identity = identity
        self.authorization = authorization
        self.audit = audit
        self.vault = vault  # where a new user's home folder is made; None: nowhere

    # vault projects
    def sync_vault_projects(self, ids: Sequence[str], described: Mapping[str, tuple[str, str]] | None = None) -> None:
        """Top-level vault folders become ordinary active projects, named and described by ``described``
        (id -> (name, description), from the folder's README front matter) unless set from the command line.
        "~handle" folders are homes, made with their users: a folder with no such user stays a project nobody
        sees. Called by the indexing service, which reads the READMEs."""
        existing = {project.id: project for project in self.identity.projects()}
        for project_id in ids:
            if project_id.startswith(HOME_PREFIX):
                continue
            name, description = (described or {}).get(project_id, ("", ""))
            project = existing.get(project_id)
            if project is None:
                created = Project(id=project_id, name=name or project_id, description=description, kind="ordinary",
                                  status="active", created_at=now_iso())
                try:
                    self.identity.add_project(created)
                except Conflict:  # another process found it at the same moment
                    continue
                self.audit.record(LOCAL_OWNER, "project.discover", project_id, {"name": created.name})
                continue
            if project.kind != "ordinary":
                continue
            updated = replace(project,
                              name=project.name if project.custom_name else (name or project_id),
                              description=project.description if project.custom_description else description)
            if updated != project:
                self.identity.update_project(updated)

    # users
    def user(self, p: Principal, email: str) -> User:
        self.authorization.authorize(p, "access:manage")
        if not email.strip():
            raise InvalidArgument("email", "is empty: give the email address of a user")
        user = self.identity.user_by_email(email)
        if user is None:
            raise NotFound(f"No user with email {email.strip()}", field="email", remedy="list-users")
        return user

    def users(self, p: Principal) -> list[User]:
        self.authorization.authorize(p, "access:manage")
        return self.identity.users()

    def users_page(self, p: Principal, limit: int, offset: int) -> list[User]:
        """``limit`` users by email from the ``offset``-th (the store reads that page's rows alone)."""
        self.authorization.authorize(p, "access:manage")
        return self.identity.users_page(limit, offset)

    def add_user(self, p: Principal, email: str, role: str, *, name: str | None = None,
                 handle: str | None = None, home_folder: bool = True) -> User:
        """Create a user and their home project ``~handle``, and with ``home_folder`` its vault folder (when
        the vault is known)."""
        self.authorization.authorize(p, "access:manage")
        email = email.strip()
        name = _text("name", name, NAME_CHARS)
        if not _EMAIL.match(email):
            raise InvalidArgument("email", f"{email!r} is not an email address such as ada@example.com")
        checked_role = policy.check_role(role)
        if self.identity.user_by_email(email) is not None:
            raise Conflict(f"{email} is already a user (emails compare without case)", field="email",
                           remedy="list-users")
        if handle is None:
            handle = self._free_handle(_handle_from_email(email))
        elif not _HANDLE.match(handle):
            raise InvalidArgument("handle", f"{handle!r} must be 1-32 lower-case letters, digits, - or _, "
                                              "starting with a letter or digit")
        elif self.identity.user_by_handle(handle) is not None or self.identity.project(home_id(handle)):
            raise Conflict(f"{handle} is taken", field="handle", remedy="choose-handle")
        now = now_iso()
        user = User(id=f"u_{secrets.token_hex(8)}", email=email, name=(name or "").strip() or email.split("@")[0],
                    handle=handle, role=checked_role, active=True, created_at=now)
        home = Project(id=home_id(handle), name=f"{user.name} (home)", description=f"Private home of {email}",
                       kind="home", status="active", owner_user_id=user.id, created_at=now)
        if home_folder:
            self._make_home_folder(home.id)
        self.identity.add_user(user, home)
        self.audit.record(p, "user.add", email_key(email), {"id": user.id, "role": user.role, "handle": handle,
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
            (self.vault / project_id).mkdir(mode=0o700, exist_ok=True)  # a home is its owner's alone
        except OSError as exc:
            raise ConfigError(f"--vault: cannot create the home folder {self.vault / project_id} ({exc})") from exc

    def set_user_active(self, p: Principal, email: str, active: bool) -> User:
        """Deactivate (every token of the user fails on its next call, every browser session of theirs ends
        for good) or reactivate a user."""
        user = self.user(p, email)
        if user.active != active:
            if not active:
                self._keep_an_admin(p, user, "active")
            self.identity.set_user_active(user.id, active)
            if not active:
                self.identity.end_sessions(user.id)
            self.audit.record(p, "user.activate" if active else "user.deactivate", email_key(user.email),
                              {"id": user.id})
        return replace(user, active=active)

    def set_role(self, p: Principal, email: str, role: str) -> User:
        """Change a user's role; their tokens keep only the scopes the new role allows from the next call,
        and their browser sessions end (they sign in again, into the new role)."""
        user = self.user(p, email)
        checked = policy.check_role(role)
        if user.role != checked:
            if checked != "admin":
                self._keep_an_admin(p, user, "role")
            self.identity.set_user_role(user.id, checked)
            self.identity.end_sessions(user.id)
            self.audit.record(p, "user.role", email_key(user.email), {"id": user.id, "role": checked,
                                                                       "previous": user.role})
        return replace(user, role=checked)

    def _keep_an_admin(self, p: Principal, user: User, field: str) -> None:
        """A person may not demote or deactivate the last active admin (themselves, on the web page): the team
        would be left with no one to manage it but the server's command line. The local owner (that command
        line) may."""
        if p.local_owner or user.role != "admin" or not user.active:
            return
        if not self.identity.other_active_admins(user.id):  # counted in the store: no user is read
            raise Conflict(f"{user.email} is the last active admin; make another person admin first, so that "
                           "someone can still manage the team", field=field)

    # management: projects
    def projects(self, p: Principal, *, include_archived: bool = False) -> list[Project]:
        """The projects a manager oversees: ordinary ones (archived too when asked). Homes stay private."""
        self.authorization.authorize(p, "access:manage")
        return [x for x in self.authorization.projects(p, "project:manage")
                if include_archived or x.status != "archived"]

    def projects_page(self, p: Principal, limit: int, offset: int) -> list[Project]:
        """``limit`` of the projects a manager oversees (every ordinary one, archived too), by id, from the
        ``offset``-th: the store reads that page's rows alone."""
        self.authorization.authorize(p, "access:manage")
        return self.authorization.managed(p, self.identity.ordinary_projects_page(limit, offset))

    def _managed(self, p: Principal, project_id: str) -> Project:
        """The ordinary project p may manage. One missing, hidden or a home is refused in the same words for all
        three (a home is its owner's alone, so whether it exists is not said), naming the field and the listing."""
        try:
            return self.authorization.authorize(p, "project:manage", project_id)
        except NotFound:
            raise NotFound(f"no ordinary project has the id {project_id}", field="project",
                           remedy="list-projects") from None

    def add_project(self, p: Principal, project_id: str, *, name: str | None = None, description: str = "",
                    framework: str | None = None, language: str | None = None) -> Project:
        self.authorization.authorize(p, "access:manage")
        if not _PROJECT_ID.match(project_id):
            raise InvalidArgument("id", f"{project_id!r} must be 1-64 lower-case letters, digits, '.', '-' or '_', "
                                        "starting with a letter or digit")
        if self.identity.project(project_id) is not None:
            raise Conflict(f"project {project_id} exists already", field="id", remedy="set-project")
        name, description = _text("name", name, NAME_CHARS), _text("description", description, DESCRIPTION_CHARS) or ""
        framework, language = _text("framework", framework, LABEL_CHARS), _text("language", language, LABEL_CHARS)
        project = Project(id=project_id, name=(name or "").strip() or project_id, description=description.strip(),
                          kind="ordinary", status="active", framework=framework or None, language=language or None,
                          created_at=now_iso(), custom_name=bool(name), custom_description=bool(description))
        self.identity.add_project(project)
        self.audit.record(p, "project.add", project_id, {"name": project.name})
        return project

    def set_project_status(self, p: Principal, project_id: str, status: str) -> Project:
        project = self._managed(p, project_id)
        if project.status == status:
            return project
        updated = replace(project, status="archived" if status == "archived" else "active")
        self.identity.update_project(updated)
        self.audit.record(p, "project.archive" if status == "archived" else "project.unarchive", project_id)
        return updated

    def archive_project(self, p: Principal, project_id: str) -> Project:
        return self.set_project_status(p, project_id, "archived")

    def unarchive_project(self, p: Principal, project_id: str) -> Project:
        return self.set_project_status(p, project_id, "active")

    def set_project(self, p: Principal, project_id: str, *, name: str | None = None, description: str | None = None,
                    framework: str | None = None, language: str | None = None) -> Project:
        """Change the named fields; a name or description set here is kept over the folder's README."""
        project = self._managed(p, project_id)
        name, description = _text("name", name, NAME_CHARS), _text("description", description, DESCRIPTION_CHARS)
        framework, language = _text("framework", framework, LABEL_CHARS), _text("language", language, LABEL_CHARS)
        if name is not None and not name:
            raise InvalidArgument("name", "must not be empty")
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
            self.audit.record(p, "project.set", project_id, changed)
        return updated

    # management: grants
    def grant(self, p: Principal, email: str, project_id: str, level: GrantLevel) -> Grant:
        user = self.user(p, email)
        project = self._managed(p, project_id)
        previous = self.identity.grant(user.id, project.id)
        grant = Grant(user_id=user.id, project_id=project.id, level=level, created_at=now_iso())
        if previous is None or previous.level != level:
            self.identity.set_grant(grant)
            self.audit.record(p, "grant.set", project.id, {"user": email_key(user.email), "level": level,
                                                     "previous": previous.level if previous else None})
        return grant if previous is None else replace(previous, level=level)

    def ungrant(self, p: Principal, email: str, project_id: str) -> None:
        user = self.user(p, email)
        project = self._managed(p, project_id)
        previous = self.identity.grant(user.id, project.id)
        if previous is None or not self.identity.remove_grant(user.id, project.id):
            raise NotFound(f"{user.email} holds no grant on {project.id}")
        self.audit.record(p, "grant.remove", project.id, {"user": email_key(user.email), "previous": previous.level})

    def grants(self, p: Principal, email: str) -> list[Grant]:
        """The grants a user holds, by project id."""
        return self.identity.grants_for_user(self.user(p, email).id)

    def project_grants(self, p: Principal, project_id: str) -> list[Grant]:
        """Who holds a grant on an ordinary project, by user id."""
        return self.identity.grants_for_project(self._managed(p, project_id).id)

    def project_members(self, p: Principal, project_id: str, limit: int, offset: int) -> list[tuple[Grant, User]]:
        """A page of who holds a grant on an ordinary project, with each grant's user, by email: ``limit`` from the
        ``offset``-th (the store reads that page's rows alone)."""
        return self.identity.project_members(self._managed(p, project_id).id, limit, offset)

    # management: tokens
    def mint_token(self, p: Principal, email: str, scopes: Iterable[str], *, project_id: str | None = None,
                   name: str = "", expires: str | None = None) -> MintedToken:
        """A new token for the user. The secret is returned once and never stored (only its hash)."""
        user = self.user(p, email)
        if not user.active:
            raise InvalidArgument("user", f"{user.email} is deactivated; reactivate the user first")
        checked = policy.check_token_scopes(user.role, scopes, project_bound=project_id is not None)
        if project_id is not None:
            if self.identity.project(project_id) is None:
                raise NotFound(f"no project has the id {project_id}", field="project", remedy="list-projects")
            if not self.authorization.allowed(user_principal(user), "project:see", project_id):
                raise Forbidden(f"{user.email} cannot see project {project_id}", field="project", remedy="grant")
        expires_at = expiry_from(expires, field="expires")
        minted = mint_secret()
        token = TokenRecord(id=minted.token_id, user_id=user.id, name=name.strip(), scopes=checked,
                            project_id=project_id, created_at=now_iso(), expires_at=expires_at)
        self.identity.add_token(token, minted.secret_hash)
        self.audit.record(p, "token.mint", token.id, {"user": email_key(user.email), "name": token.name,
                                                "scopes": list(checked), "project": project_id,
                                                "expiresAt": expires_at})
        return MintedToken(secret=minted.secret, token=token)

    def token_standings(self, p: Principal, email: str | None, limit: int, offset: int) -> list[TokenStanding]:
        """The tokens (of one user, or everyone's) oldest first, ``limit`` from the ``offset``-th, with the state and
        scopes their next call meets: the store reads that page's tokens alone, and the users they belong to."""
        self.authorization.authorize(p, "access:manage")
        if limit < 1:
            raise InvalidArgument("limit", f"is {limit}; give 1 or more")
        if offset < 0:
            raise InvalidArgument("offset", f"is {offset}; give 0 or more")
        return self._standings(self.identity.tokens_oldest(self.user(p, email).id if email else None, limit, offset))

    def newest_standings(self, p: Principal, limit: int, offset: int) -> list[TokenStanding]:
        """Everyone's tokens newest first, ``limit`` from the ``offset``-th, as ``token_standings`` gives each: the
        store reads that page's tokens alone, and the users they belong to."""
        self.authorization.authorize(p, "access:manage")
        return self._standings(self.identity.tokens_newest(None, limit, offset))

    def _standings(self, tokens: Sequence[TokenRecord]) -> list[TokenStanding]:
        """Each token with the state and scopes its next call meets, its user read with the page's others (one
        statement)."""
        users = self.identity.users_by_id([t.user_id for t in tokens])
        now = now_iso()
        return [token_standing(t, users.get(t.user_id), now) for t in tokens]

    def standing(self, p: Principal, token: TokenRecord) -> TokenStanding:
        """One token with the state and scopes its next call meets."""
        self.authorization.authorize(p, "access:manage")
        return token_standing(token, self.identity.user(token.user_id))

    def _named_token(self, given: str) -> TokenRecord:
        """The token ``given`` names: its id, or its whole secret (a leaked token pasted as it was found: alone,
        quoted, after ``Bearer ``, as ``NAME=<secret>``), found by its hash as a sign-in finds it. Only a token
        id is ever repeated in an answer: any other text may hold a secret, or part of one."""
        text = given.strip()
        if is_token_id(text):
            token = self.identity.token(text)
            if token is None:
                raise NotFound(f"No token with id {text}", field="id", remedy="list-tokens")
            return token
        found_secrets = secrets_in(text)
        if len(found_secrets) > 1:
            raise NotFound("that holds more than one token secret; give one at a time (the text given is not "
                           "shown)", field="id", remedy="list-tokens")
        if not found_secrets:
            raise NotFound(f"that is not a token id ({TOKEN_ID_HELP}); the text given is not shown",
                           field="id", remedy="list-tokens")
        secret = found_secrets.pop()
        inner = token_id_of(secret)
        found = self.identity.token_with_hash(inner) if inner else None
        if found is None or not secret_matches(secret, found[1]):
            raise NotFound("No token has the secret given (not shown here); give its id from the token list",
                           field="id", remedy="list-tokens")
        return found[0]

    def revoke_token(self, p: Principal, token_id: str) -> TokenRecord:
        """Revoke the token: it fails on its next call. Revoking a revoked token changes nothing."""
        self.authorization.authorize(p, "access:manage")
        token = self._named_token(token_id.strip())
        if token.revoked_at is not None:
            return token
        at = now_iso()
        self.identity.revoke_token(token.id, at)
        self.audit.record(p, "token.revoke", token.id, {"user": token.user_id})
        return replace(token, revoked_at=at)

    # audit
    def audit_log(self, p: Principal, since: str | None = None) -> Iterator[AuditEntry]:
        """Entries at or after ``since`` (ISO 8601 UTC), oldest first, read a page at a time as they are taken
        (``AuditTrail.since``); p is refused at the call, before any is read."""
        self.authorization.authorize(p, "access:manage")
        return self.audit.since(since)

    def audit_page(self, p: Principal, since: str | None, limit: int, offset: int, *, action: str = "",
                   email: str = "") -> list[AuditEntry]:
        """A page of the entries at or after ``since``, newest first, ``limit`` from the ``offset``-th, of the actions
        starting with ``action`` (case and all) and of the user ``email`` names ("" for any); the store reads the
        page's rows alone. An email of no user is NotFound naming ``user``, the field the audit page filters by."""
        self.authorization.authorize(p, "access:manage")
        if "\x00" in action:
            raise InvalidArgument("action", "contains a NUL character (\\x00); remove it")
        user = self.identity.user_by_email(email) if email.strip() and "\x00" not in email else None
        if email.strip() and user is None:
            raise NotFound(f"no user with email {email.strip()}", field="user")
        return self.audit.entries.newest(since, action, user.id if user else None, limit, offset)

    def users_by_id(self, p: Principal, user_ids: Sequence[str]) -> dict[str, User]:
        """The users of these ids, by id, in one read (those a page of the audit log names)."""
        self.authorization.authorize(p, "access:manage")
        return self.identity.users_by_id(user_ids)

def _handle_from_email(email: str) -> str:
    local = re.sub(r"[^a-z0-9_-]+", "-", email.split("@")[0].lower()).strip("-_")
    return local[:32] or "user"
