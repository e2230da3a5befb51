"""Benchmark (not a test): links (docs/links.md) on a generated vault of linked notes.

    .venv/bin/python bench/links_bench.py [--documents 3000] [--builds 2] [--rounds 200] [--out FILE]
    .venv/bin/python bench/links_bench.py --vault DIR [--file-types .py,.txt,...] [--builds 1]   # builds only

1. **Build.** A vault of ``--documents`` markdown notes in 3 projects (sentences of the example vault, a link on
   one line in seven: wikilinks by name, with labels and headings, relative markdown links, mentions of paths in
   backticks, a tenth of them to nothing) is indexed into a fresh SQLite store ``--builds`` times with links and
   as many times without (``notewell.indexer.parse_links`` replaced by one that finds none, so the indexer
   stores and resolves none), in turns, after one untimed build. The report gives the build's wall-clock and
   CPU seconds both ways and their ratio, the time the build spent in link work when links were on (parsing,
   plus the resolving and writing of ``relink``; timed around those calls), and what links add to the store
   (the database files' sizes with and without) against the text.
2. **Latency over MCP.** ``notewell serve`` on the store built with links, and one client session (the
   2025-11-25 handshake: one Mcp-Session-Id for every call) with a staff token (knowledge:read and memory:read),
   calling in turns, ``--rounds``
   times each: getLinks of a document, buildContext of it (depth 2, max_tokens 4000), readDoc of it, and
   searchKnowledge of two words of it (the full-text peer, in the same run). p50 and p95 of each, and their
   ratio to searchKnowledge's.

With ``--vault DIR`` the builds run on that folder instead (the 1 GB vault of the targets, say), indexing the
``--file-types`` given (the scale corpus's by default), with no warm-up build and no MCP part.

Targets (issue 29): extraction <= 15% of the build time and <= 0.05x the text in the store; getLinks p95
<= 10 ms and buildContext p95 <= 60 ms over MCP.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import posixpath
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from harness import VaultText, free_port, staff_token, start_server, stop
from mcp_bench import LEGACY, base_headers
from notewell import indexer
from notewell.config import Settings
from notewell.runtime import open_runtime
from notewell.store import open_store

PROJECTS = ("acme-consulting", "harbour-works", "field-notes")
FOLDERS = ("clients", "meetings", "plans", "notes", "research")
LINES = 56  # lines of text a note holds
LINK_EVERY = 7  # one line in this many holds a link
SEED = 29


@dataclass(frozen=True)
class Note:
    project: str
    path: str  # inside the project, ".md" included

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)[:-3]


def generate(root: Path, documents: int, text: VaultText) -> list[Note]:
    """The linked vault under ``root``; its notes."""
    rng = random.Random(SEED)
    notes: list[Note] = []
    for i in range(documents):
        words = rng.sample(text.words[:2000], 2)
        name = f"{words[0].capitalize()} {words[1]} {i}" if i % 10 == 0 else f"{words[0]}-{words[1]}-{i}"
        notes.append(Note(PROJECTS[i % len(PROJECTS)], f"{rng.choice(FOLDERS)}/{name}.md"))
    by_project = {p: [n for n in notes if n.project == p] for p in PROJECTS}
    for note in notes:
        lines = [f"# {note.name}", ""]
        for n in range(LINES):
            line = rng.choice(text.sentences)
            if n % LINK_EVERY == 3:
                line += " " + _link(rng, note, rng.choice(by_project[note.project]))
            lines.append(line)
            if n % 6 == 5:
                lines.append("")
        file = root / note.project / note.path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return notes


def _link(rng: random.Random, source: Note, target: Note) -> str:
    roll = rng.random()
    if roll < 0.1:
        return f"See [[no such note {rng.randrange(10_000)}]]."
    if roll < 0.5:
        return rng.choice([f"See [[{target.name}]].", f"As [[{target.name}|the note]] says.",
                           f"Per [[{target.name}#Terms]]."])
    if roll < 0.8:
        relative = posixpath.relpath(target.path, posixpath.dirname(source.path))
        return f"More in [the note]({quote(relative)})."
    return f"Kept in `{target.path}`."


@contextmanager
def timed_link_work(seconds: list[float]) -> Iterator[None]:
    """While inside: the time spent in the indexer's link parsing and in relink, added to ``seconds[0]``."""
    parse, relink = indexer.parse_links, indexer._Writing.relink

    def timed(fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args)
            finally:
                seconds[0] += time.perf_counter() - started
        return run

    indexer.parse_links = timed(parse)  # type: ignore[assignment]
    indexer._Writing.relink = timed(relink)  # type: ignore[method-assign]
    try:
        yield
    finally:
        indexer.parse_links = parse  # type: ignore[assignment]
        indexer._Writing.relink = relink  # type: ignore[method-assign]


@contextmanager
def no_links() -> Iterator[None]:
    """While inside: the indexer finds no link in any document."""
    parse = indexer.parse_links
    indexer.parse_links = lambda *args: []  # type: ignore[assignment]
    try:
        yield
    finally:
        indexer.parse_links = parse  # type: ignore[assignment]


SCALE_TYPES = ".py,.txt,.rst,.html,.c,.h"  # the scale corpus's (bench/search_bench.py FILE_TYPES)


def build(vault: Path, db: Path, links: bool, file_types: tuple[str, ...] | None = None) -> dict[str, float]:
    """One build of ``vault`` into the new SQLite file ``db``: seconds, CPU seconds, link seconds, file bytes."""
    gc.collect()
    link_seconds = [0.0]
    store = open_store(str(db))
    try:
        with timed_link_work(link_seconds) if links else no_links():
            started, cpu = time.perf_counter(), time.process_time()
            settings = Settings(vault=vault, db=str(db), **({"file_types": file_types} if file_types else {}))
            report = indexer.sync(settings, store)
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        text_bytes = store.documents.sizes()[1]
    finally:
        store.close()
    with closing(sqlite3.connect(db)) as conn:
        link_rows = conn.execute("SELECT count(*) FROM document_links").fetchone()[0]
    return {"wall_s": wall, "cpu_s": cpu, "link_s": link_seconds[0], "db_bytes": float(db.stat().st_size),
            "text_bytes": float(text_bytes), "documents": float(report.added), "links": float(link_rows)}


class Session:
    """One MCP client session (the 2025-11-25 handshake) calling any tool."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=60)
        self.headers = base_headers(token)
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "links_bench", "version": "1"}}}
        response = self.http.post(url, json=init, headers=self.headers)
        response.raise_for_status()
        self.headers.update({"Mcp-Session-Id": response.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY})
        self.http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers)
        self.next_id = 0

    def call(self, tool: str, arguments: dict[str, object]) -> tuple[float, dict[str, Any]]:
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                           "params": {"name": tool, "arguments": arguments}})
        started = time.perf_counter()
        response = self.http.post(self.url, content=body, headers=self.headers)
        elapsed = time.perf_counter() - started
        result: dict[str, Any] = response.json().get("result", {})
        if response.status_code != 200 or result.get("isError", True):
            raise SystemExit(f"{tool}: unexpected answer {response.status_code} {response.text[:300]}")
        return elapsed, result["structuredContent"]

    def close(self) -> None:
        self.http.delete(self.url, headers=self.headers)
        self.http.close()


def calls(note: Note, rng: random.Random, vault: Path) -> dict[str, dict[str, object]]:
    path = f"{note.project}/{note.path}"
    words = rng.choice((vault / path).read_text(encoding="utf-8").splitlines()[2:8]).split()
    at = rng.randrange(max(1, len(words) - 1))
    return {"getLinks": {"path": path}, "buildContext": {"path": path, "depth": 2, "max_tokens": 4000},
            "readDoc": {"path": path}, "searchKnowledge": {"query": " ".join(words[at:at + 2])}}


def latencies(vault: Path, db: Path, notes: list[Note], rounds: int) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Each tool's latencies over one session, in turns; and what the answers held (links, context items)."""
    rt = open_runtime(str(vault), str(db))
    try:
        # memory:read too: buildContext then also looks up the memories about each document it reaches
        token = staff_token(rt, ["knowledge:read", "memory:read"])
    finally:
        rt.close()
    port = free_port()
    server = start_server(vault, str(db), port, "--no-watch")
    rng = random.Random(SEED)
    times: dict[str, list[float]] = {}
    held = {"links": 0.0, "backlinks": 0.0, "items": 0.0, "tokens": 0.0}
    try:
        session = Session(f"http://127.0.0.1:{port}/mcp", token)
        for tool, arguments in calls(notes[0], rng, vault).items():  # warm-up, untimed
            session.call(tool, arguments)
        for n in range(rounds):
            planned = list(calls(rng.choice(notes), rng, vault).items())
            planned = planned[n % 4:] + planned[: n % 4]  # each tool first as often as the others
            for tool, arguments in planned:
                elapsed, answer = session.call(tool, arguments)
                times.setdefault(tool, []).append(elapsed)
                if tool == "getLinks":
                    held["links"] += answer["outgoingTotal"] / rounds
                    held["backlinks"] += answer["backlinksTotal"] / rounds
                elif tool == "buildContext":
                    held["items"] += len(answer["items"]) / rounds
                    held["tokens"] += answer["tokens_used"] / rounds
        session.close()
    finally:
        stop(server)
    return times, held


def p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[int(q * (len(ordered) - 1))] * 1000


def report(builds: dict[bool, list[dict[str, float]]], times: dict[str, list[float]] | None, held: dict[str, float],
           started_load: float, vault: str = "") -> str:
    def median(links: bool, key: str) -> float:
        return statistics.median(b[key] for b in builds[links])

    first = builds[True][0]
    mb = first["text_bytes"] / 1e6
    size_with, size_without = median(True, "db_bytes"), median(False, "db_bytes")
    grown = size_with - size_without
    share = statistics.median(b["link_s"] / b["wall_s"] for b in builds[True])
    what = (f"{vault}: {first['documents']:.0f} documents" if vault else
            f"{first['documents']:.0f} generated markdown notes")
    density = "" if vault else f" (one line in {LINK_EVERY} holds one)"
    lines = [f"Vault: {what}, {mb:.1f} MB of text, {first['links']:.0f} "
             f"links{density}; {len(builds[True])} builds with links and "
             f"{len(builds[False])} without, in turns (medians); load average {started_load:.1f} at the start, "
             f"{os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} CPUs", "",
             "| build | with links | without | with / without |", "| --- | ---: | ---: | ---: |"]
    for key, label in (("wall_s", "wall-clock s"), ("cpu_s", "CPU s")):
        a, b = median(True, key), median(False, key)
        lines.append(f"| {label} | {a:.2f} | {b:.2f} | {a / b:.2f}x |")
    lines.append(f"| store (SQLite file) MB | {size_with / 1e6:.1f} | {size_without / 1e6:.1f} | "
                 f"{size_with / size_without:.2f}x |")
    lines += ["", f"- link work inside the builds with links (parse_links + relink): {share:.1%} of the build's "
                  f"wall-clock time (target <= 15%)",
              f"- links add {grown / 1e6:.1f} MB to the store: {grown / first['text_bytes']:.3f}x the text "
              f"(target <= 0.05x)"]
    if times is None:
        return "\n".join(lines)
    lines += ["", f"MCP, one session, {len(times['getLinks'])} calls of each tool in turns (a getLinks answer held "
              f"{held['links']:.1f} links and {held['backlinks']:.1f} backlinks on average; a buildContext "
              f"{held['items']:.1f} items, {held['tokens']:.0f} tokens):", "",
              "| tool | p50 ms | p95 ms | p50 / searchKnowledge | p95 / searchKnowledge | target p95 |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    peer50, peer95 = p(times["searchKnowledge"], 0.5), p(times["searchKnowledge"], 0.95)
    for tool, target in (("getLinks", "<= 10 ms"), ("buildContext", "<= 60 ms"), ("readDoc", ""),
                         ("searchKnowledge", "")):
        a50, a95 = p(times[tool], 0.5), p(times[tool], 0.95)
        lines.append(f"| {tool} | {a50:.1f} | {a95:.1f} | {a50 / peer50:.2f}x | {a95 / peer95:.2f}x | {target} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--documents", type=int, default=3000, help="notes in the generated vault (default 3000)")
    parser.add_argument("--builds", type=int, default=2, help="builds with links, and as many without (default 2)")
    parser.add_argument("--rounds", type=int, default=200, help="calls of each tool over MCP (default 200)")
    parser.add_argument("--out", type=Path, help="also write the markdown report to this file")
    parser.add_argument("--vault", type=Path, help="build this folder instead of a generated vault (builds only)")
    parser.add_argument("--file-types", default=SCALE_TYPES, help=f"with --vault: what to index ({SCALE_TYPES})")
    args = parser.parse_args()
    if args.vault is not None:
        return existing_vault(args)
    if args.documents < 10 or args.builds < 1 or args.rounds < 10:
        parser.error("--documents at least 10, --builds at least 1, --rounds at least 10")
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="notewell-links-bench-") as tmp:
        vault = Path(tmp) / "vault"
        print(f"generating {args.documents} notes ...", file=sys.stderr)
        notes = generate(vault, args.documents, VaultText())
        builds: dict[bool, list[dict[str, float]]] = {True: [], False: []}
        kept = Path(tmp) / "links.db"
        print("warm-up build (untimed: imports, the page cache) ...", file=sys.stderr)
        build(vault, Path(tmp) / "warm-up.db", True)
        for n in range(args.builds):
            for links in (n % 2 == 0, n % 2 != 0):  # which goes first alternates
                db = Path(tmp) / f"build-{n}-{links}.db"
                print(f"build {n + 1}/{args.builds} {'with' if links else 'without'} links ...", file=sys.stderr)
                builds[links].append(build(vault, db, links))
                if links and not kept.exists():
                    db.rename(kept)
                else:
                    db.unlink()
        print(f"{args.rounds} rounds over MCP ...", file=sys.stderr)
        times, held = latencies(vault, kept, notes, args.rounds)
    text = report(builds, times, held, load)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


def existing_vault(args: argparse.Namespace) -> int:
    """Builds of ``args.vault`` with links and without, in turns; the report without the MCP part."""
    if not args.vault.is_dir():
        raise SystemExit(f"--vault: {args.vault} is not a folder")
    types = tuple(t.strip() for t in args.file_types.split(",") if t.strip())
    load = os.getloadavg()[0]
    builds: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory(prefix="notewell-links-bench-") as tmp:
        for n in range(args.builds):
            for links in (n % 2 == 0, n % 2 != 0):
                db = Path(tmp) / f"build-{n}-{links}.db"
                print(f"build {n + 1}/{args.builds} {'with' if links else 'without'} links ...", file=sys.stderr)
                builds[links].append(build(args.vault, db, links, types))
                for part in Path(tmp).glob(f"{db.name}*"):
                    part.unlink()
    text = report(builds, None, {}, load, str(args.vault))
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
