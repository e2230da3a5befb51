"""Benchmark (not a test): does a team's load stay fast and flat, on one server or several on one store?
Errors, latency (overall and per tool), RSS and open files per cycle, and whether every acknowledged write
is in the store afterwards.

Starts --servers N `python -m notewell serve` processes (default 1), each on its own port, all on one store: a
fresh index of a copy of examples/northwind in a SQLite file, or with --db the empty PostgreSQL database it
names. Only one of them holds the writer (watch and job) lease. A staff user gets a token of knowledge:read,
memory:read, memory:write and sessions, and some memories. Then --cycles of: --clients clients (default 16),
spread round-robin over the servers, for --seconds each in its own MCP session (the handshake era), calling
the mix below with varied arguments; the clients close their sessions; then --idle seconds. At each cycle's
end (after the idle time) it reads each server's RSS and open file descriptors from /proc.

The mix, per step of a client (a team's load: mostly reads, some writes):

- 40% searchKnowledge: a word or phrase of the vault, or a common 3-letter word ("the", "and", "for");
- 20% readDoc of a document of the vault;
- 15% recall of a query as above;
- 15% remember (memory:write): a new note, its text unique to the run;
- 10% a brain session: brain_start_session with a prompt, then brain_report_session_outcome of its session
  (two calls, each timed as its own tool).

Every remember answered without error is recorded with its ref and text; once the servers have stopped, the
store is opened again and each is read back by its ref: "acknowledged writes: N, lost: M" (lost: missing, or
not the text written).

--kill-leader K kills (SIGKILL) the server holding the lease K times, evenly spread over the first cycle's
load, and starts it again on its port; its clients open a new session once it answers. Errors the kill causes
(a refused or broken connection, a session the new process does not know) are counted apart from the rest.

    .venv/bin/python bench/load_bench.py [--servers 1] [--clients 16] [--seconds 60] [--idle 30] [--cycles 3]
                                         [--db URL] [--kill-leader K] [--json]

Target (docs/performance.md): 0 errors; p95 <= 500 ms with 64 clients over 4 servers on one database; RSS
and open files after the last cycle within 10% of the first (the ratio is printed: each cycle's total over
the servers against cycle 1's of the same run).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from harness import indexed_example
from load_fleet import Fleet, Kill
from notewell.errors import NotewellError
from notewell.runtime import open_runtime

PROTOCOL = "2025-11-25"
SCOPES = ["knowledge:read", "memory:read", "memory:write", "sessions"]
QUERIES = ["discount", "maximum discount", "pricing", "retainer", "client", "website", "contract", "invoice",
           "meeting", "onboarding", "policy", "review", "travel", "budget", "design", "support",
           "the", "and", "for"]
MEMORIES = ["The pricing review happens on Mondays.", "Retainers start at 3,500 EUR a month.",
            "Invoices go out on the first working day.", "Website launches need a design review first.",
            "Travel is booked through the office, never privately.", "Support answers within one working day."]
MIX = (("searchKnowledge", 0.40), ("readDoc", 0.20), ("recall", 0.15), ("remember", 0.15), ("brain", 0.10))
BRAIN_PAIR = ("brain_start_session", "brain_report_session_outcome")


def prepare(tmp: Path, db: str | None) -> tuple[Path, str, str, list[str]]:
    """(vault, db, token, document paths): the example vault indexed, a staff user with a token and memories."""
    vault, db, token, rt = indexed_example(tmp, SCOPES, db)
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


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    tool_errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    kill_errors: int = 0  # a refused or broken connection, or a session a restarted server does not know
    written: dict[str, str] = field(default_factory=dict)  # ref -> text of every acknowledged remember

    def all_latencies(self) -> list[float]:
        return sorted(x for values in self.latencies.values() for x in values)


class SessionLost(Exception):
    """The server went away (or came back without this session): open a new one."""


class Client:
    """One MCP session over its own keep-alive connection to one server."""

    def __init__(self, url: str, token: str, paths: list[str], number: int, seed: int) -> None:
        self.url = url
        self.paths = paths
        self.number = number
        self.random = random.Random(seed)
        self.token = token
        self.http = httpx.AsyncClient(timeout=60)
        self.headers: dict[str, str] = {}
        self.next_id = 0
        self.writes = 0

    async def open(self) -> None:
        self.headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json, text/event-stream",
                        "Content-Type": "application/json"}
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "load_bench", "version": "1"}}}
        response = await self.http.post(self.url, json=init, headers=self.headers)
        response.raise_for_status()
        self.headers.update({"Mcp-Session-Id": response.headers["mcp-session-id"], "MCP-Protocol-Version": PROTOCOL})
        await self.http.post(self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                             headers=self.headers)

    async def reopen(self, deadline: float) -> None:
        """A new session once the server answers again (or the load's deadline passes)."""
        while time.perf_counter() < deadline:
            try:
                await self.open()
                return
            except (httpx.HTTPError, KeyError):
                await asyncio.sleep(0.2)

    async def tool(self, tally: Tally, name: str, arguments: dict[str, object]) -> dict[str, object] | None:
        """One timed tools/call: its structured answer, or None when it failed (counted)."""
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}})
        started = time.perf_counter()
        try:
            response = await self.http.post(self.url, content=body, headers=self.headers)
        except httpx.TransportError as exc:
            tally.kill_errors += 1
            raise SessionLost(f"{name}: {exc!r}") from exc
        if response.status_code == 404:
            tally.kill_errors += 1
            raise SessionLost(f"{name}: session not found")
        tally.latencies[name].append(time.perf_counter() - started)
        try:
            answer = response.json()
        except ValueError:
            answer = {"error": "not JSON"}
        if response.status_code != 200 or "error" in answer or answer["result"].get("isError"):
            tally.errors.append(f"{name} {arguments}: {response.status_code} {response.text[:300]}")
            tally.tool_errors[name] += 1
            return None
        result: dict[str, object] = answer["result"].get("structuredContent") or {}
        return result

    async def step(self, tally: Tally) -> None:
        roll, kind = self.random.random(), MIX[-1][0]
        for candidate, share in MIX:
            if roll < share:
                kind = candidate
                break
            roll -= share
        query = self.random.choice(QUERIES)
        if kind == "searchKnowledge":
            await self.tool(tally, kind, {"query": query})
        elif kind == "readDoc":
            await self.tool(tally, kind, {"path": self.random.choice(self.paths)})
        elif kind == "recall":
            await self.tool(tally, kind, {"query": query})
        elif kind == "remember":
            self.writes += 1
            text = f"Load note {self.number}-{self.writes}: {self.random.choice(MEMORIES)}"
            answer = await self.tool(tally, kind, {"content": text, "path": f"load/{self.number % 8}"})
            if answer is not None:
                tally.written[str(answer["ref"])] = text
        else:
            started = await self.tool(tally, BRAIN_PAIR[0], {"prompt": f"{query} work", "clientType": "load_bench"})
            if started is not None:
                await self.tool(tally, BRAIN_PAIR[1], {"sessionId": started["sessionId"], "success": True})

    async def close(self) -> None:
        with contextlib.suppress(httpx.TransportError):
            await self.http.delete(self.url, headers=self.headers)
        await self.http.aclose()


async def cycle(fleet: Fleet, token: str, paths: list[str], clients: int, seconds: float, seed: int,
                kills: int) -> tuple[Tally, list[Kill]]:
    tally = Tally()
    urls = fleet.urls
    made = [Client(urls[i % len(urls)], token, paths, seed * 1000 + i, seed * 1000 + i) for i in range(clients)]
    await asyncio.gather(*(c.open() for c in made))
    deadline = time.perf_counter() + seconds
    done: list[Kill] = []
    killer = threading.Thread(target=kill_leader_during, args=(fleet, kills, seconds, done), daemon=True)
    if kills:
        killer.start()

    async def loop(client: Client) -> None:
        while time.perf_counter() < deadline:
            try:
                await client.step(tally)
            except SessionLost:
                await client.reopen(deadline)

    await asyncio.gather(*(loop(c) for c in made))
    await asyncio.gather(*(c.close() for c in made))
    if kills:
        killer.join()
    return tally, done


def kill_leader_during(fleet: Fleet, kills: int, seconds: float, done: list[Kill]) -> None:
    """``kills`` kills of the leader, at evenly spaced times of a load of ``seconds``."""
    started = time.monotonic()
    for number in range(1, kills + 1):
        time.sleep(max(0.0, started + seconds * number / (kills + 1) - time.monotonic()))
        kill = fleet.kill_leader()
        if kill is not None:
            done.append(kill)


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))] * 1000 if ordered else 0.0


def lost_writes(vault: Path, db: str, token: str, written: dict[str, str]) -> int:
    """How many acknowledged memories the store does not hold (by ref, with the text written)."""
    rt = open_runtime(str(vault), db)
    try:
        person = rt.authentication.authenticate(token)
        lost = 0
        for ref, text in written.items():
            try:
                lost += rt.memory.get(person, ref).content != text
            except NotewellError:
                lost += 1
        return lost
    finally:
        rt.close()


def cycle_row(number: int, tally: Tally, seconds: float, fleet: Fleet, kills: list[Kill]) -> dict[str, object]:
    ordered = tally.all_latencies()
    return {"cycle": number, "calls": len(ordered), "calls_per_s": len(ordered) / seconds,
            "errors": len(tally.errors), "kill_errors": tally.kill_errors,
            "p50_ms": statistics.median(ordered) * 1000 if ordered else 0.0,
            "p95_ms": percentile(ordered, 0.95), "p99_ms": percentile(ordered, 0.99),
            "rss_mb": fleet.rss_mb(), "open_files": fleet.open_files(),
            "kills": [vars(k) for k in kills]}


def tool_rows(tallies: list[Tally]) -> list[dict[str, object]]:
    merged: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    for tally in tallies:
        for name, values in tally.latencies.items():
            merged[name].extend(values)
        for name, count in tally.tool_errors.items():
            errors[name] += count
    rows: list[dict[str, object]] = []
    for name in sorted(merged, key=lambda n: -percentile(sorted(merged[n]), 0.95)):
        ordered = sorted(merged[name])
        rows.append({"tool": name, "calls": len(ordered), "errors": errors[name],
                     "p50_ms": statistics.median(ordered) * 1000, "p95_ms": percentile(ordered, 0.95)})
    return rows


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=1, help="`notewell serve` processes on the one store")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--idle", type=float, default=30)
    parser.add_argument("--cycles", type=int, default=3)
    parser.add_argument("--kill-leader", type=int, default=0, metavar="K",
                        help="kill -9 the lease holder K times during the first cycle, and restart it")
    parser.add_argument("--json", action="store_true", help="Print the figures as one JSON object.")
    parser.add_argument("--db", help="an empty PostgreSQL database (postgresql://...); default a SQLite file")
    args = parser.parse_args(argv)
    if args.servers < 1 or args.clients < 1 or args.cycles < 1 or args.kill_leader < 0:
        parser.error("--servers, --clients and --cycles must be at least 1, --kill-leader at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the load; 0 when there were no errors and no acknowledged write was lost, else 1."""
    args = parse(argv)
    rows: list[dict[str, object]] = []
    tallies: list[Tally] = []
    with tempfile.TemporaryDirectory(prefix="nw-load-") as tmp_name:
        vault, db, token, paths = prepare(Path(tmp_name), args.db)
        fleet = Fleet.start(vault, db, args.servers)
        try:
            baseline = {"rss_mb": fleet.rss_mb(), "open_files": fleet.open_files()}
            for number in range(1, args.cycles + 1):
                kills = args.kill_leader if number == 1 else 0
                tally, done = asyncio.run(cycle(fleet, token, paths, args.clients, args.seconds, number, kills))
                time.sleep(args.idle)
                tallies.append(tally)
                rows.append(cycle_row(number, tally, args.seconds, fleet, done))
                for error in tally.errors[:5]:
                    print(f"  error: {error}", file=sys.stderr)
        finally:
            fleet.stop()
        written = {ref: text for tally in tallies for ref, text in tally.written.items()}
        lost = lost_writes(vault, db, token, written)
    report = {"servers": args.servers, "clients": args.clients, "baseline": baseline, "cycles": rows,
              "tools": tool_rows(tallies), "acknowledged_writes": len(written), "lost_writes": lost}
    print(json.dumps(report) if args.json else render(args, report))
    return 0 if lost == 0 and all(row["errors"] == 0 for row in rows) else 1


def render(args: argparse.Namespace, report: dict[str, object]) -> str:
    base = report["baseline"]
    rows: list[dict[str, object]] = report["cycles"]
    first_rss, first_files = sum(rows[0]["rss_mb"]), sum(rows[0]["open_files"])
    lines = [f"{args.clients} clients over {args.servers} server(s), {args.seconds:g} s load + {args.idle:g} s idle "
             f"per cycle; servers at start: RSS {' / '.join(f'{x:.0f}' for x in base['rss_mb'])} MB, "
             f"{sum(base['open_files'])} open files",
             "| cycle | calls | calls/s | errors | p50 ms | p95 ms | p99 ms | RSS MB per server | RSS vs cycle 1 "
             "| open files | vs cycle 1 |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        rss, files = r["rss_mb"], r["open_files"]
        lines.append(f"| {r['cycle']} | {r['calls']} | {r['calls_per_s']:.1f} | {r['errors']} | {r['p50_ms']:.1f} | "
                     f"{r['p95_ms']:.1f} | {r['p99_ms']:.1f} | {' / '.join(f'{x:.0f}' for x in rss)} | "
                     f"{sum(rss) / first_rss:.2f} | {sum(files)} | {sum(files) / first_files:.2f} |")
    lines += ["", "| tool | calls | errors | p50 ms | p95 ms |", "|---|---|---|---|---|"]
    lines += [f"| {t['tool']} | {t['calls']} | {t['errors']} | {t['p50_ms']:.1f} | {t['p95_ms']:.1f} |"
              for t in report["tools"]]
    for r in rows:
        for kill in r["kills"]:
            lines.append(f"cycle {r['cycle']}: killed the leader (server {kill['server']}); it answered again in "
                         f"{kill['restart_s']:.1f} s; leader then: server {kill['new_leader']} "
                         f"after {kill['new_leader_s']} s")
        if r["kill_errors"]:
            lines.append(f"cycle {r['cycle']}: {r['kill_errors']} calls failed by a kill (connection or session "
                         "lost; not in the errors above)")
    lines.append(f"acknowledged writes: {report['acknowledged_writes']}, lost: {report['lost_writes']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
