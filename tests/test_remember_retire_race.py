"""A remember superseding a taught rule's memory while the rule is retired (REST DELETE /knowledge/REF) answers
both calls, on both backends.

Since b7ee913 a remember holds its memories' row locks until its rule is retired in the same transaction (memory,
then rule), while a retire took the rule's row, then its memory's (rule, then memory): on PostgreSQL the two
waited on each other, the database broke the deadlock by failing one of them, and that call answered an internal
error. The remember is held (by the test) once it holds its memory and until the retire waits on a lock, so the two
meet every time; on SQLite the retire waits for the remember's transaction as a whole.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import psycopg
import pytest

from mcp_world import World, build_world, call, connect, serve_world
from notewell.access.principal import LOCAL_OWNER

WAIT_S = 20.0


@pytest.fixture
def world(tmp_path: Path, store_url: str) -> Iterator[tuple[World, str, str]]:
    """(the MCP test world on ``store_url``, its --db, a token of staff's for memories and the brain)."""
    built = build_world(tmp_path, store_url)
    try:
        token = built.runtime.administration.mint_token(
            LOCAL_OWNER, "staff@northwind.test", ["memory:read", "memory:write", "sessions"]).secret
        yield built, store_url, token
    finally:
        built.runtime.close()


def _someone_waits_on_a_lock(db: str) -> bool:
    with psycopg.connect(db, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                           " AND wait_event_type = 'Lock'").fetchone()
    return row is not None and row[0] > 0


@pytest.mark.anyio
async def test_remember_superseding_a_rule_while_it_is_retired(world: tuple[World, str, str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    built, db, token = world
    brain = built.runtime.store.brain
    remember_holds, retiring = threading.Event(), threading.Event()
    retire_gone, retire = brain.retire_gone, brain.retire

    def held_retire_gone(ref: str, at: str) -> bool:  # the remember, holding its memories' rows
        remember_holds.set()
        assert retiring.wait(WAIT_S)
        if db.startswith("postgresql://"):
            deadline = time.monotonic() + WAIT_S
            while not _someone_waits_on_a_lock(db):  # the retire, waiting on the remember's locks
                assert time.monotonic() < deadline
                time.sleep(0.01)
        return retire_gone(ref, at)

    def started_retire(*args: Any, **kwargs: Any) -> int:
        assert remember_holds.wait(WAIT_S)
        retiring.set()
        return retire(*args, **kwargs)

    with serve_world(built) as server:
        async with connect(server.url, token) as client:
            taught = await call(client, "brain_teach_knowledge", {"rule": "quote the Kestrel renewal at day rate"})
            old = built.runtime.store.memories.get(taught["id"])
            assert old is not None
            monkeypatch.setattr(brain, "retire_gone", held_retire_gone)
            monkeypatch.setattr(brain, "retire", started_retire)
            answers: dict[str, Any] = {}

            async def remember() -> None:
                answers["remember"] = await client.call_tool("remember", {
                    "content": "quote the Kestrel renewal at the 2027 day rate", "supersedes": taught["id"],
                    "project": old.project, "path": old.path})

            async def retire_rule() -> None:
                async with httpx.AsyncClient(timeout=60) as rest:
                    answers["retire"] = await rest.delete(
                        f"{server.url.removesuffix('/mcp')}/api/v1/knowledge/{taught['id']}?reason=obsolete",
                        headers={"Authorization": f"Bearer {token}"})

            async with anyio.create_task_group() as group:
                group.start_soon(remember)
                group.start_soon(retire_rule)
    assert not answers["remember"].is_error, answers["remember"].content
    assert answers["retire"].status_code == 200, answers["retire"].text
    assert answers["remember"].structured_content["superseded"] == taught["id"]
    assert brain.knowledge([taught["id"]])[taught["id"]].retired_at is not None
