"""Meaning latency: recall (words + meaning, query embedding included) over N memories, against the full-text
path alone in the same run; the query embedding alone; the write path; the embedding rate.

    .venv/bin/python bench/meaning_latency.py [--memories N] [--db URL_OR_PATH] [--queries Q] [--embed K]
        [--writers W] [--queries-only]

Memories are written as bench/memory_bench.py writes them (sentences of the example vault, 4 projects, a
fixed seed) through MemoryService.remember. Their vectors: the first K (default 2,000) are embedded by the
real model (the embedding rate is timed on them); the rest get random unit vectors written straight into the
store, since the exact search's time does not depend on what a vector says (and embedding 100k memories takes
about 13 CPU-minutes on this machine). pgvector's HNSW search does: it walks further among random vectors, which
have no neighbourhoods (its nearest alone about 1.5 times as long as among model-made ones: docs/performance.md),
so ``--embed`` equal to ``--memories`` measures it as a real store has it. Queries are 2 to 6 words of the same
text. Prints p50 / p95 in ms.

``--db postgresql://...`` runs against PostgreSQL (an empty database, or one this benchmark filled, with
``--queries-only``). Where that database has pgvector, the synthetic vectors are written as a store made
before pgvector would have them (without the index), and the store's opening step then copies them into the
halfvec column and builds the HNSW index (timed: the upgrade's cost); each query is then timed three ways
in turn: through pgvector's index, through the app's exact search over the same store (the index set
aside), and words only. ``--writers`` writes the memories from that many threads (faster to fill).

Each query word's count of memories (bm25's rarity of a word) is counted the first time a store meets the word
and kept from then on (on PostgreSQL, brought up to date by the log of changes: docs/memory.md): with few
queries over a small vocabulary, most timed queries would meet a word for the first time, which a server
running for a while rarely does for a common word. ``--warm`` runs every query once before the timed ones
(so the counts are kept: what a server that has met the words sees); ``--write-between N`` remembers N new
memories (untimed) before each timed recall, as a team's agents write while others search.
"""

from __future__ import annotations

import argparse
import random
import secrets
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from memory_bench import PROJECTS, Corpus, percentile
from notewell.access.principal import LOCAL_OWNER
from notewell.config import load_settings
from notewell.meaning.model import DIMENSIONS, MODEL_ID
from notewell.runtime import Runtime, build_runtime
from notewell.services.meaning import embed_all
from notewell.store.base import Store
from notewell.store.factory import open_store
from notewell.store.postgres.pgvector import PgVectorIndex
from notewell.store.postgres.store import PostgresStore
from notewell.store.vector_search import to_half

SEED = 20261201


def write(rt: Runtime, memories: int, writers: int) -> None:
    """Write the memories, timing each remember."""
    corpus, rng = Corpus(), random.Random(SEED)
    batch = [(n, *corpus.memory(rng, n)) for n in range(memories)]
    write_ms: list[float] = []
    cpu_ms: list[float] = []  # the writer thread's own CPU time: what a loaded machine's waits do not blur

    def write_chunk(chunk: list[tuple[int, str, str, list[str]]]) -> None:
        for n, title, content, tags in chunk:
            start, start_cpu = time.perf_counter(), time.thread_time()
            rt.memory.remember(LOCAL_OWNER, content, title=title, tags=tags, project=PROJECTS[n % 4], path="notes")
            write_ms.append((time.perf_counter() - start) * 1000)
            cpu_ms.append((time.thread_time() - start_cpu) * 1000)

    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(write_chunk, [batch[i::writers] for i in range(writers)]))
    print(f"remember: p50 {percentile(write_ms, 0.5):.2f} ms, p95 {percentile(write_ms, 0.95):.2f} ms, CPU time"
          f" p50 {percentile(cpu_ms, 0.5):.3f} ms, p95 {percentile(cpu_ms, 0.95):.3f} ms ({memories} memories,"
          f" {writers} writer threads)")


def add_vectors(store: Store, rt: Runtime, embed: int) -> None:
    """The queued memories' vectors (synthetic past the first ``embed``); on PostgreSQL with pgvector, the
    index built over them as an upgrade would."""
    index = isinstance(store, PostgresStore) and store.memories.index is not None
    if index:  # as in a store made before pgvector: vectors without the index, which the next open builds
        assert isinstance(store, PostgresStore)
        store.memories.index = store.meaning.index = None
        with store.meaning.sql.transaction() as conn:
            conn.execute("DROP INDEX vectors_near")
    jobs = []  # every queued row taken off the model's path, 10,000 at a time (a statement's parameters)
    while claimed := store.meaning.claim("9998", "9999", 10_000):
        jobs += claimed
    synthetic = jobs[embed:]  # the first --embed rows stay queued for the model
    vectors = np.random.default_rng(SEED).standard_normal((len(synthetic), DIMENSIONS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for start in range(0, len(synthetic), 5000):
        chunk = synthetic[start:start + 5000]
        store.meaning.done(MODEL_ID, [(j.kind, j.item_id, to_half(v)) for j, v in
                                      zip(chunk, vectors[start:start + 5000], strict=True)], [], "9999")
    store.meaning.all_due()  # the rows left, leased above, due for the model now
    if index:
        assert isinstance(store, PostgresStore)
        start = time.perf_counter()
        store.memories.index = store.meaning.index = PgVectorIndex.attach(store.db)
        print(f"pgvector: {len(synthetic)} vectors copied into halfvec and the HNSW index built in "
              f"{time.perf_counter() - start:.1f} s")
    cpu = time.process_time()
    taken, seconds = embed_all(rt.meaning)
    cpu = time.process_time() - cpu
    print(f"embedding: {taken} memories in {seconds:.1f} s wall, {cpu:.1f} s CPU = {taken / seconds:.0f}/s "
          f"({taken / max(cpu, 1e-9):.0f}/s per CPU-second); 10k would take {10_000 / (taken / seconds):.0f} s")
    if isinstance(store, PostgresStore):
        with store.meaning.sql.transaction() as conn:
            conn.execute("ANALYZE")  # as autovacuum would after the bulk write, now rather than later


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--embed", type=int, default=2_000)
    parser.add_argument("--writers", type=int, default=1)
    parser.add_argument("--db", default=None)
    parser.add_argument("--queries-only", action="store_true",
                        help="write no memories: a store filled before (whose queued memories get their vectors)")
    parser.add_argument("--warm", action="store_true", help="run every query once before the timed runs")
    parser.add_argument("--write-between", type=int, default=0, metavar="N",
                        help="remember N new memories (untimed) before each timed recall")
    args = parser.parse_args(argv)
    tmp = tempfile.TemporaryDirectory()
    store = open_store(args.db or str(Path(tmp.name) / "meaning.db"))
    rt = build_runtime(load_settings(tmp.name), store)
    for project in PROJECTS:
        if store.identity.project(project) is None:
            rt.administration.add_project(LOCAL_OWNER, project)
    if not args.queries_only:
        write(rt, args.memories, args.writers)
    if rt.meaning.state().queued:
        add_vectors(store, rt, args.embed)
    state = rt.meaning.state()
    print(f"vectors: {state.vectors} of {state.items}")
    corpus = Corpus()
    qrng = random.Random(SEED + 1)
    queries = [" ".join(qrng.sample(corpus.words, qrng.randint(2, 6))) for _ in range(args.queries)]
    model = rt.meaning.embedder()
    assert model is not None
    index = store.memories.index if isinstance(store, PostgresStore) else None
    paths = ["recall, words + meaning" + (" (pgvector)" if index else ""),
             *(["recall, words + meaning (exact)"] if index else []), "recall, words only"]
    runs: dict[str, list[float]] = {name: [] for name in ["query embedding alone", *paths]}
    for q in queries if args.warm else queries[:20]:
        rt.memory.recall(LOCAL_OWNER, q)
    written, run = random.Random(SEED + 2), secrets.token_hex(4)  # this run's writes are new to a store run before
    for n, q in enumerate(queries):
        start = time.perf_counter()
        model.embed_one(q)
        runs["query embedding alone"].append((time.perf_counter() - start) * 1000)
        for name in paths:
            rt.meaning._queries.clear()  # the query's embedding is part of each timed recall
            if index is not None:
                assert isinstance(store, PostgresStore)
                store.memories.index = None if name.endswith("(exact)") else index
            for i in range(args.write_between):
                title, content, tags = corpus.memory(written, i)
                rt.memory.remember(LOCAL_OWNER, f"{content} (written between queries: {run}.{n}.{i}.{name})",
                                   title=title, tags=tags, project=PROJECTS[i % 4], path="notes")
            if name.endswith("words only"):
                rt.meaning.turn_off("bench")
            start = time.perf_counter()
            rt.memory.recall(LOCAL_OWNER, q)
            runs[name].append((time.perf_counter() - start) * 1000)
            rt.meaning._off = None
    for name, timed in runs.items():
        print(f"{name:34} p50 {statistics.median(timed):6.2f} ms   p95 {percentile(timed, 0.95):6.2f} ms")
    words = runs["recall, words only"]
    for name in paths[:-1]:
        print(f"{name} / words: p50 x{statistics.median(runs[name]) / statistics.median(words):.1f}, "
              f"p95 x{percentile(runs[name], 0.95) / percentile(words, 0.95):.1f}")
    if index is not None:
        agreement(store, rt, queries[:100])
    return 0


def agreement(store: Store, rt: Runtime, queries: list[str]) -> None:
    """How many of the exact search's 10 nearest memories pgvector's index finds too (HNSW is approximate)."""
    assert isinstance(store, PostgresStore)
    index, found, same = store.memories.index, 0, 0
    for q in queries:
        chosen = rt.memory._query(LOCAL_OWNER, rt.memory._seen(LOCAL_OWNER)[0], [], None, None, 10)
        vector = rt.meaning.query_vector(q)
        assert vector is not None
        answers = []
        for path in (index, None):
            store.memories.index = path
            answers.append([n.item.ref for n in store.memories.nearest(chosen, vector, MODEL_ID)])
        found += len(set(answers[0]) & set(answers[1]))
        same += answers[0] == answers[1]
    store.memories.index = index
    print(f"pgvector against the exact search, {len(queries)} queries, 10 nearest: {found / len(queries):.2f} of 10 "
          f"found on average, the same 10 in the same order for {same}")


if __name__ == "__main__":
    raise SystemExit(main())
