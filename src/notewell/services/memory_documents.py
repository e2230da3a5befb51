"""Which documents a memory is about (docs/links.md, "Memories about a document").

``remember``'s ``about`` names one document (a vault path, project first, as searchKnowledge gives it): it
must be one the caller may read, or remember refuses it exactly as a missing one (hidden == missing). A
memory's text that names a document's path (vault-relative, or relative to the memory's project) is tied
to it too, as a mention, when the document exists and the author may read it; at most MENTIONS_MAX of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from notewell.access.policy import Action
from notewell.access.principal import Principal
from notewell.errors import NotFound
from notewell.paths import indexed_spelling, normalize_path, split_vault_path
from notewell.records.documents import DocKey
from notewell.records.memories import DocumentTie

if TYPE_CHECKING:
    from notewell.access.authorization import Authorization
    from notewell.store.base import Store

MENTIONS_MAX = 20  # documents a memory's text may tie it to
_CANDIDATES_MAX = 100  # path-like words looked up
_PATH_RUN = re.compile(r"[\w~][\w.~/-]*")  # a run of the characters a path is written with
_EXTENSION_MAX = 10
READ: Action = "knowledge:read"


def document_ties(store: Store, authorization: Authorization, p: Principal, about: str | None, content: str,
                  project: str) -> tuple[DocumentTie, ...]:
    """The ties a memory of ``p`` in ``project`` gets: ``about`` first, then the documents its text names."""
    ties: dict[DocKey, DocumentTie] = {}
    if about is not None:
        doc_project, typed = split_vault_path(normalize_path(about, "about"), "about")
        rel = indexed_spelling(store.documents, doc_project, typed) \
            if typed and authorization.allowed(p, READ, doc_project) else None  # by either form, as readDoc
        if rel is None:
            raise NotFound(f"Not found: {about}", field="about")
        ties[(doc_project, rel)] = DocumentTie(doc_project, rel, "about")
    named = _named_paths(content, project)
    existing = store.documents.checksums(named) if named else {}
    for key in named:
        if len(ties) > MENTIONS_MAX:
            break
        if key in existing and key not in ties and authorization.allowed(p, READ, key[0]):
            ties[key] = DocumentTie(key[0], key[1], "mention")
    return tuple(ties.values())


def _named_paths(content: str, project: str) -> list[DocKey]:
    """The (project, path) keys the text's path-like words could name, in order, each once."""
    keys: dict[DocKey, None] = {}
    for run in _PATH_RUN.finditer(content[:200_000]):
        word = _with_extension(run.group(0))
        if word is None:
            continue
        if "/" in word:
            first, _, rest = word.partition("/")
            keys[(first, rest)] = None
        keys[(project, word)] = None
        if len(keys) >= _CANDIDATES_MAX:
            break
    return list(keys)


def _with_extension(run: str) -> str | None:
    """The longest start of ``run`` that ends in an extension (a dot, then 1 to 10 ASCII letters or digits,
    the last at most 10 taken), or None. Found from the run's last such dot, so the cost is the run's length:
    a regex of the same meaning, ``[\\w~][\\w.~/-]*\\.[A-Za-z0-9]{1,10}``, backtracks from every start
    of a long run without a dot, and one word of 100,000 letters took a remember about five minutes."""
    dot = run.rfind(".")
    while dot > 0:
        length = 0
        while length < _EXTENSION_MAX and dot + 1 + length < len(run) and _is_ascii_alnum(run[dot + 1 + length]):
            length += 1
        if length:
            return run[:dot + 1 + length]
        dot = run.rfind(".", 0, dot)
    return None


def _is_ascii_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


@dataclass(frozen=True)
class Tied:
    """The documents a memory is tied to, as one caller sees them (vault paths, in path order)."""

    present: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()  # deleted since: the tie is kept, and marked


def readable_ties(store: Store, readable: Sequence[str], refs: Sequence[str]) -> dict[str, Tied]:
    """The documents each memory of ``refs`` is tied to in ``readable`` (the projects the caller may read):
    those that exist, and those deleted since (a moved document takes its ties along, so it is never gone). A
    tie into a project the caller may not read is not named at all, deleted or not, so nothing is learnt of
    what is hidden. A memory with none of either has no entry."""
    if not readable or not refs:
        return {}
    ties = store.memory_documents.ties(refs)
    wanted = [(t.project, t.path) for found in ties.values() for t in found if t.project in readable]
    existing = store.documents.checksums(wanted) if wanted else {}
    named: dict[str, Tied] = {}
    for ref, found in ties.items():
        seen = [t for t in found if t.project in readable]
        tied = Tied(tuple(f"{t.project}/{t.path}" for t in seen if (t.project, t.path) in existing),
                    tuple(f"{t.project}/{t.path}" for t in seen if (t.project, t.path) not in existing))
        if tied.present or tied.gone:
            named[ref] = tied
    return named
