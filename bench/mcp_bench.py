"""Benchmark (not a test): searchKnowledge over Streamable HTTP on the example vault.

Starts `python -m notewell serve` in a subprocess on a fresh index of a copy of examples/northwind with a
real user token, then drives it with 1 and with 16 concurrent clients and reports p50/p95 latency and
calls per second. Each call is a complete tools/call: a new HTTP request with the bearer token, token
check against the store, the search, JSON out. The clients send the 2026-07-28 per-request envelope
(what the SDK's client speaks by default) by default; --era legacy uses a handshake session per client.

    .venv/bin/python bench/mcp_bench.py [--seconds 5] [--era modern|legacy] [--query "maximum discount"]
    .venv/bin/python bench/mcp_bench.py --versus-sdk [--rounds 10] [--client wrk] [--concurrency 1]

--versus-sdk also starts the MCP SDK's own server with a trivial tool (bench/sdk_echo_server.py: echo)
and calls it with the same requests (envelope, headers; no token) in the same run, in alternating turns
(Notewell, SDK, Notewell, ...; --seconds in all per server and concurrency level), and reports both and
their difference (issue 16's target: searchKnowledge p50 within 1 ms of the SDK's trivial tool).

Target (docs/performance.md): p50 <= 5 ms, >= 300 calls/s with 16 clients. The clients share the
machine (2 cores) with the server. With --client httpx (the default) they are Python asyncio clients,
which spend more CPU per call than the server does; --client wrk drives the same requests from wrk
(Debian's package, C, a Lua script for the body and the p95), which leaves the server most of a core.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from mcp.shared.inbound import MCP_METHOD_HEADER, MCP_NAME_HEADER, MCP_PROTOCOL_VERSION_HEADER
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

from harness import cpu_seconds, free_port, indexed_example, start_process, start_server, stop

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def prepare(tmp: Path) -> tuple[Path, str, str]:
    """(vault, db, token): a copy of the example vault, indexed, with a staff user's knowledge:read token."""
    vault, db, token, rt = indexed_example(tmp, ["knowledge:read"])
    rt.close()
    return vault, db, token


def base_headers(token: str | None) -> dict[str, str]:
    """What every request sends: the media types and the bearer token (``None``: no Authorization header)."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def modern_headers(tool: str) -> dict[str, str]:
    """The 2026-07-28 era's routing headers of a tools/call (no session: each request says what it is)."""
    return {MCP_PROTOCOL_VERSION_HEADER: MODERN, MCP_METHOD_HEADER: "tools/call", MCP_NAME_HEADER: tool}


class Caller:
    """One client of one tool: keeps its HTTP connection (and, in the legacy era, its session)."""

    def __init__(self, url: str, token: str | None, era: str, tool: str, arguments: dict[str, object]) -> None:
        self.url = url
        self.era = era
        self.tool = tool
        self.arguments = arguments
        self.headers = base_headers(token)
        self.http = httpx.AsyncClient(timeout=60)
        self.next_id = 0

    async def open(self) -> None:
        if self.era != "legacy":
            self.headers.update(modern_headers(self.tool))
            return
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "mcp_bench", "version": "1"}}}
        response = await self.http.post(self.url, json=init, headers=self.headers)
        response.raise_for_status()
        self.headers.update({"Mcp-Session-Id": response.headers["mcp-session-id"],
                             MCP_PROTOCOL_VERSION_HEADER: LEGACY})
        await self.http.post(self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                             headers=self.headers)

    async def call(self, arguments: dict[str, object] | None = None) -> tuple[float, dict[str, Any]]:
        """(seconds, result) of one tools/call with ``arguments`` (by default the caller's); stops the benchmark
        on an HTTP error or an error result."""
        self.next_id += 1
        params: dict[str, object] = {"name": self.tool, "arguments": self.arguments if arguments is None else arguments}
        if self.era != "legacy":
            params["_meta"] = {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_CAPABILITIES_META_KEY: {}}
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params})
        started = time.perf_counter()
        response = await self.http.post(self.url, content=body, headers=self.headers)
        elapsed = time.perf_counter() - started
        result: dict[str, Any] = response.json().get("result", {})
        if response.status_code != 200 or result.get("isError", True):
            raise SystemExit(f"unexpected answer: {response.status_code} {response.text[:300]}")
        return elapsed, result

    async def close(self) -> None:
        if self.era == "legacy":
            await self.http.delete(self.url, headers=self.headers)
        await self.http.aclose()


@dataclass(frozen=True)
class Target:
    """A server and the call the clients make to it; ``answered`` tells a right answer from a wrong one."""

    label: str
    url: str
    token: str | None
    tool: str
    arguments: dict[str, object]
    answered: Callable[[dict[str, Any]], bool]
    pid: int

    def caller(self, era: str) -> Caller:
        return Caller(self.url, self.token, era, self.tool, self.arguments)


def found(result: dict[str, Any]) -> bool:
    """A searchKnowledge answer with results."""
    return bool(result["structuredContent"]["results"])


async def check_answer(target: Target, era: str) -> None:
    """One call through a Caller; stops the benchmark on an error or a wrong answer."""
    caller = target.caller(era)
    await caller.open()
    _, result = await caller.call()
    await caller.close()
    if not target.answered(result):
        raise SystemExit(f"{target.label}: unexpected answer {json.dumps(result)[:300]}")


@dataclass
class Sample:
    """Latencies of calls, and the wall-clock and server CPU seconds they took."""

    latencies: list[float] = field(default_factory=list)
    wall: float = 0.0
    server_cpu: float = 0.0

    def add(self, other: Sample) -> None:
        self.latencies += other.latencies
        self.wall += other.wall
        self.server_cpu += other.server_cpu

    def figures(self, clients: int) -> dict[str, float]:
        ordered = sorted(self.latencies)
        return {"clients": clients, "calls": len(ordered), "p50_ms": statistics.median(ordered) * 1000,
                "p95_ms": ordered[int(0.95 * (len(ordered) - 1))] * 1000, "calls_per_s": len(ordered) / self.wall,
                "server_cpu_ms": self.server_cpu / len(ordered) * 1000}


async def sample(target: Target, era: str, clients: int, seconds: float) -> Sample:
    """``clients`` callers calling ``target`` for ``seconds`` after one untimed call each (connection warm-up)."""
    callers = [target.caller(era) for _ in range(clients)]
    await asyncio.gather(*(c.open() for c in callers))
    for c in callers:
        await c.call()
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def loop(caller: Caller) -> None:
        while time.perf_counter() < deadline:
            latencies.append((await caller.call())[0])

    started, cpu_before = time.perf_counter(), cpu_seconds(target.pid)
    await asyncio.gather(*(loop(c) for c in callers))
    wall, cpu = time.perf_counter() - started, cpu_seconds(target.pid) - cpu_before
    await asyncio.gather(*(c.close() for c in callers))
    return Sample(latencies, wall, cpu)


def alternating(targets: Sequence[Target], era: str, clients: int, seconds: float, rounds: int) -> list[Sample]:
    """Each target for ``seconds`` in all, in ``rounds`` turns one after the other (load that comes and goes on
    the machine then falls on all of them alike)."""
    samples = [Sample() for _ in targets]
    for _ in range(rounds):
        for target, total in zip(targets, samples, strict=True):
            total.add(asyncio.run(sample(target, era, clients, seconds / rounds)))
    return samples


WRK_SCRIPT = """
wrk.method = "POST"
wrk.body = [[%s]]
%s
function done(summary, latency, requests)
  io.write(string.format("WRK %%d %%d %%d %%.3f %%.3f %%d\\n", summary.requests, summary.duration,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout, latency:percentile(50) / 1000, latency:percentile(95) / 1000, 0))
end
"""


def run_wrk(target: Target, clients: int, seconds: float, tmp: Path) -> dict[str, float]:
    """The same tools/call as a modern-era Caller, sent by wrk over ``clients`` keep-alive connections."""
    params = {"name": target.tool, "arguments": target.arguments,
              "_meta": {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_CAPABILITIES_META_KEY: {}}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    headers = {**base_headers(target.token), **modern_headers(target.tool)}
    script = tmp / "call.lua"
    script.write_text(WRK_SCRIPT % (body, "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items())))
    cpu_before = cpu_seconds(target.pid)
    command = ["wrk", f"-t{min(clients, 2)}", f"-c{clients}", f"-d{seconds:g}s", "-s", str(script), target.url]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    cpu = cpu_seconds(target.pid) - cpu_before
    fields = next(line for line in out.splitlines() if line.startswith("WRK ")).split()
    calls, micros, errors = int(fields[1]), int(fields[2]), int(fields[3])
    if errors or calls == 0:
        raise SystemExit(f"wrk saw {errors} failed calls of {calls}:\n{out}")
    return {"clients": clients, "calls": calls, "p50_ms": float(fields[4]), "p95_ms": float(fields[5]),
            "calls_per_s": calls / (micros / 1e6), "server_cpu_ms": cpu / calls * 1000}


def wrk_alternating(targets: Sequence[Target], clients: int, seconds: float, rounds: int,
                    tmp: Path) -> list[dict[str, float]]:
    """run_wrk on each target in turn, ``rounds`` times (whole seconds each, as wrk takes them); the p50 and p95
    of a target are the medians of its turns' (each turn's are over thousands of calls)."""
    turns: list[list[dict[str, float]]] = [[] for _ in targets]
    for _ in range(rounds):
        for target, done in zip(targets, turns, strict=True):
            done.append(run_wrk(target, clients, max(1.0, float(int(seconds / rounds))), tmp))
    rows = []
    for done in turns:
        calls = sum(t["calls"] for t in done)
        rows.append({"clients": clients, "calls": calls, "p50_ms": statistics.median(t["p50_ms"] for t in done),
                     "p95_ms": statistics.median(t["p95_ms"] for t in done),
                     "calls_per_s": calls / sum(t["calls"] / t["calls_per_s"] for t in done),
                     "server_cpu_ms": sum(t["server_cpu_ms"] * t["calls"] for t in done) / calls})
    return rows


def echoed(result: dict[str, Any]) -> bool:
    """The SDK echo server's answer to ``{"text": "ping"}``."""
    return bool(result["structuredContent"]["result"] == "ping")


def print_row(label: str, r: dict[str, float]) -> None:
    print(f"{label:<25} {r['clients']:>7.0f} {r['calls']:>7.0f} {r['p50_ms']:>8.2f} {r['p95_ms']:>8.2f} "
          f"{r['calls_per_s']:>8.0f} {r['server_cpu_ms']:>19.2f}")


def measure_level(targets: Sequence[Target], args: argparse.Namespace, clients: int, tmp: Path) -> None:
    """One concurrency level: a row per target, and with two targets the first's excess over the second."""
    rounds = args.rounds if len(targets) > 1 else 1
    if args.client == "wrk":
        rows = wrk_alternating(targets, clients, args.seconds, rounds, tmp)
    else:
        rows = [s.figures(clients) for s in alternating(targets, args.era, clients, args.seconds, rounds)]
    for target, row in zip(targets, rows, strict=True):
        print_row(target.label, row)
    if len(rows) == 2:
        first, second = rows
        p50, p95 = first["p50_ms"] - second["p50_ms"], first["p95_ms"] - second["p95_ms"]
        cpu = first["server_cpu_ms"] - second["server_cpu_ms"]
        print(f"{'difference':<25} {'':>7} {'':>7} {p50:>+8.2f} {p95:>+8.2f} {'':>8} {cpu:>+19.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each concurrency level runs (per server)")
    parser.add_argument("--era", choices=["modern", "legacy"], default="modern")
    parser.add_argument("--query", default="maximum discount")
    parser.add_argument("--project", default="northwind-advisory", help="'' to search every project")
    parser.add_argument("--concurrency", default="1,16", help="comma-separated client counts")
    parser.add_argument("--client", choices=["httpx", "wrk"], default="httpx",
                        help="who sends the calls: Python asyncio clients, or wrk (modern era only)")
    parser.add_argument("--versus-sdk", action="store_true",
                        help="also time the MCP SDK's own server's trivial tool (echo) in the same run")
    parser.add_argument("--rounds", type=int, default=10,
                        help="with --versus-sdk: turns per level, alternating between the servers (default 10)")
    args = parser.parse_args()
    if args.client == "wrk" and args.era != "modern":
        parser.error("--client wrk sends the modern era's stateless calls; drop --era legacy")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    arguments: dict[str, object] = {"query": args.query}
    if args.project:
        arguments["project"] = args.project
    with tempfile.TemporaryDirectory(prefix="notewell-mcp-bench-") as tmp, ExitStack() as servers:
        vault, db, token = prepare(Path(tmp))
        port = free_port()
        server = start_server(vault, db, port, "--toolsets", "knowledge")
        servers.callback(stop, server)
        targets = [Target("notewell searchKnowledge", f"http://127.0.0.1:{port}/mcp", token, "searchKnowledge",
                          arguments, found, server.pid)]
        if args.versus_sdk:
            sdk_port = free_port()
            sdk = start_process([sys.executable, str(Path(__file__).with_name("sdk_echo_server.py")), "--port",
                                 str(sdk_port)], f"http://127.0.0.1:{sdk_port}/mcp")
            servers.callback(stop, sdk)
            targets.append(Target("SDK echo", f"http://127.0.0.1:{sdk_port}/mcp", None, "echo", {"text": "ping"},
                                  echoed, sdk.pid))
        for target in targets:
            asyncio.run(check_answer(target, args.era))
        load = os.getloadavg()[0]
        turns = f", in {args.rounds} alternating turns" if args.versus_sdk else ""
        print(f"searchKnowledge {json.dumps(arguments)} over HTTP ({args.era} era, {args.client} clients), "
              f"{args.seconds:g} s per level and server{turns}")
        print(f"{'server, tool':<25} {'clients':>7} {'calls':>7} {'p50 ms':>8} {'p95 ms':>8} {'calls/s':>8} "
              f"{'server CPU ms/call':>19}")
        for clients in (int(c) for c in args.concurrency.split(",")):
            measure_level(targets, args, clients, Path(tmp))
        print(f"load average at the start {load:.1f}, at the end {os.getloadavg()[0]:.1f}, on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
