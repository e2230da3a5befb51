"""Meaning: the packaged model, the vector store and queue on both backends, exact search over the allowed
scope, and the fusion of words and meaning (services/hybrid.py) with its properties."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_world import MemoryWorld, build_world
from notewell.access.principal import Principal
from notewell.meaning.model import DIMENSIONS, MODEL_ID, ModelMissing, load
from notewell.records.memories import MemoryQuery
from notewell.services import hybrid
from notewell.services.meaning import embed_all, retry_delay
from notewell.services.memory import MemoryService
from notewell.store.shared.meaning import QUEUE_ITEM
from notewell.store.vector_search import Nearest, nearest_rows, to_half
from pg import PgCluster

DEPLOY = "We deploy on Tuesdays and Thursdays only, never on Fridays."
DEPLOY_QUESTION = "which weekdays are releases allowed"
ACQUISITION = "Our acquisition target is Kestrel Logistics; the deal closes in March."
ACQUISITION_QUESTION = "which company are we buying"
BACKUPS = "Backups of the billing database run nightly at 02:00 UTC and are kept for 35 days."


def everything_of(service: MemoryService, p: Principal) -> MemoryQuery:
    """A query over every memory ``p`` may read (no words, no filter, 10 wanted), as the service makes it."""
    return service._query(p, service._seen(p)[0], [], None, None, 10)


@pytest.fixture
def world(store_url: str, tmp_path: Path) -> MemoryWorld:
    return build_world(store_url, tmp_path)


def embedded(world: MemoryWorld) -> None:
    embed_all(world.rt.meaning)
    state = world.rt.meaning.state()
    assert state.queued == 0 and state.vectors == state.items


# --- the model ------------------------------------------------------------------------------------------


def test_the_packaged_model_loads_offline_and_puts_a_paraphrase_nearer_than_an_unrelated_text() -> None:
    model = load()
    vectors = model.embed([DEPLOY, DEPLOY_QUESTION, "favourite pizza topping"])
    assert vectors.shape == (3, DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert float(vectors[0] @ vectors[1]) > 0.45 > float(vectors[0] @ vectors[2])
    assert np.allclose(model.embed_one(DEPLOY), vectors[0], atol=1e-5)  # batched or alone: the same vector


def _grown_mb(before: str, measured: str) -> int:
    """How many MB of resident memory ``measured`` adds after ``before``, both run in a fresh process, so that no
    earlier test's runs are counted."""
    probe = (f"{before}\n"
             "def rss():\n"
             "    return int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0]) // 1024\n"
             f"start = rss()\n{measured}\nprint(rss() - start)\n")
    return int(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout)


def test_embedding_long_texts_gives_its_memory_back() -> None:
    """onnxruntime's memory arena kept each run's largest activations: two sub-batches of 16 texts of 256 word
    pieces took a process from 280 MB to 1.2 GB for good. Without it the memory goes back after each run."""
    grown = _grown_mb("from notewell.meaning.model import load\nmodel = load()\nmodel.embed(['warm'])",
                      "model.embed(['word ' * 300] * 32)")
    assert grown < 200, f"embedding 32 long texts kept {grown} MB"


def test_the_loaded_model_holds_its_weights_once_as_int8() -> None:
    """The float graph held 157 MB once loaded (its weights folded to float32 beside the int8 ones); the int8
    graph of meaning/int8_graph.py 47 MB, tokenizer and first run included about 77."""
    grown = _grown_mb("import onnxruntime, tokenizers, numpy\nfrom notewell.meaning.model import load",
                      "load().embed(['warm'])")
    assert grown < 90, f"loading the model took {grown} MB"


def test_a_model_file_that_is_not_the_pinned_one_is_refused_with_the_fix(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    monkeypatch.setenv("NOTEWELL_EMBEDDING_MODEL", str(tmp_path / "missing.onnx"))
    with pytest.raises(ModelMissing, match=r"missing\.onnx \(chosen by NOTEWELL_EMBEDDING_MODEL\): the embedding "
                                           r"model file is missing; point NOTEWELL_EMBEDDING_MODEL at a copy"):
        load()
    monkeypatch.setenv("NOTEWELL_EMBEDDING_MODEL", str(tmp_path))
    with pytest.raises(ModelMissing, match=r"a folder, not the embedding model's file; point NOTEWELL_EMBEDDING_MODEL"):
        load()
    (tmp_path / "other.onnx").write_bytes(b"not a model")
    monkeypatch.setenv("NOTEWELL_EMBEDDING_MODEL", str(tmp_path / "other.onnx"))
    with pytest.raises(ModelMissing, match="not the pinned embedding model"):
        load()


# --- the queue and the vectors, both backends -----------------------------------------------------------


def test_a_memory_is_queued_with_its_write_and_embedded_by_the_runner(world: MemoryWorld) -> None:
    alice = world.user("alice")
    world.service.remember(alice, DEPLOY, project="apollo")
    state = world.rt.meaning.state()
    assert (state.queued, state.vectors) == (1, 0)  # queued in the memory's own transaction, not embedded yet
    runner = world.rt.meaning.run_in_background()
    try:
        world.rt.meaning.work.set()
        for _ in range(400):
            if world.rt.meaning.state().vectors == 1:
                break
            runner._stopping.wait(0.05)
    finally:
        runner.stop()
    assert world.rt.meaning.state().vectors == 1 and world.rt.meaning.state().queued == 0


def test_the_model_is_loaded_when_there_is_first_something_to_embed(world: MemoryWorld) -> None:
    """About 200 MB of RAM: the runner of a store with nothing to embed does not load it."""
    assert world.rt.meaning.embed_due() == 0 and world.rt.meaning._embedder is None
    world.service.remember(world.user("alice"), DEPLOY, project="apollo")
    assert world.rt.meaning.embed_due() == 1 and world.rt.meaning._embedder is not None


def test_vectors_of_another_model_are_made_again_before_they_are_searched(world: MemoryWorld) -> None:
    """An upgrade that changes the model id (the float graph's vectors, all-MiniLM-L6-v2-int8): its vectors are
    never searched, and `notewell embed` (embed_all) makes them again."""
    alice = world.user("alice")
    deploy = world.service.remember(alice, DEPLOY, project="apollo").memory.ref
    embedded(world)
    with world.store.meaning.sql.transaction() as conn:
        conn.execute("UPDATE vectors SET model = ?", ("all-MiniLM-L6-v2-int8",))
    assert world.rt.meaning.state().vectors == 0
    assert deploy not in [r.memory.ref for r in world.service.recall(alice, DEPLOY_QUESTION).results]
    embedded(world)
    assert world.service.recall(alice, DEPLOY_QUESTION).results[0].memory.ref == deploy


def test_recall_finds_by_meaning_what_words_miss_and_says_how(world: MemoryWorld) -> None:
    alice = world.user("alice")
    deploy = world.service.remember(alice, DEPLOY, project="apollo").memory.ref
    world.service.remember(alice, ACQUISITION, project="apollo")
    embedded(world)
    found = world.service.recall(alice, DEPLOY_QUESTION)
    assert found.results[0].memory.ref == deploy and found.words_only is None
    assert found.results[0].found_by == ("meaning",) and found.results[0].similarity > 0.45
    assert "close in meaning (similarity" in found.results[0].why
    assert world.service.search_memory(alice, DEPLOY_QUESTION).results == []  # strict stays strict
    world.rt.meaning.turn_off("test: words only")
    words = world.service.recall(alice, DEPLOY_QUESTION)
    assert deploy not in [r.memory.ref for r in words.results] and words.words_only == "test: words only"


def test_a_memory_found_both_ways_says_both_and_ranks_first(world: MemoryWorld) -> None:
    alice = world.user("alice")
    backups = world.service.remember(alice, BACKUPS, project="apollo").memory.ref
    world.service.remember(alice, "The billing team meets on Mondays.", project="apollo")
    embedded(world)
    top = world.service.recall(alice, "how long are billing database backups kept").results[0]
    assert top.memory.ref == backups and top.found_by == ("words", "meaning")


def test_forget_and_supersede_take_a_memory_out_of_the_vector_path(world: MemoryWorld) -> None:
    alice = world.user("alice")
    deploy = world.service.remember(alice, DEPLOY, project="apollo").memory.ref
    acquisition = world.service.remember(alice, ACQUISITION, project="apollo").memory.ref
    embedded(world)
    world.service.forget(alice, deploy, "wrong")
    newer = world.service.remember(alice, "Our acquisition target is now Harbor Lines; the deal closes in May.",
                                   project="apollo", supersedes=acquisition).memory.ref
    embedded(world)
    refs = {r.memory.ref for q in (DEPLOY, DEPLOY_QUESTION, ACQUISITION, ACQUISITION_QUESTION)
            for r in world.service.recall(alice, q).results}
    assert deploy not in refs and acquisition not in refs and newer in refs
    assert world.rt.meaning.state().vectors == 1


def test_a_memory_forgotten_while_its_text_is_embedded_gets_no_vector(world: MemoryWorld) -> None:
    """The runner reads a text, embeds it, then writes the vector: a forget or supersede landing in between
    took the vector and the queue row away, and the runner's write put the vector back for good ("135 of 124
    memories and sessions embedded", as a probe found)."""
    alice = world.user("alice")
    gone = world.service.remember(alice, DEPLOY, project="apollo").memory.ref
    old = world.service.remember(alice, ACQUISITION, project="apollo").memory.ref
    store = world.store.meaning
    claimed = store.claim("2000-01-01T00:00:00Z", "2999-01-01T00:00:00Z", 32)
    assert len(claimed) == 2
    world.service.forget(alice, gone, "wrong")
    world.service.remember(alice, "Our acquisition target is now Harbor Lines.", project="apollo", supersedes=old)
    vector = np.ones(DIMENSIONS, dtype=np.float16).tobytes()
    store.done(MODEL_ID, [(job.kind, job.item_id, vector) for job in claimed], [], "2999-01-01T00:00:00Z")
    embedded(world)  # the superseding memory's own vector; the two taken away stay out
    state = world.rt.meaning.state()
    assert (state.vectors, state.items) == (1, 1)


def test_a_runner_whose_lease_ran_out_leaves_the_newer_vector_in_place(world: MemoryWorld) -> None:
    """Runner A claims an item; its lease runs out and runner B claims it again; A's late write must not take
    the row off the queue as if it were its own, nor B's be skipped as if the item were gone (a review found
    both: the newer vector was lost). Each runner takes off only the rows still holding its lease."""
    alice = world.user("alice")
    world.service.remember(alice, DEPLOY, project="apollo")
    store = world.store.meaning
    [job] = store.claim("2000-01-01T00:00:00Z", "2000-01-01T00:00:30Z", 5)  # A: a lease that has run out
    assert [j.item_id for j in store.claim("2000-01-01T00:01:00Z", "2999-01-01T00:00:00Z", 5)] == [job.item_id]
    old = np.zeros(DIMENSIONS, dtype=np.float16)
    old[0] = 1
    new = np.zeros(DIMENSIONS, dtype=np.float16)
    new[1] = 1
    store.done(MODEL_ID, [(job.kind, job.item_id, old.tobytes())], [], "2000-01-01T00:00:30Z")  # A, late
    assert world.rt.meaning.state().queued == 1  # B still holds it
    store.done(MODEL_ID, [(job.kind, job.item_id, new.tobytes())], [], "2999-01-01T00:00:00Z")  # B
    with store.sql.reading() as conn:
        [(vector,)] = conn.execute("SELECT vector FROM vectors WHERE kind = ? AND item_id = ?",
                                   (job.kind, job.item_id)).fetchall()
    assert bytes(vector) == new.tobytes() and world.rt.meaning.state().queued == 0


def test_a_failure_is_counted_only_on_the_rows_still_holding_its_lease(world: MemoryWorld) -> None:
    """A batch that fails after its item was queued again (its text changed meanwhile) leaves that row due with
    its new text, untried: the attempt and its delay belong to the text that failed."""
    alice = world.user("alice")
    world.service.remember(alice, DEPLOY, project="apollo")
    world.service.remember(alice, ACQUISITION, project="apollo")
    store = world.store.meaning
    lease = "2999-01-01T00:00:00Z"
    requeued, failed = store.claim("2000-01-01T00:00:00Z", lease, 5)
    with store.sql.transaction() as conn:
        conn.execute(QUEUE_ITEM, (requeued.kind, requeued.item_id))
    store.failed([(job.kind, job.item_id, "2999-06-01T00:00:00Z") for job in (requeued, failed)], "broke", lease)
    with store.sql.reading() as conn:
        rows = conn.execute("SELECT item_id, attempts, next_at FROM embedding_queue ORDER BY item_id").fetchall()
    assert sorted((int(i), int(a), str(n)) for i, a, n in rows) == sorted(
        [(requeued.item_id, 0, ""), (failed.item_id, 1, "2999-06-01T00:00:00Z")])


def test_an_identifier_finds_that_identifier_or_nothing(world: MemoryWorld) -> None:
    """recall of ORA-00943 found ORA-00942's memory by their shared word "ora" (a probe found it): an identifier
    looked up finds the memories holding it, not a neighbour, by words as by meaning."""
    alice = world.user("alice")
    ref = world.service.remember(alice, "ORA-00942 means the table or view does not exist.",
                                 project="apollo").memory.ref
    world.service.remember(alice, "The ora cache warms at nine.", project="apollo")
    embedded(world)
    assert [r.memory.ref for r in world.service.recall(alice, "ORA-00942").results] == [ref]
    for asked in ("ora-00942", "`ORA-00942`", '"ORA-00942".', "ora_00942"):  # as the word index reads them
        assert [r.memory.ref for r in world.service.recall(alice, asked).results] == [ref], asked
    assert world.service.recall(alice, "ORA-00943").results == []
    spaced = world.service.remember(alice, "Café_ID mismatch: the ORA\u201100942 of the night run.",
                                    project="apollo").memory.ref
    embedded(world)
    assert spaced in [r.memory.ref for r in world.service.recall(alice, "cafe_id").results]
    assert {r.memory.ref for r in world.service.recall(alice, "ORA-00942").results} == {ref, spaced}


def test_function_words_find_nothing(world: MemoryWorld) -> None:
    """ "how much money does ada want to earn" found "Does the council tax journey need a new form?" by its
    "does" (a probe found it): English function words are stop words, as "the" and "how" were."""
    alice = world.user("alice")
    world.service.remember(alice, "Does the council tax journey need a new form?", project="apollo")
    salary = world.service.remember(alice, "Ada asks for a salary of 70k.", project="apollo").memory.ref
    embedded(world)
    assert [r.memory.ref for r in world.service.recall(alice, "how much money does ada want to earn").results] \
        == [salary]


USERS = ("alice", "bob", "carol", "sam", "ada")


def test_meaning_never_shows_a_memory_its_reader_may_not_see(world: MemoryWorld) -> None:
    """The access matrix on the vector path: a home is its owner's, a private memory its author's, a project
    its readers'; the paraphrase that finds each of them for its owner finds none for anyone else."""
    alice, bob = world.user("alice"), world.user("bob")
    home = world.service.remember(bob, ACQUISITION).memory  # bob's home
    private = world.service.remember(alice, DEPLOY, project="apollo", private=True).memory
    shared = world.service.remember(alice, BACKUPS, project="apollo").memory
    embedded(world)
    question = {home.ref: ACQUISITION_QUESTION, private.ref: DEPLOY_QUESTION,
                shared.ref: "how long do we keep copies of payment data"}
    may_see = {home.ref: {"bob"}, private.ref: {"alice"}, shared.ref: {"alice", "bob", "sam", "ada"}}
    for handle in USERS:
        p = world.user(handle)
        for ref, q in question.items():
            refs = [r.memory.ref for r in world.service.recall(p, q).results]
            assert (ref in refs) == (handle in may_see[ref]), (handle, q, refs)


def test_foreground_embedding_takes_over_what_a_killed_runner_left_leased(world: MemoryWorld) -> None:
    alice = world.user("alice")
    for n in range(40):
        world.service.remember(alice, f"{DEPLOY} ({n})", project="apollo")
    store = world.store.meaning
    leased = store.claim("2000-01-01T00:00:00Z", "2999-01-01T00:00:00Z", 32)  # a runner claims, then dies
    assert len(leased) == 32
    assert world.rt.meaning.embed_due() == 8  # a running runner leaves the leased rows alone
    taken, _ = embed_all(world.rt.meaning)
    assert taken == 32 and world.rt.meaning.state().vectors == 40


def test_a_failed_batch_is_retried_later_and_counted(world: MemoryWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    alice = world.user("alice")
    world.service.remember(alice, DEPLOY, project="apollo")
    model = world.rt.meaning.embedder()
    assert model is not None

    def broken(texts: object) -> object:
        raise RuntimeError("the model broke")

    monkeypatch.setattr(model, "embed", broken)
    assert world.rt.meaning.embed_due() == 0
    state = world.rt.meaning.state()
    assert (state.queued, state.failing, state.vectors) == (1, 1, 0) and "the model broke" in (state.last_error or "")
    assert world.rt.meaning.embed_due() == 0  # not due again at once: it waits retry_delay(1)
    monkeypatch.undo()
    taken, _ = embed_all(world.rt.meaning)  # the foreground run retries it now
    assert taken == 1 and world.rt.meaning.state().failing == 0


def test_retries_back_off_to_a_ceiling() -> None:
    assert [retry_delay(n) for n in (1, 2, 3)] == [5.0, 10.0, 20.0]
    assert retry_delay(40) == 3600.0


def test_both_backends_rank_the_same_memories_in_the_same_order(pg_cluster: PgCluster, pg_url: str,
                                                                plain_pg_url: str, tmp_path: Path) -> None:
    """SQLite, PostgreSQL through pgvector's index (where the cluster has it) and PostgreSQL without the
    extension (the app's exact search): one order, the same similarities."""
    orders = []
    for n, db in enumerate((str(tmp_path / "s.db"), pg_url, plain_pg_url)):
        (tmp_path / f"vault-{n}").mkdir()
        w = build_world(db, tmp_path / f"vault-{n}")
        if n:
            index = w.store.memories.index  # type: ignore[attr-defined]
            assert (index is not None) == (n == 1 and pg_cluster.pgvector)
            # what doctor says of it
            assert ("HNSW index" in w.store.memories.vector_search()) == (index is not None)
            assert ("CREATE EXTENSION vector" in w.store.memories.vector_search()) == (index is None)
        alice = w.user("alice")
        for text in (DEPLOY, ACQUISITION, BACKUPS, "The billing team meets on Mondays.", DEPLOY + " Really."):
            w.service.remember(alice, text, project="apollo")
        embedded(w)
        if n == 1 and pg_cluster.pgvector:  # each vector went into the index with its write
            with psycopg.connect(db) as conn:
                assert conn.execute("SELECT count(near) FROM vectors WHERE kind = 'memory'").fetchone() == (5,)
        near = w.rt.meaning.nearest_memories(everything_of(w.service, alice), "when can we ship")
        orders.append([(n.item.content, n.similarity) for n in near])
        orders.append([r.memory.content for r in w.service.recall(alice, "when can we deploy the billing database")
                       .results])
        w.rt.close()
    # the vector path is the same arithmetic on the same float16 bytes (pgvector's candidates are scored again
    # by it): the same order and similarities; the fused order too (the full-text scores differ between FTS5
    # and tsvector, not the order here)
    assert orders[0] == orders[2] == orders[4] and len(orders[0]) == 5
    assert orders[1] == orders[3] == orders[5] and len(orders[1]) >= 3


def test_a_store_made_without_pgvector_is_indexed_when_the_extension_appears(pgvector: PgCluster,
                                                                             plain_pg_url: str,
                                                                             tmp_path: Path) -> None:
    """A store whose vectors are only float16 bytes (made before pgvector, or on a server without it) keeps
    them; once the extension is created, the next open copies them into the index (no model run) and the
    answers stay the same."""
    w = build_world(plain_pg_url, tmp_path)
    alice = w.user("alice")
    for text in (DEPLOY, ACQUISITION, BACKUPS):
        w.service.remember(alice, text, project="apollo")
    embedded(w)
    assert w.store.memories.index is None  # type: ignore[attr-defined]
    query = everything_of(w.service, alice)
    before = [(n.item.ref, n.similarity) for n in w.rt.meaning.nearest_memories(query, DEPLOY_QUESTION)]
    w.rt.close()
    with psycopg.connect(plain_pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
    w = build_world(plain_pg_url, tmp_path)
    assert w.store.memories.index is not None  # type: ignore[attr-defined]
    with psycopg.connect(plain_pg_url) as conn:
        assert conn.execute("SELECT count(*), count(near) FROM vectors").fetchone() == (3, 3)
    after = [(n.item.ref, n.similarity) for n in w.rt.meaning.nearest_memories(query, DEPLOY_QUESTION)]
    assert after == before and len(after) == 3
    assert w.rt.meaning.state().queued == 0  # nothing embedded again
    with psycopg.connect(plain_pg_url, autocommit=True) as conn:  # as a server without the index writes one
        conn.execute("UPDATE vectors SET near = NULL WHERE item_id = (SELECT min(item_id) FROM vectors)")
    w.rt.meaning._queries.clear()
    assert [(n.item.ref, n.similarity) for n in w.rt.meaning.nearest_memories(query, DEPLOY_QUESTION)] == before
    with psycopg.connect(plain_pg_url) as conn:  # the search copied it first
        assert conn.execute("SELECT count(near) FROM vectors").fetchone() == (3,)
    w.rt.close()


# --- exact search and the fusion --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(-8, 8)), min_size=1, max_size=40), st.integers(1, 10))
def test_exact_search_is_brute_force_with_ties_to_the_lower_id(rows: list[tuple[int, int]], limit: int) -> None:
    query = np.zeros(4, dtype=np.float32)
    query[0] = 1.0
    unique = dict(rows)
    stored = [(i, to_half(np.array([x / 8, 0, 0, 0], dtype=np.float32))) for i, x in unique.items()]
    expected = sorted(((i, x / 8) for i, x in unique.items()), key=lambda t: (-t[1], t[0]))[:limit]
    assert [(i, round(s, 3)) for i, s in nearest_rows(stored, to_half(query), limit)] == \
        [(i, round(s, 3)) for i, s in expected]


@settings(max_examples=120, deadline=None)
@given(st.dictionaries(st.integers(0, 30), st.floats(0.01, 20), max_size=15),
       st.dictionaries(st.integers(0, 30), st.floats(-1, 1), max_size=15),
       st.dictionaries(st.integers(0, 30), st.floats(-1, 1), max_size=15),
       st.one_of(st.none(), st.floats(-1, 1)))
def test_fusion_keeps_word_matches_of_related_meaning_and_only_clear_meanings(
        words: dict[int, float], near: dict[int, float], beyond: dict[int, float], noise: float | None) -> None:
    hits = sorted(words.items(), key=lambda t: -t[1])
    nearest = [Nearest(k, s) for k, s in sorted(near.items(), key=lambda t: -t[1])]
    similar: dict[Hashable, float] = {k: s for k, s in beyond.items() if k not in near}

    def similarity(k: int) -> float | None:  # without a nearest at all, the words rank alone, as before meaning
        return None if not near else near[k] if k in near else similar.get(k)

    fused = hybrid.fuse(hits, lambda h: h[1], lambda h: h[0], nearest, lambda k: k, similar=similar, noise=noise)
    kept = {f.item for f in fused}
    # a word match is dropped only when its meaning is known and unrelated, and only when meaning ranks at all
    related = {k for k in words if (s := similarity(k)) is None or s > hybrid.WORDS_UNRELATED}
    assert kept & set(words) == related
    bar = max(hybrid.MEANING_MIN, (noise if noise is not None else 0.0) + hybrid.NOISE_MARGIN)
    assert kept - set(words) == {k for k, s in near.items() if k not in words and s >= bar}
    looked_up = hybrid.fuse(hits, lambda h: h[1], lambda h: h[0], nearest, lambda k: k, lookup=True,
                            similar=similar, noise=noise)
    assert {f.item for f in looked_up} == (set(words) if words else kept)  # one word: its words decide
    exact = hybrid.fuse(hits, lambda h: h[1], lambda h: h[0], nearest, lambda k: k, exact="E4013",
                        similar=similar, noise=noise)
    assert {f.item for f in exact} == set(words)  # one identifier asked: what words found, nothing near it
    assert all(0.0 <= f.relevance <= 1.0 for f in fused)
    assert [f.relevance for f in fused] == sorted((f.relevance for f in fused), reverse=True)
    for f in fused:
        assert f.matched == [*(["words"] if f.item in words else []),
                             *(["meaning"] if (similarity(f.item) or -1.0) >= hybrid.MEANING_MIN else [])]


def test_an_identifier_looked_up_ranks_the_texts_holding_it_as_written_first() -> None:
    """"--check" was found 7th on the FAQ benchmark: six memories holding the word "check" in shorter texts (a
    better full-text relevance) came before the one holding "--check"."""
    texts = {"a": "Check the CRM first.", "b": "Run git fsck --check before a release, then tag it.", "c": "check"}
    hits = [("c", 3.0), ("a", 2.5), ("b", 1.0)]
    fused = hybrid.fuse(hits, lambda h: h[1], lambda h: h[0], [], lambda k: k, lookup=True, exact="--check",
                        text_of=lambda h: texts[h[0]])
    assert [(f.item, round(f.relevance, 4)) for f in fused] == [("b", 1.0), ("c", 0.5), ("a", 0.4167)]
    near = hybrid.fuse(hits, lambda h: h[1], lambda h: h[0], [Nearest("a", 0.3)], lambda k: k, lookup=True,
                       exact="--check", text_of=lambda h: texts[h[0]])
    assert [f.item for f in near] == ["b", "c", "a"]


def test_a_word_match_counts_as_far_as_its_meaning_is_near_the_best() -> None:
    assert hybrid.words_trust(None, 0.6) == 1.0  # not embedded yet: its words count whole
    assert hybrid.words_trust(hybrid.WORDS_UNRELATED, 0.6) == 0.0
    assert hybrid.words_trust(0.6, 0.6) == 1.0
    assert hybrid.words_trust(0.31, 0.52) == pytest.approx(0.26 / 0.47)  # "ship" in shipping labels
    assert hybrid.words_trust(hybrid.WORDS_TRUSTED, 0.1) == 1.0  # a query near nothing: WORDS_TRUSTED is full
    assert 0.0 < hybrid.words_trust(0.2, 0.6) < hybrid.words_trust(0.4, 0.6) < 1.0


@pytest.mark.parametrize(("query", "one"), [
    ("E4013", True), ("Z_FULL_FLUSH", True), ("--track-origins", True), ("getUserName", True), ("README.md", True),
    ("ORA-00942", True), ("404", True), ("Foo::bar", True), (" E4012 ", True),
    ("deploy", False), ("HTTP", False), ("money back", False), ("E4013 meaning", False), ("sign-in", False),
    ("e-mail", False), ("follow-up", False), ("CI/CD", False), ("k8s", False), ("i18n", False), ("v2", False),
    ("e.g.", False), ("中文", False), ("", False)])
def test_an_identifier_is_one_token_with_a_digit_a_joiner_or_camel_case(query: str, one: bool) -> None:
    assert hybrid.identifier(query) is one


def test_meaning_relevance_is_calibrated_on_the_similarity_alone() -> None:
    assert hybrid.meaning_relevance(hybrid.SIMILARITY_FLOOR) == 0.0
    assert hybrid.meaning_relevance(hybrid.SIMILARITY_FULL) == 1.0
    assert hybrid.meaning_relevance(0.55) == pytest.approx(0.5)
    assert MODEL_ID == "all-MiniLM-L6-v2-int8-dq"


# --- pgvector on PostgreSQL ---------------------------------------------------------------------------------


def _unit(rng: np.random.Generator, toward: float) -> np.ndarray:
    """A random unit vector whose first coordinate is about ``toward`` (its similarity to the query e0)."""
    v = rng.standard_normal(DIMENSIONS).astype(np.float32)
    v[0] = 0.0
    v *= np.sqrt(1 - toward ** 2) / np.linalg.norm(v)
    v[0] = toward
    return v


def _scoped_world(url: str, tmp_path: Path, hidden: int, shown: int) -> tuple[MemoryWorld, dict[int, bytes]]:
    """alice's ``hidden`` private memories in apollo, all nearer the query (e0) than any bob may see, and
    ``shown`` shared ones there (bob reads apollo), their vectors written straight into the store. Returns
    the world and bob's allowed memories: id -> vector."""
    w = build_world(url, tmp_path)
    alice, rng = w.user("alice"), np.random.default_rng(7)
    for n in range(hidden):
        w.service.remember(alice, f"hidden note {n}", project="apollo", private=True)
    for n in range(shown):
        w.service.remember(alice, f"shared note {n}", project="apollo")
    w.store.meaning.claim("9999", "9999", hidden + shown)  # off the model's path: these vectors are made here
    with w.store.meaning.sql.reading() as conn:
        private = {int(i): p is not None for i, p in conn.execute("SELECT id, private_to FROM memories").fetchall()}
    vectors = {i: to_half(_unit(rng, 0.9 if p else rng.uniform(0.2, 0.7))) for i, p in private.items()}
    w.store.meaning.done(MODEL_ID, [("memory", i, v) for i, v in vectors.items()], [], "9999")
    with w.store.meaning.sql.transaction() as conn:
        conn.execute("ANALYZE memories")  # as autovacuum does after a bulk write: the planner then knows the sizes
        conn.execute("ANALYZE vectors")
    return w, {i: v for i, v in vectors.items() if not private[i]}


def _e0() -> bytes:
    query = np.zeros(DIMENSIONS, dtype=np.float32)
    query[0] = 1.0
    return to_half(query)


@pytest.mark.parametrize(("shown", "path"), [(2000, "the index"), (5, "the exact fallback")])
def test_a_scoped_query_gets_its_full_k_allowed_results(pgvector: PgCluster, pg_url: str, tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture, shown: int,
                                                        path: str) -> None:
    """bob may see ``shown`` memories, and the 1,000 he may not see are all nearer the query: he still gets
    his 10 nearest (or all 5), exactly those of a brute-force search over what he may see. With 2,000 the
    planner takes the HNSW index and its iterative scan goes past the 1,000 (with ``hnsw.iterative_scan``
    off it stops after ``ef_search`` of them and this test fails); with 5 the search cannot give the 40
    candidates asked, and the scope is scored exactly."""
    w, allowed = _scoped_world(pg_url, tmp_path, hidden=1000, shown=shown)
    assert w.store.memories.index is not None  # type: ignore[attr-defined]
    caplog.set_level("DEBUG", logger="notewell.store")
    near = w.store.memories.nearest(everything_of(w.service, w.user("bob")), _e0(), MODEL_ID)
    assert ("scored exactly" in caplog.text) == (path == "the exact fallback")
    expected = nearest_rows(list(allowed.items()), _e0(), 10)
    assert len(near) == min(10, shown)
    assert [n.similarity for n in near] == [s for _, s in expected]
    assert all(n.item.private_to is None for n in near)
    w.rt.close()


# --- the nearest memories found ahead, beside the word search (nearest_memories_ahead) ----------------------


class _BrokenModel:
    def embed_one(self, text: str) -> np.ndarray:
        raise RuntimeError("the model broke")


def _found(near: list[Nearest[Any]]) -> list[tuple[str, float]]:
    return [(n.item.ref, n.similarity) for n in near]


def _deploy_remembered(world: MemoryWorld) -> None:
    alice = world.user("alice")
    world.service.remember(alice, DEPLOY, project="apollo")
    world.service.remember(alice, ACQUISITION, project="apollo")
    embedded(world)


def test_the_nearest_found_ahead_are_those_found_in_turn(world: MemoryWorld) -> None:
    _deploy_remembered(world)
    meaning, alice = world.rt.meaning, world.user("alice")
    query = everything_of(world.service, alice)
    ahead = _found(meaning.nearest_memories_ahead(query, DEPLOY_QUESTION)())
    meaning._queries.clear()
    assert ahead and ahead == _found(meaning.nearest_memories(query, DEPLOY_QUESTION))


def test_a_failure_ahead_reaches_the_caller(world: MemoryWorld) -> None:
    meaning = world.rt.meaning
    meaning._embedder = _BrokenModel()  # type: ignore[assignment]
    near = meaning.nearest_memories_ahead(everything_of(world.service, world.user("alice")),
                                          DEPLOY_QUESTION)
    with pytest.raises(RuntimeError, match="the model broke"):
        near()


def test_meaning_turned_off_finds_nothing_ahead(world: MemoryWorld) -> None:
    meaning = world.rt.meaning
    meaning.turn_off("test: words only")
    assert meaning.nearest_memories_ahead(everything_of(world.service, world.user("alice")),
                                          DEPLOY_QUESTION)() == []


def test_a_closed_runtime_still_finds_the_nearest_in_the_caller(world: MemoryWorld) -> None:
    _deploy_remembered(world)
    meaning, alice = world.rt.meaning, world.user("alice")
    query = everything_of(world.service, alice)
    expected = _found(meaning.nearest_memories(query, DEPLOY_QUESTION))
    meaning.close()
    assert expected and _found(meaning.nearest_memories_ahead(query, DEPLOY_QUESTION)()) == expected
