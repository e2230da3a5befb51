"""Meaning latency: recall (words + meaning, query embedding included) over N memories, against the full-text
path alone in the same run; the query embedding alone; the write path; the embedding rate.

    .venv/bin/python bench/meaning_latency.py [--memories N] [--db URL_OR_PATH] [--queries Q] [--embed K]

Memories are written as bench/memory_bench.py writes them (sentences of the example vault, 4 projects, a
fixed seed) through MemoryService.remember. Their vectors: the first K (default 2,000) are embedded by the
real model (the embedding rate is timed on them); the rest get random unit vectors written straight into the
store, since search time does not depend on what a vector says (and embedding 100k memories takes about 25
CPU-minutes on this machine). Queries are 2 to 6 words of the same text. Prints p50 / p95 in ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from memory_bench import PROJECTS, Corpus, percentile
from notewell.access.principal import LOCAL_OWNER
from notewell.config import load_settings
from notewell.meaning.model import DIMENSIONS, MODEL_ID
from notewell.runtime import build_runtime
from notewell.services.meaning import embed_all
from notewell.store.factory import open_store
from notewell.store.vector_search import to_half

SEED = 20261201


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--embed", type=int, default=2_000)
    parser.add_argument("--db", default=None)
    args = parser.parse_args(argv)
    tmp = tempfile.TemporaryDirectory()
    store = open_store(args.db or str(Path(tmp.name) / "meaning.db"))
    rt = build_runtime(load_settings(tmp.name), store)
    for project in PROJECTS:
        if store.identity.project(project) is None:
            rt.administration.add_project(LOCAL_OWNER, project)
    corpus, rng = Corpus(), random.Random(SEED)
    write_ms = []
    for n in range(args.memories):
        title, content, tags = corpus.memory(rng, n)
        start = time.perf_counter()
        rt.memory.remember(LOCAL_OWNER, content, title=title, tags=tags, project=PROJECTS[n % 4], path="notes")
        write_ms.append((time.perf_counter() - start) * 1000)
    print(f"remember: p50 {percentile(write_ms, 0.5):.2f} ms, p95 {percentile(write_ms, 0.95):.2f} ms "
          f"({args.memories} memories)")

    jobs = store.meaning.claim("9999", "9999", args.memories)  # take every queued row off the model's path
    synthetic = jobs[args.embed:]  # the first --embed rows stay queued for the model
    store.meaning.all_due()
    vectors = np.random.default_rng(SEED).standard_normal((len(synthetic), DIMENSIONS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for start in range(0, len(synthetic), 5000):
        chunk = synthetic[start:start + 5000]
        store.meaning.done(MODEL_ID, [(j.kind, j.item_id, to_half(v)) for j, v in
                                      zip(chunk, vectors[start:start + 5000], strict=True)], [])
    cpu = time.process_time()
    taken, seconds = embed_all(rt.meaning)
    cpu = time.process_time() - cpu
    print(f"embedding: {taken} memories in {seconds:.1f} s wall, {cpu:.1f} s CPU = {taken / seconds:.0f}/s "
          f"({taken / max(cpu, 1e-9):.0f}/s per CPU-second); 10k would take {10_000 / (taken / seconds):.0f} s")
    state = rt.meaning.state()
    print(f"vectors: {state.vectors} of {state.items}")

    qrng = random.Random(SEED + 1)
    queries = [" ".join(qrng.sample(corpus.words, qrng.randint(2, 6))) for _ in range(args.queries)]
    model = rt.meaning.embedder()
    assert model is not None
    embed_ms, hybrid_ms, words_ms = [], [], []
    for q in queries[:20]:
        rt.memory.recall(LOCAL_OWNER, q)
    for q in queries:
        start = time.perf_counter()
        model.embed_one(q)
        embed_ms.append((time.perf_counter() - start) * 1000)
        rt.meaning._queries.clear()  # the query's embedding is part of each timed recall
        start = time.perf_counter()
        rt.memory.recall(LOCAL_OWNER, q)
        hybrid_ms.append((time.perf_counter() - start) * 1000)
        rt.meaning.turn_off("bench")
        start = time.perf_counter()
        rt.memory.recall(LOCAL_OWNER, q)
        words_ms.append((time.perf_counter() - start) * 1000)
        rt.meaning._off = None
    for name, runs in (("query embedding alone", embed_ms), ("recall, words + meaning", hybrid_ms),
                       ("recall, words only", words_ms)):
        print(f"{name:26} p50 {statistics.median(runs):6.2f} ms   p95 {percentile(runs, 0.95):6.2f} ms")
    print(f"hybrid / words: p50 x{statistics.median(hybrid_ms) / statistics.median(words_ms):.1f}, "
          f"p95 x{percentile(hybrid_ms, 0.95) / percentile(words_ms, 0.95):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
