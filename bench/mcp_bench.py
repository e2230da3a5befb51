"""Benchmark (not a test): searchKnowledge over Streamable HTTP on the example vault.

Starts `python -m notewell serve` in a subprocess on a fresh index of a copy of examples/northwind with a
real user token, then drives it with 1 and with 16 concurrent clients and reports p50/p95 latency and
calls per second. Each call is a complete tools/call: a new HTTP request with the bearer token, token
check against the store, the search, JSON out. The clients send the 2026-07-28 per-request envelope
(what the SDK's client speaks by default) by default; --era legacy uses a handshake session per client.

    .venv/bin/python bench/mcp_bench.py [--seconds 5] [--era modern|legacy] [--query "maximum discount"]

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
import tempfile
import time
from pathlib import Path

import httpx
from mcp.shared.inbound import MCP_METHOD_HEADER, MCP_NAME_HEADER, MCP_PROTOCOL_VERSION_HEADER
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

from harness import cpu_seconds, free_port, indexed_example, start_server

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def prepare(tmp: Path) -> tuple[Path, str, str]:
    """(vault, db, token): a copy of the example vault, indexed, with a staff user's knowledge:read token."""
    vault, db, token, rt = indexed_example(tmp, ["knowledge:read"])
    rt.close()
    return vault, db, token


class Caller:
    """One client: keeps its HTTP connection (and, in the legacy era, its session)."""

    def __init__(self, url: str, token: str, era: str, arguments: dict[str, object]) -> None:
        self.url = url
        self.era = era
        self.arguments = arguments
        self.headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
                        "Content-Type": "application/json"}
        self.http = httpx.AsyncClient(timeout=30)
        self.next_id = 0

    async def open(self) -> None:
        if self.era != "legacy":
            self.headers.update({MCP_PROTOCOL_VERSION_HEADER: MODERN, MCP_METHOD_HEADER: "tools/call",
                                 MCP_NAME_HEADER: "searchKnowledge"})
            return
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "mcp_bench", "version": "1"}}}
        response = await self.http.post(self.url, json=init, headers=self.headers)
        response.raise_for_status()
        self.headers.update({"Mcp-Session-Id": response.headers["mcp-session-id"],
                             MCP_PROTOCOL_VERSION_HEADER: LEGACY})
        await self.http.post(self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                             headers=self.headers)

    async def call(self) -> float:
        self.next_id += 1
        params: dict[str, object] = {"name": "searchKnowledge", "arguments": self.arguments}
        if self.era != "legacy":
            params["_meta"] = {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_CAPABILITIES_META_KEY: {}}
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params})
        started = time.perf_counter()
        response = await self.http.post(self.url, content=body, headers=self.headers)
        elapsed = time.perf_counter() - started
        result = response.json()["result"]
        if response.status_code != 200 or result.get("isError") or not result["structuredContent"]["results"]:
            raise SystemExit(f"unexpected answer: {response.status_code} {response.text[:300]}")
        return elapsed

    async def close(self) -> None:
        if self.era == "legacy":
            await self.http.delete(self.url, headers=self.headers)
        await self.http.aclose()


async def check_answer(url: str, token: str, era: str, arguments: dict[str, object]) -> None:
    """One call through a Caller, which stops the benchmark on an error or an empty answer."""
    caller = Caller(url, token, era, arguments)
    await caller.open()
    await caller.call()
    await caller.close()


async def run(url: str, token: str, era: str, clients: int, seconds: float,
              arguments: dict[str, object], server_pid: int) -> dict[str, float]:
    callers = [Caller(url, token, era, arguments) for _ in range(clients)]
    await asyncio.gather(*(c.open() for c in callers))
    for c in callers:  # warm up each connection
        await c.call()
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def loop(caller: Caller) -> None:
        while time.perf_counter() < deadline:
            latencies.append(await caller.call())

    started, cpu_before = time.perf_counter(), cpu_seconds(server_pid)
    await asyncio.gather(*(loop(c) for c in callers))
    wall, cpu = time.perf_counter() - started, cpu_seconds(server_pid) - cpu_before
    await asyncio.gather(*(c.close() for c in callers))
    ordered = sorted(latencies)
    return {"clients": clients, "calls": len(ordered), "p50_ms": statistics.median(ordered) * 1000,
            "p95_ms": ordered[int(0.95 * (len(ordered) - 1))] * 1000, "calls_per_s": len(ordered) / wall,
            "server_cpu_ms": cpu / len(ordered) * 1000}


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


def run_wrk(url: str, token: str, clients: int, seconds: float, arguments: dict[str, object],
            server_pid: int, tmp: Path) -> dict[str, float]:
    """The same tools/call as a modern-era Caller, sent by wrk over ``clients`` keep-alive connections."""
    params = {"name": "searchKnowledge", "arguments": arguments,
              "_meta": {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_CAPABILITIES_META_KEY: {}}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", MCP_PROTOCOL_VERSION_HEADER: MODERN,
               MCP_METHOD_HEADER: "tools/call", MCP_NAME_HEADER: "searchKnowledge"}
    script = tmp / "call.lua"
    script.write_text(WRK_SCRIPT % (body, "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items())))
    cpu_before = cpu_seconds(server_pid)
    out = subprocess.run(["wrk", f"-t{min(clients, 2)}", f"-c{clients}", f"-d{seconds:g}s", "-s", str(script), url],
                         capture_output=True, text=True, check=True).stdout
    cpu = cpu_seconds(server_pid) - cpu_before
    fields = next(line for line in out.splitlines() if line.startswith("WRK ")).split()
    calls, micros, errors = int(fields[1]), int(fields[2]), int(fields[3])
    if errors or calls == 0:
        raise SystemExit(f"wrk saw {errors} failed calls of {calls}:\n{out}")
    return {"clients": clients, "calls": calls, "p50_ms": float(fields[4]), "p95_ms": float(fields[5]),
            "calls_per_s": calls / (micros / 1e6), "server_cpu_ms": cpu / calls * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each concurrency level runs")
    parser.add_argument("--era", choices=["modern", "legacy"], default="modern")
    parser.add_argument("--query", default="maximum discount")
    parser.add_argument("--project", default="northwind-advisory", help="'' to search every project")
    parser.add_argument("--concurrency", default="1,16", help="comma-separated client counts")
    parser.add_argument("--client", choices=["httpx", "wrk"], default="httpx",
                        help="who sends the calls: Python asyncio clients, or wrk (modern era only)")
    args = parser.parse_args()
    arguments: dict[str, object] = {"query": args.query}
    if args.project:
        arguments["project"] = args.project
    with tempfile.TemporaryDirectory(prefix="notewell-mcp-bench-") as tmp:
        vault, db, token = prepare(Path(tmp))
        port = free_port()
        server = start_server(vault, db, port, "--toolsets", "knowledge")
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            if args.client == "wrk" and args.era != "modern":
                raise SystemExit("--client wrk sends the modern era's stateless calls; drop --era legacy")
            asyncio.run(check_answer(url, token, args.era, arguments))
            print(f"searchKnowledge {json.dumps(arguments)} over HTTP ({args.era} era, {args.client} clients), "
                  f"{args.seconds:g} s per level")
            print(f"{'clients':>7} {'calls':>7} {'p50 ms':>8} {'p95 ms':>8} {'calls/s':>8} {'server CPU ms/call':>19}")
            for clients in (int(c) for c in args.concurrency.split(",")):
                if args.client == "wrk":
                    r = run_wrk(url, token, clients, args.seconds, arguments, server.pid, Path(tmp))
                else:
                    r = asyncio.run(run(url, token, args.era, clients, args.seconds, arguments, server.pid))
                print(f"{r['clients']:>7.0f} {r['calls']:>7.0f} {r['p50_ms']:>8.2f} {r['p95_ms']:>8.2f} "
                      f"{r['calls_per_s']:>8.0f} {r['server_cpu_ms']:>19.2f}")
            print(f"load average while running: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        finally:
            server.terminate()
            server.wait(timeout=20)


if __name__ == "__main__":
    main()
