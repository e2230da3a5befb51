"""Benchmark (not a test): `notewell serve`'s resident memory after many mixed searches, on a vault and store you give.

    .venv/bin/python bench/server_rss_bench.py --vault DIR --db PATH [--queries 1000] [--clients 1] [--no-watch]
        [--recall] [--memories N] [--settle S] [--after S]

Starts `notewell serve --vault DIR --db PATH` on loopback and a free port. The store must already hold the
vault (built by `notewell index --vault DIR --db PATH`, with the vault's notewell.toml naming the file
types, as the server reads it too): the server's start-up sync then only compares each file's size and
time with the store's. A token (knowledge:read) is minted for the staff user bench@example.com, who is
added to the store first if missing (no home folder: the vault is not written to). Once the server is
idle (its start-up sync done: its CPU time stands still), --queries calls go over Streamable HTTP in the
2026-07-28 per-request envelope (mcp_bench.py's Caller), from --clients concurrent clients: the query
mix of search_bench.py (MIXED), in turn; plain text to searchKnowledge (first match per file, 40 files),
the regular expressions to search_notes with regex=true (searchKnowledge takes plain text only).

With --recall, every fourth plain-text call is a `recall` of the same words instead (the token also holds
memory:read), so the embedding model is loaded and serves each of those queries; --memories N first
remembers N memories of bench/memory_bench.py's corpus in the vault's first project (the server's
embedding runner embeds them before it is idle), so the vectors are held as well.

Reports the server process's VmRSS and VmHWM (/proc) when idle after the start, after the calls and once its
memory trim has run after them (http/memory_task.py),
p50/p95 of the calls per tool, the server's CPU per call, and what the start-up sync changed (its log).
Target (issue 16, docs/performance.md): RSS <= 200 MB after 1,000 mixed queries on the 1 GB vault; with the
embedding model loaded (issue 24): <= 300 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness import cpu_seconds, free_port, memory_mb, staff_token, start_server, stop
from mcp_bench import Caller
from memory_bench import Corpus
from notewell.access.principal import LOCAL_OWNER
from notewell.http.memory_task import TRIM_SECONDS
from notewell.runtime import open_runtime
from search_bench import MIXED, Query

IDLE_CPU_S = 0.05  # less CPU than this in IDLE_WINDOW_S: the server is idle
IDLE_WINDOW_S = 2.0


def mint_token(vault: Path, db: str, memories: int) -> str:
    """A token for the calls; with ``memories``, that many memories remembered first (as the local owner)."""
    rt = open_runtime(str(vault), db, create=False)
    try:
        if memories:
            project = rt.store.identity.projects()[0].id
            corpus, rng = Corpus(), random.Random(20261202)
            for n in range(memories):
                title, content, tags = corpus.memory(rng, n)
                rt.memory.remember(LOCAL_OWNER, content, title=title, tags=tags, project=project, path="notes")
        return staff_token(rt, ["knowledge:read", "memory:read"])
    finally:
        rt.close()


def wait_until_idle(pid: int, timeout: float) -> float:
    """Seconds until the process used less than IDLE_CPU_S of CPU in IDLE_WINDOW_S (its start-up sync done)."""
    started = time.monotonic()
    before = cpu_seconds(pid)
    while time.monotonic() - started < timeout:
        time.sleep(IDLE_WINDOW_S)
        now = cpu_seconds(pid)
        if now - before < IDLE_CPU_S:
            return time.monotonic() - started
        before = now
    raise SystemExit(f"the server was still busy after {timeout:g} s (a start-up sync that re-indexes the vault? "
                     "check that notewell.toml names the file types the store was built with)")


TOOLS = {"searchKnowledge": "results", "search_notes": "matches", "recall": "results"}  # the list each answer holds


def tool_call(query: Query, n: int, recall: bool) -> tuple[str, dict[str, object]]:
    if query.regex:
        return "search_notes", {"query": query.text, "regex": True}
    if recall and n % 4 == 3:
        return "recall", {"query": query.text}
    return "searchKnowledge", {"query": query.text}


async def warm_up(url: str, token: str, queries: int, clients: int,
                  recall: bool) -> tuple[dict[str, list[float]], int]:
    """``queries`` calls of the mix, shared out among ``clients`` clients: the latencies per tool, and how many
    calls found something."""
    tools = tuple(TOOLS)
    latencies: dict[str, list[float]] = {tool: [] for tool in tools}
    found = 0
    callers = [{tool: Caller(url, token, "modern", tool, {}) for tool in tools} for _ in range(clients)]
    for caller in (c for pair in callers for c in pair.values()):
        await caller.open()
    turns = iter(range(queries))

    async def client(own: dict[str, Caller]) -> None:
        nonlocal found
        for n in turns:
            tool, arguments = tool_call(MIXED[n % len(MIXED)], n, recall)
            seconds, result = await own[tool].call(arguments)
            latencies[tool].append(seconds)
            found += bool(result["structuredContent"][TOOLS[tool]])

    await asyncio.gather(*(client(own) for own in callers))
    for caller in (c for pair in callers for c in pair.values()):
        await caller.close()
    return latencies, found


def percentiles(samples: list[float]) -> str:
    if not samples:
        return "no calls"
    ordered = sorted(samples)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return f"{len(ordered)} calls, p50 {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"


def start_up_syncs(log: Path) -> str:
    """What the watcher's syncs did, from the server's log lines (none: nothing changed)."""
    lines = [m.group(1) for m in re.finditer(r"op=watch\.sync (.*)", log.read_text("utf-8", "replace"))]
    return "; ".join(lines) if lines else "nothing to do (no op=watch.sync line)"


@dataclass(frozen=True)
class Figures:
    settled_s: float  # from the start until the server was idle
    idle_mb: tuple[float, float]  # VmRSS, VmHWM once idle
    latencies: dict[str, list[float]]
    found: int
    wall_s: float
    cpu_s: float  # the server's, during the calls
    after_mb: tuple[float, float]  # VmRSS, VmHWM after the calls
    threads: int  # the server's threads after the calls (each worker thread keeps its own store connection)
    syncs: str
    settled_mb: tuple[float, float]  # VmRSS, VmHWM once its memory trim has run after the calls


def measure(args: argparse.Namespace, token: str) -> Figures:
    """Serve, wait for idle, read the memory, make the calls, read it again."""
    with tempfile.TemporaryDirectory(prefix="nw-rss-") as tmp:
        log_path = Path(tmp) / "serve.log"
        port = free_port()
        with log_path.open("wb") as log:
            started = time.monotonic()
            server = start_server(args.vault, args.db, port, *([] if args.watch else ["--no-watch"]), log=log)
            try:
                settled = wait_until_idle(server.pid, args.settle) + time.monotonic() - started
                idle = memory_mb(server.pid)
                cpu_before, calls_started = cpu_seconds(server.pid), time.perf_counter()
                url = f"http://127.0.0.1:{port}/mcp"
                latencies, found = asyncio.run(warm_up(url, token, args.queries, args.clients, args.recall))
                wall, cpu = time.perf_counter() - calls_started, cpu_seconds(server.pid) - cpu_before
                after = memory_mb(server.pid)
                threads = len(os.listdir(f"/proc/{server.pid}/task"))
                time.sleep(args.after)  # by default the server's memory trim (http/memory_task.py) has run since
                after_trim = memory_mb(server.pid)
            finally:
                stop(server)
        return Figures(settled, idle, latencies, found, wall, cpu, after, threads, start_up_syncs(log_path),
                       after_trim)


def loads() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--vault", type=Path, required=True, help="the vault folder")
    parser.add_argument("--db", required=True, help="its store, already built: a SQLite file or a postgresql:// URL")
    parser.add_argument("--queries", type=int, default=1000, help="calls of the mix (default 1000)")
    parser.add_argument("--clients", type=int, default=1, help="concurrent clients (default 1)")
    parser.add_argument("--watch", action=argparse.BooleanOptionalAction, default=True,
                        help="serve with the vault watcher (default), as `notewell serve` does, or --no-watch")
    parser.add_argument("--recall", action="store_true",
                        help="every fourth plain-text call a recall (the model loaded)")
    parser.add_argument("--memories", type=int, default=0, help="memories remembered first (default 0)")
    parser.add_argument("--settle", type=float, default=600, help="seconds to wait for the server to be idle")
    parser.add_argument("--after", type=float, default=TRIM_SECONDS + 1,
                        help=f"seconds after the calls before the last reading (default {TRIM_SECONDS + 1:g}: the "
                             "server's memory trim has run by then)")
    args = parser.parse_args()
    if args.queries < 1 or args.clients < 1:
        parser.error("--queries and --clients must be at least 1")
    if not args.vault.is_dir():
        parser.error(f"--vault: {args.vault} is not a folder")
    token = mint_token(args.vault, args.db, args.memories)
    load = loads()
    f = measure(args, token)
    print(f"Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; load average at the start {load}, at the end "
          f"{loads()}, {os.cpu_count()} CPUs")
    print(f"notewell serve --vault {args.vault} --db {args.db}{'' if args.watch else ' --no-watch'}")
    print(f"start-up: {f.settled_s:.1f} s until idle; the watcher's sync: {f.syncs if args.watch else 'no watcher'}")
    print(f"idle after the start: VmRSS {f.idle_mb[0]:.0f} MB (VmHWM {f.idle_mb[1]:.0f} MB)")
    print(f"{args.queries} mixed calls ({len(MIXED)} queries in turn) from {args.clients} client(s) in "
          f"{f.wall_s:.1f} s, server CPU {f.cpu_s / args.queries * 1000:.1f} ms per call; {f.found} found something")
    for tool, samples in f.latencies.items():
        print(f"  {tool}: {percentiles(samples)}")
    print(f"  all: {percentiles([s for samples in f.latencies.values() for s in samples])}")
    print(f"after the calls: VmRSS {f.after_mb[0]:.0f} MB (VmHWM {f.after_mb[1]:.0f} MB), {f.threads} threads")
    trimmed = " (the server's memory trim ran)" if args.after > TRIM_SECONDS else ""
    print(f"{args.after:g} s later{trimmed}: VmRSS {f.settled_mb[0]:.0f} MB")


if __name__ == "__main__":
    main()
