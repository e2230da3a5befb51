"""A small world of users, projects and tokens for the memory tests (service, CLI and MCP).

Projects: apollo and hermes (ordinary), each user's home ~handle. Users: alice (member, write grant on
apollo), bob (member, read grant on apollo), carol (member, no grant), sam (staff), ada (admin).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.access.service import AccessService
from notewell.search.engine import SearchEngine
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
    access: AccessService
    service: MemoryService
    emails: dict[str, str] = field(default_factory=dict)

    def user(self, handle: str) -> Principal:
        """The user with every scope their role allows, no token binding."""
        found = self.store.identity.user_by_email(self.emails[handle])
        assert found is not None
        return self.access.user_principal(found)

    def token(self, handle: str, scopes: Iterable[str] = ALL_MEMORY, project: str | None = None) -> str:
        return self.access.mint_token(LOCAL_OWNER, self.emails[handle], list(scopes), project_id=project).secret

    def principal(self, handle: str, scopes: Iterable[str] = ALL_MEMORY, project: str | None = None) -> Principal:
        """The Principal a real token of this user carries (built by authenticate)."""
        return self.access.authenticate(self.token(handle, scopes, project))


def build_world(db: Path | str, vault: Path | None = None) -> MemoryWorld:
    """The world in the store at ``db``: a SQLite path or a postgresql:// URL."""
    store = open_store(str(db))
    access = AccessService(store, vault)
    for project in PROJECTS:
        if store.identity.project(project) is None:
            access.add_project(LOCAL_OWNER, project)
    world = MemoryWorld(store, access, MemoryService(store, access, SearchEngine(store.documents)))
    for handle, (role, grants) in USERS.items():
        email = f"{handle}@example.com"
        world.emails[handle] = email
        if store.identity.user_by_email(email) is None:
            access.add_user(LOCAL_OWNER, email, role, handle=handle)
        for project, level in grants.items():
            access.grant(LOCAL_OWNER, email, project, level)  # type: ignore[arg-type]
    return world
