"""The composition root: settings, store and services for one command or server process."""

from __future__ import annotations

from dataclasses import dataclass

from notewell.access.service import AccessService
from notewell.access.sign_in import SignInService
from notewell.config import Settings, load_settings
from notewell.search.engine import SearchEngine
from notewell.services.brain import BrainService
from notewell.store import Store, open_store


@dataclass
class Runtime:
    settings: Settings
    store: Store
    engine: SearchEngine
    access: AccessService
    sign_in: SignInService
    brain: BrainService

    def close(self) -> None:
        self.store.close()


def open_runtime(vault: str | None = None, db: str | None = None, *, create: bool = True) -> Runtime:
    """``create=False``: a missing SQLite index is an error (commands that only read, such as search)."""
    settings = load_settings(vault, db)
    store = open_store(settings.db, create=create)
    access = AccessService(store, settings.vault)
    return Runtime(settings=settings, store=store, engine=SearchEngine(store.documents), access=access,
                   sign_in=SignInService(store, access), brain=BrainService(store, access))
