"""The Principal: who is calling, built once per request from the token and passed down."""

from __future__ import annotations

from dataclasses import dataclass

from notewell.records.identity import Role

SCOPES: tuple[str, ...] = (
    "knowledge:read", "knowledge:write", "memory:read", "memory:write", "sessions", "admin",
)


@dataclass(frozen=True)
class Principal:
    user_id: str
    email: str
    handle: str
    role: Role
    scopes: frozenset[str]
    token_id: str | None = None  # None for the local owner (CLI, stdio without a token)
    bound_project: str | None = None  # set for a project-scoped token
    local_owner: bool = False

    @property
    def home_project(self) -> str:
        return f"~{self.handle}"

    @property
    def default_project(self) -> str:
        """Where a write lands when no project is named: the bound project, else the caller's home."""
        return self.bound_project or self.home_project

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes


LOCAL_OWNER = Principal(
    user_id="local-owner", email="owner@localhost", handle="owner", role="admin",
    scopes=frozenset(SCOPES), local_owner=True,
)
