"""The records of identity and access: roles, users, projects, grants, tokens and audit entries.

Plain frozen dataclasses with no behaviour beyond small derived values, so that every store (SQLite,
PostgreSQL) can build and return them without knowing any permission rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Role = Literal["member", "staff", "admin"]
ROLES: tuple[Role, ...] = ("member", "staff", "admin")
ProjectKind = Literal["ordinary", "home"]
ProjectStatus = Literal["active", "archived"]
GrantLevel = Literal["read", "write"]
GRANT_LEVELS: tuple[GrantLevel, ...] = ("read", "write")
HOME_PREFIX = "~"



def email_key(email: str) -> str:
    """The form emails are compared in: stripped and lower-cased."""
    return email.strip().lower()


def home_id(handle: str) -> str:
    return f"{HOME_PREFIX}{handle}"


@dataclass(frozen=True)
class User:
    id: str
    email: str  # as the admin typed it; compared through email_key()
    name: str
    handle: str
    role: Role
    active: bool = True
    created_at: str = ""

    @property
    def home_project(self) -> str:
        return home_id(self.handle)


@dataclass(frozen=True)
class Project:
    id: str  # slug; homes are "~<handle>"
    name: str
    description: str
    kind: ProjectKind
    status: ProjectStatus
    framework: str | None = None
    language: str | None = None
    owner_user_id: str | None = None  # homes only
    created_at: str = ""  # ISO 8601 UTC
    custom_name: bool = False  # set from the CLI: the folder's README no longer overrides it
    custom_description: bool = False


@dataclass(frozen=True)
class Grant:
    user_id: str
    project_id: str
    level: GrantLevel
    created_at: str = ""


@dataclass(frozen=True)
class WebSession:
    """A browser session as the store keeps it: found by the SHA-256 of the cookie's secret (never the
    secret), its user, the user's session generation when it began, when it ends unless renewed, and a
    message for the next page it shows."""

    user_id: str
    generation: int
    expires_at: str  # ISO 8601 UTC
    message: str | None = None


@dataclass(frozen=True)
class TokenRecord:
    """A token as stored: everything but the secret, which is kept only as a hash."""

    id: str
    user_id: str
    name: str
    scopes: tuple[str, ...]
    project_id: str | None  # None: user-scoped; set: project-scoped
    created_at: str
    expires_at: str | None = None
    last_used_at: str | None = None
    revoked_at: str | None = None
    last_tool: str | None = None  # the name of the last MCP tool called with this token
    last_tool_at: str | None = None

    def state(self, now: str) -> Literal["active", "revoked", "expired"]:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: str
    user_id: str
    token_id: str | None
    action: str  # e.g. "token.mint", "grant.set", "project.archive"
    target: str
    detail: dict[str, object] = field(default_factory=dict)
