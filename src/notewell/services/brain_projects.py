"""Which brain projects a caller has: their personal projects and the ordinary projects they see.

A personal project lives under its owner's home (``~alice/acme-robotics``): its knowledge is stored in
the home, so it is visible to its owner only, as the home is. The personal org is the home; its name is
the owner's email. Notewell has no organisations beyond that: an ordinary project is its own org.
"""

from __future__ import annotations

import re
import secrets
import unicodedata
from dataclasses import dataclass

from notewell.access.principal import Principal
from notewell.errors import Conflict
from notewell.records.brain import BrainProjectRecord
from notewell.records.identity import Project
from notewell.services.brain_errors import BrainValidation
from notewell.store.base import BrainRepository
from notewell.timestamps import now_iso

MAX_PERSONAL_PROJECTS = 1000  # a person's personal projects (each call may create one: the store stays bounded)
MAX_NAME_CHARS = 120
MAX_LABEL_CHARS = 60  # framework, language (the seed's maxLength)
MAX_SLUG_CHARS = 60
DEFAULT_NAME = "Default"
_SLUG_JUNK = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class BrainProject:
    id: str
    slug: str
    name: str
    org_id: str
    org_slug: str
    org_name: str
    framework: str | None
    language: str | None
    is_own: bool
    created_at: str
    store_project: str  # the Notewell project its knowledge lives in
    knowledge_path: str  # the memory path its knowledge lives under
    owner_user_id: str | None  # personal projects only

    @property
    def personal(self) -> bool:
        return self.owner_user_id is not None


def personal(record: BrainProjectRecord, owner: Principal) -> BrainProject:
    return BrainProject(id=record.id, slug=record.slug, name=record.name, org_id=record.home,
                        org_slug=f"personal-{owner.handle}", org_name=owner.email, framework=record.framework,
                        language=record.language, is_own=True, created_at=record.created_at,
                        store_project=record.home, knowledge_path=f"brain/{record.slug}",
                        owner_user_id=record.owner_user_id)


def ordinary(project: Project, p: Principal) -> BrainProject:
    """A Notewell project as a brain project (its own org); a home bound to a token is the owner's."""
    own = project.kind == "home"
    return BrainProject(id=project.id, slug=project.id.lstrip("~"), name=project.name,
                        org_id=project.id, org_slug=f"personal-{p.handle}" if own else project.id,
                        org_name=p.email if own else project.name, framework=project.framework,
                        language=project.language, is_own=own, created_at=project.created_at,
                        store_project=project.id, knowledge_path="brain", owner_user_id=None)


def check_name(name: str, field: str = "name") -> str:
    cleaned = " ".join(name.split())
    if not cleaned:
        raise BrainValidation(field, "must not be empty; give the project's name, e.g. \"Acme Robotics\"")
    if len(cleaned) > MAX_NAME_CHARS:
        raise BrainValidation(field, f"is {len(cleaned)} characters; keep it to {MAX_NAME_CHARS}")
    if "\x00" in cleaned:
        raise BrainValidation(field, "contains a NUL character; remove it")
    return cleaned


def check_label(value: str | None, field: str) -> str | None:
    if value is None or not value.strip():
        return None
    cleaned = value.strip()
    if len(cleaned) > MAX_LABEL_CHARS or "\x00" in cleaned:
        raise BrainValidation(field, f"must be at most {MAX_LABEL_CHARS} characters without NUL, e.g. \"react\"")
    return cleaned


def slugify(name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = _SLUG_JUNK.sub("-", ascii_name.lower()).strip("-")[:MAX_SLUG_CHARS].strip("-")
    return slug or "project"


def free_slug(base: str, taken: set[str]) -> str:
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def ensure_named(repo: BrainRepository, p: Principal, name: str, framework: str | None,
                 language: str | None, *, field: str = "name") -> tuple[BrainProjectRecord, bool]:
    """The caller's personal project called ``name`` (case-insensitive), created when missing; framework
    and language are kept only when it is created. A person holds at most MAX_PERSONAL_PROJECTS (``field``
    is named when a new one would pass it)."""
    key = name.casefold()
    found = repo.project_by_name(p.user_id, key)
    if found is not None:
        return found, False
    if repo.personal_project_count(p.user_id) >= MAX_PERSONAL_PROJECTS:
        raise BrainValidation(field, f"you have {MAX_PERSONAL_PROJECTS} personal projects, the most one person may "
                                     "have; name one of them, or delete an empty one first",
                              remedy="list-brain-projects")
    home = p.home_project
    base = slugify(name)
    for _ in range(5):  # another request may take the same slug meanwhile
        slug = free_slug(base, repo.project_slugs(home))
        record = BrainProjectRecord(id=f"{home}/{slug}", owner_user_id=p.user_id, home=home, slug=slug, name=name,
                                    name_key=key, framework=framework, language=language, created_at=now_iso())
        try:
            return repo.add_project(record)
        except Conflict:
            continue
    slug = f"{base}-{secrets.token_hex(3)}"
    return repo.add_project(BrainProjectRecord(id=f"{home}/{slug}", owner_user_id=p.user_id, home=home, slug=slug,
                                               name=name, name_key=key, framework=framework, language=language,
                                               created_at=now_iso()))
