"""Memory benchmark: remember throughput and recall / search_memory latency over N memories (default 100k).

    python bench/memory_bench.py [--memories N] [--writers W] [--queries Q] [--db URL_OR_PATH]

Memories are generated deterministically (a fixed seed): each is 1 to 3 sentences drawn from the
example vault (examples/northwind, about 400 sentences and 1,900 words), so word frequencies are those
of real notes; queries are 1 to 3 of its words drawn as often as they occur (30% cut to a prefix). They are written
through MemoryService.remember (access checks, dedup, FTS indexing and the audit entry included) by W
threads, each with its own connection, spread over 4 projects and the writer's home. Then Q queries of
1 to 3 words (drawn the same way) run warm through MemoryService.recall and search_memory as a member
who reads 3 of the projects and their home. Without --db the store is a SQLite file in a temporary
folder; --db postgresql://... runs against PostgreSQL (use an empty database). Targets (docs/DESIGN):
recall p95 <= 20 ms; >= 500 writes/s. Figures are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness import VaultText
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.config import is_postgres_url, load_settings
from notewell.runtime import build_runtime
from notewell.store.factory import open_store

SEED = 20261129
PROJECTS = ("apollo", "hermes", "orion", "zephyr")
PATHS = ("decisions", "meetings", "ops/runbooks", "notes", "people", "clients", "risks", "plans")


class Corpus(VaultText):
    """The example vault's text: memories are 1 to 3 of its sentences."""

    def memory(self, rng: random.Random, n: int) -> tuple[str, str, list[str]]:
        picked = rng.sample(self.sentences, rng.randint(1, 3))
        title = " ".join(picked[0].split()[:6])
        tags = sorted(set(rng.choices(self.words, self.weights, k=rng.randint(0, 2))))
        return title, " ".join(picked) + f" (note {n})", tags

    def query(self, rng: random.Random) -> str:
        """1 to 3 words, as frequent in queries as in the text; 30% of first words cut to a prefix."""
        words = rng.choices(self.words, self.weights, k=rng.randint(1, 3))
        if rng.random() < 0.3:
            words[0] = words[0][: max(3, len(words[0]) - 3)]
        return " ".join(words)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(fn: Callable[[], object], runs: list[float], cpu: list[float]) -> None:
    """Wall-clock ms into ``runs``; this thread's CPU ms into ``cpu`` (what the call costs on an idle core,
    whatever else the machine runs)."""
    start, start_cpu = time.perf_counter(), time.thread_time()
    fn()
    runs.append((time.perf_counter() - start) * 1000)
    cpu.append((time.thread_time() - start_cpu) * 1000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--db", default=None, help="a SQLite file or a postgresql:// URL (default: a temp file)")
    parser.add_argument("--queries-only", action="store_true",
                        help="skip writing: time the queries on the memories already in --db")
    args = parser.parse_args(argv)
    tmp = tempfile.TemporaryDirectory()
    db = args.db or str(Path(tmp.name) / "memories.db")
    store = open_store(db)
    rt = build_runtime(load_settings(tmp.name), store)
    administration, service = rt.administration, rt.memory
    for project in PROJECTS:
        if store.identity.project(project) is None:
            administration.add_project(LOCAL_OWNER, project)
    if store.identity.user_by_email("bench@example.com") is None:
        administration.add_user(LOCAL_OWNER, "bench@example.com", "member", handle="bench")
        for project in PROJECTS[:3]:
            administration.grant(LOCAL_OWNER, "bench@example.com", project, "write")
    user = store.identity.user_by_email("bench@example.com")
    assert user is not None
    member: Principal = user_principal(user)
    writers = [LOCAL_OWNER, member]

    corpus = Corpus()
    rng = random.Random(SEED)
    batch = [(corpus.memory(rng, n), PROJECTS[n % len(PROJECTS)] if n % 5 else None, rng.choice(PATHS),
              "working" if n % 7 == 0 else "durable")
             for n in range(0 if args.queries_only else args.memories)]  # --queries-only writes none
    chunks = [batch[i :: args.writers] for i in range(args.writers)]

    def write(chunk: list) -> int:  # type: ignore[type-arg]
        for (title, content, tags), project, path, kind in chunk:
            who = member if project is None or project in PROJECTS[:3] else writers[0]
            service.remember(who, content, title=title, tags=tags, project=project, path=path, memory_type=kind)
        return len(chunk)

    written, write_s = 0, 0.0
    if not args.queries_only:
        start = time.perf_counter()
        with ThreadPoolExecutor(args.writers) as pool:
            written = sum(pool.map(write, chunks))
        write_s = time.perf_counter() - start

    qrng = random.Random(SEED + 1)
    queries = [corpus.query(qrng) for _ in range(args.queries)]
    for q in queries[:50]:  # warm the caches
        service.recall(member, q)
    recall_ms: list[float] = []
    strict_ms: list[float] = []
    recall_cpu: list[float] = []
    strict_cpu: list[float] = []
    hits = 0
    for q in queries:
        timed(lambda q=q: service.recall(member, q), recall_ms, recall_cpu)
        timed(lambda q=q: service.search_memory(member, q), strict_ms, strict_cpu)
        hits += bool(service.search_memory(member, q).results)

    backend = "PostgreSQL" if is_postgres_url(db) else "SQLite"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {load}, "
          f"Python {platform.python_version()}, {backend}")
    if written:
        print(f"remember: {written} memories by {args.writers} writer threads in {write_s:.1f} s = "
              f"{written / write_s:.0f} writes/s (target >= 500)")
    print(f"live memories in the store: {store.memories.count()}")
    print(f"recall over {args.queries} queries: p50 {statistics.median(recall_ms):.2f} ms, "
          f"p95 {percentile(recall_ms, 0.95):.2f} ms, max {max(recall_ms):.2f} ms (target p95 <= 20 ms)")
    print(f"search_memory: p50 {statistics.median(strict_ms):.2f} ms, p95 {percentile(strict_ms, 0.95):.2f} ms; "
          f"{hits} of {args.queries} queries had a strict match")
    print(f"CPU time per call (load-independent): recall p50 {statistics.median(recall_cpu):.2f} ms, "
          f"p95 {percentile(recall_cpu, 0.95):.2f} ms; search_memory p50 {statistics.median(strict_cpu):.2f} ms, "
          f"p95 {percentile(strict_cpu, 0.95):.2f} ms")
    store.close()
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
