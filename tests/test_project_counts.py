"""Each project's document count, kept by the store's writer, against a recount (both backends).

Hypothesis drives one store per backend through any sequence of write transactions (documents added,
rewritten at another size, deleted, renamed within and across projects, a transaction rolled back), and
after each one the counts the listings read and the store's sizes equal a count of the documents as they
are. Then listProjects' counts through the service.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notewell.records.documents import DocumentInput
from notewell.store import open_store
from notewell.store.base import Store

KEYS = [(project, path) for project in ("p", "q", "~r") for path in ("a.md", "b.md", "sub/c.md")]
Op = tuple[str, int, int]  # (what, a key, another key or a size)
ops = st.lists(st.tuples(st.sampled_from(["upsert", "delete", "rename"]), st.integers(0, len(KEYS) - 1),
                         st.integers(0, 40)), min_size=1, max_size=8)


def _input(key: tuple[str, str], size: int) -> DocumentInput:
    text = "x" * size
    return DocumentInput(key[0], key[1], key[1], "", size, 1, hashlib.sha256(text.encode()).hexdigest(), text)


class Aborted(Exception):
    """Raised inside a writer so that its transaction rolls back."""


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url)
    yield opened
    opened.close()


def _recount(store: Store) -> tuple[Counter[str], int]:
    state = store.documents.state()
    return Counter(project for project, _ in state), sum(s.size for s in state.values())


def _apply(store: Store, batch: list[Op], abort: bool) -> None:
    present = set(store.documents.state())
    try:
        with store.documents.writer() as writer:
            for what, index, other in batch:
                key = KEYS[index]
                if what == "upsert":
                    writer.upsert(_input(key, other))
                    present.add(key)
                elif what == "delete":
                    writer.delete(key)
                    present.discard(key)
                elif key in present and KEYS[other % len(KEYS)] not in present:
                    writer.rename(key, KEYS[other % len(KEYS)], 2)
                    present.discard(key)
                    present.add(KEYS[other % len(KEYS)])
            if abort:
                raise Aborted
    except Aborted:
        pass


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.tuples(ops, st.booleans()), min_size=1, max_size=4))
def test_the_counts_equal_a_recount_after_any_writes(store: Store, batches: list[tuple[list[Op], bool]]) -> None:
    for batch, abort in batches:
        _apply(store, batch, abort)
        counts, size = _recount(store)
        assert store.documents.project_counts(["p", "q", "~r", "none"]) == dict(counts)
        assert store.documents.sizes()[:2] == (sum(counts.values()), size)
