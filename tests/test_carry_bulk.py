"""A migration large enough for PostgreSQL's bulk path: several batches of memories and session pieces, whose word
vectors are computed in worker processes (store/postgres/lexeme_pool.py) and written by COPY. Each row's vectors
must be the ones the PostgreSQL store computes when a memory or a piece is written one at a time, in the right
row, and a search must find the same memories on both backends."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg

from conftest import run_cli
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from notewell.store import open_store
from notewell.store.postgres import lexemes
from notewell.store.shared.tables import BATCH_ROWS
from pg import PgCluster

WORDS = ("gripper", "firmware", "staging", "servo", "arm", "limit", "acceleration", "calibrate", "torque",
         "naïve", "café", "e-mail", "v2.1", "don't", "back\\slash", "中文")
RARE, RARE_EVERY = "quokka", 97  # a word in a few memories' titles alone, across the batches
MEMORIES = 2 * BATCH_ROWS + 37  # three batches, the last short
SESSIONS = BATCH_ROWS // 5 + 9  # five pieces each: two batches


def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def memories(rng: random.Random) -> Iterator[dict[str, Any]]:
    for i in range(1, MEMORIES + 1):
        at = f"2026-01-01T00:00:{i % 60:02d}.{i:06d}Z"
        yield {"id": i, "ref": f"mem_{i:020d}", "project": f"p{i % 3}", "author_user_id": "local",
               "author_token_id": None, "memory_type": "durable", "path": f"notes/{i % 7}",
               "title": f"{text(rng, 2)} {RARE if i % RARE_EVERY == 0 else 'arm'}",
               "content": text(rng, 1 + i % 60), "tags": '["bulk"]', "content_hash": f"{i:064x}", "created": at,
               "updated": at, "expires_at": None, "superseded_by": None, "deleted_at": None, "deleted_by": None,
               "delete_reason": None, "private_to": None}


def sessions(rng: random.Random) -> Iterator[dict[str, Any]]:
    for i in range(1, SESSIONS + 1):
        yield {"seq": i, "id": f"ses_{i:020d}", "user_id": "local", "token_id": None, "brain_project": "p0",
               "client_type": "claude-code", "prompt": text(rng, 5), "framework": None,
               "started_at": "2026-01-01T00:00:00.000000Z", "ended_at": None, "success": None,
               "user_feedback": None, "sqs": None, "summary": None, "event_count": 0}


def pieces(rng: random.Random) -> Iterator[dict[str, Any]]:
    for i in range(1, SESSIONS + 1):
        for _ in range(5):
            yield {"session_seq": i, "user_id": "local", "body": text(rng, 8)}


def fill(path: Path) -> None:
    store = open_store(str(path))
    rng = random.Random(28)
    try:
        with store.tables.loading() as loader:
            target = loader.target()
            for name, rows in (("memories", memories(rng)), ("brain_sessions", sessions(rng)),
                               ("brain_session_words", pieces(rng))):
                loader.insert(target[name], target[name].names, rows)
    finally:
        store.close()


def vectors(conn: psycopg.Connection[Any], texts: list[str]) -> list[str]:
    """The tsvector text values as PostgreSQL stores them."""
    return [row[0] for row in conn.execute("SELECT unnest(%s::text[]::tsvector[])::text", (texts,)).fetchall()]


def indexes(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname").fetchall()]


def test_a_migration_in_batches_gives_each_row_its_own_word_vectors(tmp_path: Path, pg_url: str,
                                                                    pg_cluster: PgCluster) -> None:
    """...and the word indexes, dropped for the load, are all there again, as a new store has them."""
    source = tmp_path / "source.db"
    fill(source)
    moved = run_cli("migrate", "--from", f"sqlite:{source}", "--to", pg_url, "--json")
    assert moved.exit_code == 0, moved.output
    loaded = {t["table"]: t["loaded"] for t in json.loads(moved.stdout)["tables"]}
    fresh = pg_cluster.url(pg_cluster.create_database())
    open_store(fresh).close()
    assert indexes(pg_url) == indexes(fresh) and any(" USING gin " in d for d in indexes(pg_url))
    assert (loaded["memories"], loaded["brain_session_words"]) == (MEMORIES, 5 * SESSIONS)
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT words::text, stems::text, title, content, tags, path FROM memories"
                            " ORDER BY id").fetchall()
        assert [(r[0], r[1]) for r in rows] == list(zip(
            vectors(conn, [lexemes.tsvector("words", *r[2:]) for r in rows]),
            vectors(conn, [lexemes.tsvector("stems", *r[2:]) for r in rows]), strict=True))
        held = conn.execute("SELECT words::text, body FROM brain_session_words ORDER BY id").fetchall()
        assert [r[0] for r in held] == vectors(conn, [lexemes.tsvector("stems", r[1], "", "", "") for r in held])
    for db in (str(source), pg_url):
        rt = open_runtime(str(tmp_path), db)
        try:
            for project in ("p0", "p1", "p2"):
                rt.administration.add_project(LOCAL_OWNER, project)
            found = {h.memory.ref for h in rt.memory.recall(LOCAL_OWNER, f"{RARE}s", limit=50).results}
            assert found == {f"mem_{i:020d}" for i in range(RARE_EVERY, MEMORIES + 1, RARE_EVERY)}, db
        finally:
            rt.close()


def test_the_workers_end_when_the_loader_is_killed(tmp_path: Path) -> None:
    """A migrate killed with kill -9 left its worker processes running for good (one blocked writing a result
    nobody would read). Here a loader whose workers sleep is killed outright; its workers must end."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "loader.py"
    script.write_text(
        "import sys, time\n"
        "from notewell.store.postgres import lexeme_pool\n"
        "if __name__ == '__main__':\n"
        "    lexeme_pool.workers = lambda: 2  # a pool even on one core\n"
        "    for _ in lexeme_pool.computed_ahead([time.sleep], iter([600] * 8)):\n"
        "        pass\n")
    loader = subprocess.Popen([sys.executable, str(script)])

    def children() -> set[int]:
        found = set()
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[1] == str(loader.pid) and fields[0] != "Z":
                found.add(int(entry))
        return found

    def alive(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    deadline = time.monotonic() + 60
    while len(workers := children()) < 3:  # two workers and multiprocessing's resource tracker
        assert time.monotonic() < deadline and loader.poll() is None, "the loader did not start its workers"
        time.sleep(0.1)
    loader.send_signal(signal.SIGKILL)
    loader.wait(timeout=30)
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in workers):
        assert time.monotonic() < deadline, f"workers still running after their loader was killed: {workers}"
        time.sleep(0.2)
