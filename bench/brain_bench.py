"""Brain benchmark: brain_start_session (with a prompt) and brain_retrieve_knowledge over HTTP, with
10k taught items and 10k sessions, against the memory toolset's recall on the same store as the peer.

    python bench/brain_bench.py [--items N] [--sessions N] [--calls N] [--db URL_OR_PATH]

A member gets N taught items (through BrainService.teach: memory, knowledge row and audit entry) spread
over 4 personal projects, kinds and 1 to 3 sentences of the example vault each, and N sessions (each with
its prompt and one event in the search index). Then ``notewell serve`` runs in its own process and one
client calls each tool ``--calls`` times in turn over one handshake-era session (JSON answers), with a
prompt of 1 to 3 words drawn from the vault as often as they occur; then each tool ``--calls`` times in a
block, reading the server process's CPU time before and after (its CPU per call does not depend on what
else the machine runs). Every item's and session's vector is made before the server starts, so the tools
rank by words and meaning as served. Targets: p95 <= 30 ms on SQLite (issue 10, before meaning);
brain_start_session with a prompt p95 <= 35 ms over 10k items with meaning (issue 24). Figures are in
docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import secrets
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from harness import VaultText, cpu_seconds, free_port, start_server
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER
from notewell.config import is_postgres_url
from notewell.records.brain import EventRecord, SessionRecord
from notewell.runtime import open_runtime
from notewell.services.meaning import embed_all
from notewell.timestamps import now_iso

SEED = 20261130
KINDS = ("reflex", "recipe", "heuristic", "principle", "anti_principle")


class Corpus(VaultText):
    def prompt(self, rng: random.Random) -> str:
        return " ".join(rng.choices(self.words, self.weights, k=rng.randint(1, 3)))


def seed_store(vault: Path, db: str, items: int, sessions: int, rng: random.Random, corpus: Corpus) -> str:
    rt = open_runtime(str(vault), db)
    try:
        rt.administration.add_user(LOCAL_OWNER, "bench@example.com", "member", handle="bench")
        token = rt.administration.mint_token(LOCAL_OWNER, "bench@example.com", ["sessions", "memory:read"]).secret
        user = rt.store.identity.user_by_email("bench@example.com")
        assert user is not None
        p = user_principal(user)
        svc = rt.brain
        projects = [svc.create_project(p, f"Bench {n}")[0].id for n in range(4)]
        started = time.perf_counter()
        for i in range(items):
            picked = rng.sample(corpus.sentences, rng.randint(1, 3))
            svc.teach(p, trigger=f"when {corpus.prompt(rng)}", rule=" ".join(picked), kind=rng.choice(KINDS),
                      project_id=projects[i % 4])
        taught = time.perf_counter() - started
        started = time.perf_counter()
        for i in range(sessions):
            session = SessionRecord(id=f"ses_{secrets.token_hex(10)}", user_id=p.user_id, token_id=None,
                                    brain_project=projects[i % 4], client_type="bench",
                                    prompt=rng.choice(corpus.sentences), framework=None, started_at=now_iso())
            rt.store.brain.add_session(session)
            rt.store.brain.add_event(EventRecord(id=f"evt_{secrets.token_hex(10)}", session_id=session.id,
                                                 event_type="note", payload={"text": corpus.prompt(rng)},
                                                 at=now_iso()), corpus.prompt(rng))
        logged = time.perf_counter() - started
        print(f"seeded {items} items in {taught:.1f} s ({items / taught:.0f}/s), {sessions} sessions in "
              f"{logged:.1f} s", flush=True)
        embedded, seconds = embed_all(rt.meaning)  # every vector in before the server starts (0 with meaning off)
        print(f"embedded {embedded} items and sessions in {seconds:.1f} s", flush=True)
    finally:
        rt.close()
    return token


class Client:
    """One handshake-era MCP session over one keep-alive connection."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=30)
        self.headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "brain_bench", "version": "1"}}}
        response = self.http.post(url, json=init, headers=self.headers)
        response.raise_for_status()
        self.headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
        self.http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers)
        self.next_id = 0

    def call(self, name: str, arguments: dict[str, object]) -> tuple[float, dict[str, object]]:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}}
        started = time.perf_counter()
        response = self.http.post(self.url, json=body, headers=self.headers)
        elapsed = time.perf_counter() - started
        result = response.json()["result"]
        if response.status_code != 200 or result.get("isError"):
            raise SystemExit(f"unexpected answer to {name}: {response.status_code} {response.text[:300]}")
        return elapsed, result["structuredContent"]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[max(0, round(0.95 * len(ordered)) - 1)] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--db", help="a SQLite path or a postgresql:// URL (an empty database)")
    args = parser.parse_args()
    rng = random.Random(SEED)
    corpus = Corpus()
    with tempfile.TemporaryDirectory(prefix="brain-bench-") as tmp:
        vault = Path(tmp) / "vault"
        vault.mkdir()
        db = args.db or str(Path(tmp) / "index.db")
        token = seed_store(vault, db, args.items, args.sessions, rng, corpus)
        port = free_port()
        server = start_server(vault, db, port)
        try:
            client = Client(f"http://127.0.0.1:{port}/mcp", token)
            prompts = [corpus.prompt(rng) for _ in range(args.calls)]
            tools = (("brain_start_session", lambda q: {"clientType": "bench", "prompt": q}),
                     ("brain_retrieve_knowledge", lambda q: {"prompt": q, "limit": 10}),
                     ("recall", lambda q: {"query": q, "limit": 10}))
            for name, make in tools:  # warm-up
                for q in prompts[:20]:
                    client.call(name, make(q))
            times: dict[str, list[float]] = {name: [] for name, _ in tools}
            hits = 0
            for q in prompts:  # interleaved, so a slow moment of the machine weighs on every tool alike
                for name, make in tools:
                    elapsed, answer = client.call(name, make(q))
                    times[name].append(elapsed)
                    if name == "brain_start_session" and "relevantKnowledge" in answer:
                        hits += 1
            cpu: dict[str, float] = {}
            for name, make in tools:  # the server's own CPU per call, in a block per tool: load-independent
                before = cpu_seconds(server.pid)
                for q in prompts:
                    client.call(name, make(q))
                cpu[name] = (cpu_seconds(server.pid) - before) / len(prompts) * 1000
        finally:
            server.terminate()
            server.wait(10)
        shutil.rmtree(vault, ignore_errors=True)
    backend = "PostgreSQL" if is_postgres_url(db) else "SQLite"
    print(f"{backend}, {args.items} taught items, {args.sessions} sessions, {args.calls} calls per tool "
          f"({platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores); "
          f"start_session injected knowledge in {hits}/{args.calls} calls")
    peer = percentiles(times["recall"])
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    print("| tool | p50 ms | p95 ms | p50 / recall | p95 / recall | server CPU ms per call |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, samples in times.items():
        p50, p95 = percentiles(samples)
        print(f"| {name} | {p50:.1f} | {p95:.1f} | {p50 / peer[0]:.2f} | {p95 / peer[1]:.2f} | {cpu[name]:.1f} |")


if __name__ == "__main__":
    main()
