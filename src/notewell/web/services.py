"""What the web pages may call: the services, built once per server by the web door's adapter."""

from __future__ import annotations

from dataclasses import dataclass

from notewell.access.own_tokens import OwnTokenService
from notewell.access.service import AccessService
from notewell.access.sign_in import SignInService
from notewell.services.brain import BrainService
from notewell.services.knowledge import KnowledgeService
from notewell.services.memory import MemoryService


@dataclass(frozen=True)
class WebServices:
    access: AccessService
    sign_in: SignInService
    own_tokens: OwnTokenService
    knowledge: KnowledgeService
    memory: MemoryService
    brain: BrainService
    store_url: str  # where the store is (a path, or a PostgreSQL URL without its password): the stdio set-up names it
