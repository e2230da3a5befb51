"""The calls an agent makes on a large vault, timed over MCP inside one session of `notewell serve`: issue 27's
table (listProjects, listDocs, searchKnowledge for two-character, rare and CJK words, getDocs, recall), each
search beside ripgrep over the same files in the same run.

    .venv/bin/python bench/vault_calls_bench.py --corpus DIR --db PATH_OR_URL [--calls 20] [--rg-runs 3]

``--db`` is a store already indexed from ``--corpus`` with search_bench's file types (bench/search_bench.py
--scale builds the 1 GB corpus, with Debian's Chinese and Japanese manual pages as projects ``zh`` and ``ja``,
and its store). The server runs in its own process (``notewell serve --no-watch --no-jobs``, so it does not
sync the vault with other file types); one client (the MCP SDK's, which checks each answer against the tool's
schema) opens one session and calls each tool ``--calls`` times in turns, after one untimed call each. Prints
p50 / p95 in ms, the server's CPU per call, each answer's size and whether it was complete (a search is
complete when its answer has no note saying results may be missing), and for the searches ripgrep's p50
over the same files (its flags as in bench/search_bench.py) with the ratio ripgrep p50 / Notewell p95.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from harness import cpu_seconds, free_port, staff_token, start_server, stop
from mcp_world import connect  # the MCP SDK's client over Streamable HTTP
from notewell.runtime import open_runtime
from search_bench import Query, Timing, children_cpu, percentile, rg_command, timed

SEARCHES = (("qz", "2 characters"), ("ζq", "2 characters, found nowhere"), ("中文", "CJK word"),
            ("文件", "CJK word, its characters apart in many files"), ("levenshtein", "rare literal"))


def plan(project: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, tool, arguments): the issue's table, in the order it lists them."""
    return [
        ("listProjects", "listProjects", {}),
        (f"listDocs {project}", "listDocs", {"project": project}),
        *((f"searchKnowledge `{q}`", "searchKnowledge", {"query": q}) for q, _ in SEARCHES),
        ("getDocs", "getDocs", {}),
        ("recall", "recall", {"query": "edit distance between strings"}),
    ]


async def measure(url: str, token: str, calls: list[tuple[str, str, dict[str, Any]]], runs: int,
                  server: int) -> dict[str, tuple[list[float], int, bool, float]]:
    """Per label: the timed calls in ms, the answer's size in bytes, whether it was complete, and the server
    process's CPU ms per call (read around a block of ``runs`` calls of it alone, after the timed turns)."""
    samples: dict[str, list[float]] = {label: [] for label, _, _ in calls}
    server_cpu: dict[str, float] = {}
    sizes: dict[str, int] = {}
    complete: dict[str, bool] = {}
    async with connect(url, token) as client:
        for label, tool, arguments in calls:  # one untimed call each: the caches filled, the answer checked
            result = await client.call_tool(tool, arguments)
            if result.is_error:
                raise SystemExit(f"{label}: {result.content}")
            text = result.content[0].text  # type: ignore[union-attr]
            sizes[label] = len(text.encode())
            note = str(json.loads(text).get("note") or "")
            complete[label] = "missing" not in note and "stopped" not in note
        for _ in range(runs):
            for label, tool, arguments in calls:
                started = time.perf_counter()
                await client.call_tool(tool, arguments)
                samples[label].append((time.perf_counter() - started) * 1000)
        for label, tool, arguments in calls:
            before = cpu_seconds(server)
            for _ in range(runs):
                await client.call_tool(tool, arguments)
            server_cpu[label] = (cpu_seconds(server) - before) * 1000 / runs
    return {label: (samples[label], sizes[label], complete[label], server_cpu[label]) for label, _, _ in calls}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rg-runs", type=int, default=3)
    parser.add_argument("--project", default="copy1", help="the project listDocs lists (default copy1)")
    args = parser.parse_args(argv)
    rt = open_runtime(str(args.corpus), args.db)
    try:
        if not rt.store.documents.state():
            raise SystemExit(f"{args.db}: an empty store; index {args.corpus} first (bench/search_bench.py --scale)")
        token = staff_token(rt, ["knowledge:read", "memory:read"])
    finally:
        rt.close()
    port = free_port()
    server = start_server(args.corpus, args.db, port, "--no-watch", "--no-jobs")
    try:
        figures = asyncio.run(measure(f"http://127.0.0.1:{port}/mcp", token, plan(args.project), args.calls,
                                      server.pid))
    finally:
        stop(server)
    projects = sorted(p.name for p in args.corpus.iterdir() if p.is_dir() and not p.name.startswith("."))

    def ripgrep_timing(query: Query) -> Timing:
        command = rg_command(query, projects)
        return timed(lambda: subprocess.run(command, cwd=args.corpus, capture_output=True, check=False),
                     args.rg_runs, children_cpu)

    ripgrep = {f"searchKnowledge `{q}`": ripgrep_timing(Query(q, q, False, what)) for q, what in SEARCHES}
    print(f"{args.calls} calls of each in turns, one MCP session; ripgrep {args.rg_runs} runs")
    print("| call | p50 ms | p95 ms | server CPU ms a call | answer bytes | complete | ripgrep p50 ms |"
          " rg p50 / our p95 |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
    for label, (ms, size, whole, cpu) in figures.items():
        p50, p95 = statistics.median(ms), percentile(ms, 95)
        rg = ripgrep.get(label)
        versus = f"{rg.p50_ms:,.0f} | {rg.p50_ms / p95:.0f}x" if rg else " | "
        print(f"| {label} | {p50:.1f} | {p95:.1f} | {cpu:.1f} | {size:,} | {'yes' if whole else 'no'} | {versus} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
