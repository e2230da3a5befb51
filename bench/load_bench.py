"""Benchmark (not a test): does the server stay flat under load? Errors, latency, RSS and open files per cycle.

Starts `python -m notewell serve` in a subprocess on a fresh index of a copy of examples/northwind (a SQLite
file, or with --db the empty PostgreSQL database it names),
with a staff user's token (knowledge:read, memory:read) and some memories. Then three cycles of: 16 clients
for 60 s, each its own MCP session (the handshake era), calling a mix of searchKnowledge (half the calls),
readDoc and recall with varied arguments; the clients close their sessions; then 30 s idle. At each
cycle's end (after the idle time) it reads the server's RSS and open file descriptors from /proc.

    .venv/bin/python bench/load_bench.py [--clients 16] [--seconds 60] [--idle 30] [--cycles 3] [--db URL]

Target (docs/performance.md): 0 errors; RSS and open files after the last cycle within 10% of the first
(the ratio is printed: each cycle against cycle 1 of the same run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from harness import free_port, indexed_example, memory_mb, start_server

PROTOCOL = "2025-11-25"
QUERIES = ["discount", "maximum discount", "pricing", "retainer", "client", "website", "contract", "invoice",
           "meeting", "onboarding", "policy", "review", "travel", "budget", "design", "support"]
MEMORIES = ["The pricing review happens on Mondays.", "Retainers start at 3,500 EUR a month.",
            "Invoices go out on the first working day.", "Website launches need a design review first.",
            "Travel is booked through the office, never privately.", "Support answers within one working day."]


def prepare(tmp: Path, db: str | None) -> tuple[Path, str, str, list[str]]:
    """(vault, db, token, document paths): the example vault indexed, a staff user with a token and memories."""
    vault, db, token, rt = indexed_example(tmp, ["knowledge:read", "memory:read", "memory:write"], db)
    try:
        person = rt.authentication.authenticate(token)
        memory = rt.memory
        for i, text in enumerate(MEMORIES * 5):
            memory.remember(person, f"{text} (note {i})", path=f"bench/{i % 4}")
        paths = [f"{p}/{key[1]}" for p in rt.store.documents.vault_projects()
                 for key in rt.store.documents.state() if key[0] == p]
    finally:
        rt.close()
    return vault, db, token, paths


def rss_mb(pid: int) -> float:
    return memory_mb(pid)[0]


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Client:
    """One MCP session over its own keep-alive connection."""

    def __init__(self, url: str, token: str, paths: list[str], seed: int) -> None:
        self.url = url
        self.paths = paths
        self.random = random.Random(seed)
        self.headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
                        "Content-Type": "application/json"}
        self.http = httpx.AsyncClient(timeout=60)
        self.next_id = 0

    async def open(self) -> None:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "load_bench", "version": "1"}}}
        response = await self.http.post(self.url, json=init, headers=self.headers)
        response.raise_for_status()
        self.headers.update({"Mcp-Session-Id": response.headers["mcp-session-id"], "MCP-Protocol-Version": PROTOCOL})
        await self.http.post(self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                             headers=self.headers)

    def pick(self) -> tuple[str, dict[str, object]]:
        roll = self.random.random()
        if roll < 0.5:
            return "searchKnowledge", {"query": self.random.choice(QUERIES)}
        if roll < 0.75:
            return "readDoc", {"path": self.random.choice(self.paths)}
        return "recall", {"query": self.random.choice(QUERIES)}

    async def call(self, tally: Tally) -> None:
        self.next_id += 1
        name, arguments = self.pick()
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}})
        started = time.perf_counter()
        try:
            response = await self.http.post(self.url, content=body, headers=self.headers)
            answer = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            tally.errors.append(f"{name}: {exc!r}")
            return
        tally.latencies.append(time.perf_counter() - started)
        if response.status_code != 200 or "error" in answer or answer["result"].get("isError"):
            tally.errors.append(f"{name} {arguments}: {response.status_code} {response.text[:200]}")

    async def close(self) -> None:
        await self.http.delete(self.url, headers=self.headers)
        await self.http.aclose()


async def cycle(url: str, token: str, paths: list[str], clients: int, seconds: float, seed: int) -> Tally:
    tally = Tally()
    made = [Client(url, token, paths, seed * 1000 + i) for i in range(clients)]
    await asyncio.gather(*(c.open() for c in made))
    deadline = time.perf_counter() + seconds

    async def loop(client: Client) -> None:
        while time.perf_counter() < deadline:
            await client.call(tally)

    await asyncio.gather(*(loop(c) for c in made))
    await asyncio.gather(*(c.close() for c in made))
    return tally


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))] * 1000 if ordered else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--idle", type=float, default=30)
    parser.add_argument("--cycles", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="Print the figures as one JSON object.")
    parser.add_argument("--db", help="an empty PostgreSQL database (postgresql://...); default a SQLite file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nw-load-") as tmp_name:
        vault, db, token, paths = prepare(Path(tmp_name), args.db)
        port = free_port()
        server = start_server(vault, db, port)
        url = f"http://127.0.0.1:{port}/mcp"
        rows: list[dict[str, float]] = []
        try:
            baseline = {"rss_mb": rss_mb(server.pid), "open_files": open_files(server.pid)}
            for number in range(1, args.cycles + 1):
                tally = asyncio.run(cycle(url, token, paths, args.clients, args.seconds, number))
                time.sleep(args.idle)
                ordered = sorted(tally.latencies)
                rows.append({"cycle": number, "calls": len(ordered), "errors": len(tally.errors),
                             "p50_ms": statistics.median(ordered) * 1000 if ordered else 0.0,
                             "p95_ms": percentile(ordered, 0.95), "p99_ms": percentile(ordered, 0.99),
                             "rss_mb": rss_mb(server.pid), "open_files": open_files(server.pid)})
                for error in tally.errors[:5]:
                    print(f"  error: {error}", file=sys.stderr)
        finally:
            server.terminate()
            server.wait(timeout=30)
    first = rows[0]
    for row in rows:
        row["rss_vs_cycle1"] = row["rss_mb"] / first["rss_mb"]
        row["files_vs_cycle1"] = row["open_files"] / first["open_files"]
    if args.json:
        print(json.dumps({"baseline": baseline, "cycles": rows}))
        return
    print(f"{args.clients} clients, {args.seconds:g} s load + {args.idle:g} s idle per cycle; server at start: "
          f"RSS {baseline['rss_mb']:.0f} MB, {baseline['open_files']} open files")
    print("| cycle | calls | errors | p50 ms | p95 ms | p99 ms | RSS MB | vs cycle 1 | open files | vs cycle 1 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['cycle']:.0f} | {r['calls']:.0f} | {r['errors']:.0f} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | "
              f"{r['p99_ms']:.1f} | {r['rss_mb']:.0f} | {r['rss_vs_cycle1']:.2f} | {r['open_files']:.0f} | "
              f"{r['files_vs_cycle1']:.2f} |")


if __name__ == "__main__":
    main()
