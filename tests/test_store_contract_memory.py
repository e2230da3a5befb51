"""Memories on SQLite and PostgreSQL: the same writes, the same strict and tolerant search answers.

Comparisons write one generated set of memories into both backends and require the same memories
(and the same matched words) for many queries; the ranking inside a result may differ, since SQLite
ranks with bm25 and PostgreSQL with ts_rank, but the documented blend runs on both. Behaviour tests
take ``store_url`` and run once per backend.
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import runtime_over
from notewell.access.principal import LOCAL_OWNER
from notewell.errors import Conflict, InvalidArgument
from notewell.records.memories import MemoryHit, MemoryInput, MemoryQuery
from notewell.runtime import Runtime
from notewell.services.memory import MemoryService
from notewell.services.memory_rank import query_terms, tolerant_terms
from notewell.store import Store, open_store
from pg import PgCluster

NOW = "2026-11-29T12:00:00.000000Z"
VOCAB = ["token", "tokens", "tokenizer", "fallback", "deploy", "deployment", "deployed", "Running", "runs",
         "naïve", "NAIVE", "café", "Straße", "strasse", "İstanbul", "日本語", "σοφια", "ΣΟΦΙΑ", "e-mail",
         "user@example.com", "v1.2.3", "https://example.com/a/b", "rate-limit", "x_y", "O'Brien", "back\\slash",
         "apollo", "hermes", "decision", "decided", "postgres", "sqlite", "index", "indexes", "indexing",
         "the", "and", "of", "meeting", "budget", "Q3", "2026", "1e5", "cost", "costs", "costly",
         "我们的生产数据库是PostgreSQL", "データベースは本番", "데이터베이스는"]
PATHS = ["", "decisions", "decisions/pricing", "meetings", "notes/ops", "decisions-old"]


def memory(i: int, rng: random.Random, project: str) -> MemoryInput:
    content = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(3, 40)))
    title = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 4)))
    tags = tuple(sorted({rng.choice(VOCAB) for _ in range(rng.randint(0, 3))}))
    kind = rng.choice(["durable", "durable", "working"])
    return MemoryInput(
        ref=f"mem_{i:05d}", project=project, author_user_id="u1", author_token_id=None, memory_type=kind,
        path=rng.choice(PATHS), title=title, content=content, tags=tags,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
        created=f"2026-{1 + i % 11:02d}-01T00:00:{i % 60:02d}Z",
        expires_at=("2026-06-01T00:00:00Z" if kind == "working" and i % 2 else None),
    )


def fill(store: Store, count: int = 300, seed: int = 11) -> None:
    rng = random.Random(seed)
    for i in range(count):
        m = memory(i, rng, rng.choice(["apollo", "hermes"]))
        supersedes = f"mem_{i - 3:05d}" if i % 10 == 9 else None
        try:
            store.memories.add(m, supersedes=supersedes)
        except Conflict:
            store.memories.add(m)
        if i % 13 == 0:
            store.memories.forget(m.ref, "u1", "test", NOW)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, pg_cluster: PgCluster) -> Iterator[tuple[Store, Store]]:
    lite = open_store(str(tmp_path_factory.mktemp("mem-contract") / "index.db"))
    pg = open_store(pg_cluster.url(pg_cluster.create_database()))
    for store in (lite, pg):
        fill(store)
    yield lite, pg
    lite.close()
    pg.close()


def outcome(hits: list[MemoryHit]) -> dict[str, object]:
    return {h.record.ref: (h.record, h.matched) for h in hits}


QUERIES = [
    "token", "tokens fallback", "TOKENIZER", "deploy", "deployment deployed", "running", "run", "naive", "naïve",
    "cafe", "strasse", "straße", "istanbul", "日本語", "σοφια", "mail", "example", "com", "rate limit", "x", "y",
    "brien", "o brien", "slash", "apollo decisions", "decisions", "pricing", "index", "indexing", "the", "of and",
    "budget q3", "2026", "1e5", "cost", "costs", "tok", "dep", "co", "zzz", "v1", "3", "meeting budget cost",
    "数据库", "生产 postgresql", "库", "データ", "데이터베이스", "postgresql", "本番は", "数据库在哪里",
]


@pytest.mark.parametrize("mode", ["strict", "tolerant"])
def test_searches_find_the_same_memories(pair: tuple[Store, Store], mode: str) -> None:
    lite, pg = pair
    nonempty = 0
    for text in QUERIES:
        terms = query_terms(text)
        if mode == "tolerant":
            terms = tolerant_terms(terms)
        for projects, prefix, kind in ((["apollo", "hermes"], "", None), (["apollo"], "decisions", None),
                                        (["hermes"], "", "working"), ([], "", None)):
            q = MemoryQuery(projects=projects, terms=terms, now=NOW, limit=1000, path_prefix=prefix, memory_type=kind)
            a = getattr(lite.memories, mode)(q)
            b = getattr(pg.memories, mode)(q)
            assert outcome(a) == outcome(b), (text, projects, prefix, kind)
            nonempty += bool(a)
    assert nonempty > len(QUERIES)


def test_listings_and_counts_are_identical(pair: tuple[Store, Store]) -> None:
    lite, pg = pair
    for projects in (["apollo"], ["hermes", "apollo"], []):
        for inactive in (False, True):
            assert list(lite.memories.all(projects, inactive)) == list(pg.memories.all(projects, inactive))
        assert lite.memories.count(projects) == pg.memories.count(projects)
    assert lite.memories.count() == pg.memories.count() > 0
    assert lite.memories.get("mem_00009") == pg.memories.get("mem_00009")


def test_a_title_match_outranks_a_content_match_on_both(store_url: str) -> None:
    store = open_store(store_url)
    try:
        rng = random.Random(1)
        base = replace(memory(1, rng, "apollo"), memory_type="durable", expires_at=None)
        store.memories.add(replace(base, ref="in_content", title="other", content="the kestrel contract", tags=(),
                                   content_hash="a"))
        store.memories.add(replace(base, ref="in_title", title="kestrel", content="the contract", tags=(),
                                   content_hash="b"))
        for mode in ("strict", "tolerant"):
            hits = getattr(store.memories, mode)(MemoryQuery(["apollo"], ["kestrel"], NOW, 10))
            assert [h.record.ref for h in sorted(hits, key=lambda h: -h.relevance)] == ["in_title", "in_content"]
    finally:
        store.close()


# --- the memory service on each backend -------------------------------------------------------------


@pytest.fixture
def service(store_url: str, tmp_path: Path) -> Iterator[tuple[MemoryService, Runtime]]:
    store = open_store(store_url)
    rt = runtime_over(store, tmp_path)
    administration = rt.administration
    administration.add_project(LOCAL_OWNER, "apollo")
    administration.add_user(LOCAL_OWNER, "alice@example.com", "member", handle="alice")
    administration.grant(LOCAL_OWNER, "alice@example.com", "apollo", "write")
    yield rt.memory, rt
    store.close()


def test_remember_dedup_supersede_forget(service: tuple[MemoryService, Runtime]) -> None:
    memories, rt = service
    authentication, administration = rt.authentication, rt.administration
    alice = authentication.authenticate(administration.mint_token(LOCAL_OWNER, "alice@example.com",
                                                  ["memory:read", "memory:write"]).secret)
    first = memories.remember(alice, "Deploys go out on Tuesdays after the review.", path="apollo/decisions")
    again = memories.remember(alice, "Deploys go out on Tuesdays after the review.", path="apollo/decisions")
    assert again.memory.ref == first.memory.ref
    newer = memories.remember(alice, "Deploys go out on Wednesdays now.", path="apollo/decisions",
                              supersedes=first.memory.ref)
    found = memories.search_memory(alice, "deploys")
    assert [r.memory.ref for r in found.results] == [newer.memory.ref]
    assert [r.memory.ref for r in memories.recall(alice, "deploy wednesday").results] == [newer.memory.ref]
    memories.forget(alice, newer.memory.ref, "wrong")
    assert memories.search_memory(alice, "deploys").results == []


def test_concurrent_writers_of_the_same_content_get_one_ref(store_url: str) -> None:
    store = open_store(store_url)
    refs: list[str] = []
    errors: list[BaseException] = []
    base = memory(1, random.Random(2), "apollo")

    def write(i: int) -> None:
        try:
            record, _ = store.memories.add(replace(base, ref=f"race_{i}"))
            refs.append(record.ref)
        except BaseException as exc:  # collected and re-raised by the test
            errors.append(exc)

    try:
        threads = [threading.Thread(target=write, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(set(refs)) == 1 and store.memories.count(["apollo"]) == 1
    finally:
        store.close()


def test_a_nul_in_a_looked_up_text_is_an_invalid_argument_never_a_driver_error(store_url: str) -> None:
    """PostgreSQL cannot hold nor compare a text holding NUL: psycopg's DataError was an internal error."""
    store = open_store(store_url)
    try:
        try:
            assert store.memories.get("mem_\x00") is None  # SQLite compares it: no such memory
        except InvalidArgument as exc:  # PostgreSQL
            assert store_url.startswith("postgres") and exc.field == "text" and "NUL" in exc.detail
    finally:
        store.close()
