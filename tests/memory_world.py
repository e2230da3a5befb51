"""A small world of users, projects and tokens for the memory tests (service, CLI and MCP).

Projects: apollo and hermes (ordinary), each user's home ~handle. Users: alice (member, write grant on
apollo), bob (member, read grant on apollo), carol (member, no grant), sam (staff), ada (admin).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from conftest import runtime_over
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.runtime import Runtime
from notewell.services.memory import MemoryService
from notewell.store import Store, open_store

USERS = {  # handle: (role, {project: grant level})
    "alice": ("member", {"apollo": "write"}),
    "bob": ("member", {"apollo": "read"}),
    "carol": ("member", {}),
    "sam": ("staff", {}),
    "ada": ("admin", {}),
}
PROJECTS = ("apollo", "hermes")
ALL_MEMORY = ("memory:read", "memory:write")


@dataclass
class MemoryWorld:
    store: Store
    rt: Runtime
    service: MemoryService
    emails: dict[str, str] = field(default_factory=dict)

    def user(self, handle: str) -> Principal:
        """The user with every scope their role allows, no token binding."""
        found = self.store.identity.user_by_email(self.emails[handle])
        assert found is not None
        return user_principal(found)

    def token(self, handle: str, scopes: Iterable[str] = ALL_MEMORY, project: str | None = None) -> str:
        return (self.rt.administration.mint_token(LOCAL_OWNER, self.emails[handle], list(scopes), project_id=project)
                .secret)

    def principal(self, handle: str, scopes: Iterable[str] = ALL_MEMORY, project: str | None = None) -> Principal:
        """The Principal a real token of this user carries (built by authenticate)."""
        return self.rt.authentication.authenticate(self.token(handle, scopes, project))


def build_world(db: Path | str, vault: Path) -> MemoryWorld:
    """The world in the store at ``db`` (a SQLite path or a postgresql:// URL) over the folder ``vault``."""
    store = open_store(str(db))
    rt = runtime_over(store, vault)
    administration = rt.administration
    for project in PROJECTS:
        if store.identity.project(project) is None:
            administration.add_project(LOCAL_OWNER, project)
    world = MemoryWorld(store, rt, rt.memory)
    for handle, (role, grants) in USERS.items():
        email = f"{handle}@example.com"
        world.emails[handle] = email
        if store.identity.user_by_email(email) is None:
            administration.add_user(LOCAL_OWNER, email, role, handle=handle)
        for project, level in grants.items():
            administration.grant(LOCAL_OWNER, email, project, level)  # type: ignore[arg-type]
    return world
