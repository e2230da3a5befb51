"""Migration benchmark: `notewell migrate` of a store with N memories and M coding sessions, timed, with the
migrating process's peak memory.

    python bench/migrate_bench.py [--memories N] [--sessions M] [--to URL_OR_PATH]

The source is a SQLite store filled through the table loader itself (store/shared/tables.py: the rows an
import would load, memories' word indexes rebuilt at the end): N memories over 20 projects, M sessions with
4 events each and their search pieces, and one audit entry per memory. Then `python -m notewell migrate
--from sqlite:SOURCE --to TARGET --json` runs in its own process; the figures are its wall time, rows per
second, peak resident memory (getrusage of the child: the largest of its processes, the word vectors' workers
included) and the CPU time its processes used (the database server's not counted), which a loaded machine
changes less than the wall time. Target (issue 28): >= 5,000 rows/s and <= 300 MB
at 100k memories and 10k sessions. Figures are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from notewell.store import open_store

SEED = 20261201
WORDS = ("gripper", "firmware", "staging", "key", "deploy", "servo", "arm", "limit", "acceleration", "calibrate",
         "robot", "vault", "note", "memory", "session", "index", "search", "token", "grant", "project", "review",
         "release", "branch", "test", "failure", "retry", "timeout")


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _at(i: int) -> str:
    return f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00.{i % 1_000_000:06d}Z"


def memories(n: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    for i in range(1, n + 1):
        yield {"id": i, "ref": f"mem_{i:020d}", "project": f"p{i % 20}", "author_user_id": "u_bench",
               "author_token_id": None, "memory_type": "durable", "path": f"notes/{i % 500}", "title": _text(rng, 4),
               "content": _text(rng, 40), "tags": '["bench"]', "content_hash": f"{i:064x}", "created": _at(i),
               "updated": _at(i), "expires_at": None, "superseded_by": None, "deleted_at": None, "deleted_by": None,
               "delete_reason": None, "private_to": None}


def sessions(m: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    for i in range(1, m + 1):
        yield {"seq": i, "id": f"ses_{i:020d}", "user_id": "u_bench", "token_id": None, "brain_project": "p0",
               "client_type": "claude-code", "prompt": _text(rng, 12), "framework": None, "started_at": _at(i),
               "ended_at": _at(i), "success": 1, "user_feedback": "up", "sqs": 0.5, "summary": _text(rng, 8),
               "event_count": 4}


def events(m: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    for i in range(1, 4 * m + 1):
        yield {"seq": i, "id": f"evt_{i:020d}", "session_id": f"ses_{(i - 1) // 4 + 1:020d}",
               "event_type": "file_edit", "payload": json.dumps({"path": f"src/{i % 90}.py", "note": _text(rng, 6)}),
               "at": _at(i)}


def pieces(m: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    for i in range(1, m + 1):
        for _ in range(5):
            yield {"session_seq": i, "user_id": "u_bench", "body": _text(rng, 10)}


def audit(n: int) -> Iterator[dict[str, Any]]:
    for i in range(1, n + 1):
        yield {"id": i, "at": _at(i), "user_id": "u_bench", "token_id": None, "action": "memory.remember",
               "target": f"mem_{i:020d}", "detail": "{}"}


def fill(path: Path, n: int, m: int) -> int:
    store = open_store(str(path))
    rng = random.Random(SEED)
    feeds = {"memories": memories(n, rng), "brain_sessions": sessions(m, rng), "brain_events": events(m, rng),
             "brain_session_words": pieces(m, rng), "audit_log": audit(n)}
    try:
        with store.tables.loading() as loader:
            target = loader.target()
            for name, rows in feeds.items():
                table = target[name]
                loader.insert(table, table.names, rows)
        return sum(store.tables.counts().values())
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--to", help="the target store (default: a new SQLite file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="notewell-migrate-bench-") as tmp:
        source = Path(tmp) / "source.db"
        started = time.perf_counter()
        rows = fill(source, args.memories, args.sessions)
        print(f"filled {rows} rows in {time.perf_counter() - started:.1f} s ({source.stat().st_size >> 20} MB)")
        target = args.to or f"sqlite:{Path(tmp) / 'target.db'}"
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "notewell", "migrate", "--from", f"sqlite:{source}",
                               "--to", target, "--json"], capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            sys.exit(f"migrate failed: {done.stderr.strip()}")
        moved = sum(t["rows"] for t in json.loads(done.stdout)["tables"])
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open("/proc/loadavg", encoding="ascii") as load:
            load_average = load.read().split()[0]
        print(f"migrated {moved} rows to {target.split('@')[-1]} in {seconds:.1f} s: {moved / seconds:,.0f} rows/s, "
              f"peak {used.ru_maxrss / 1024:.0f} MB (the largest process), CPU {used.ru_utime + used.ru_stime:.1f} s "
              f"(its processes, not the database server's), load average {load_average} after")


if __name__ == "__main__":
    main()
