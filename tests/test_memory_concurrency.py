"""20 clients writing 200 memories each in parallel, through the service, each thread with its own
SQLite connection: nothing lost, nothing duplicated (every ref counted and compared)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from memory_world import build_world

CLIENTS = 20
PER_CLIENT = 200
SHARED = 50  # the first SHARED writes of every client carry the same content to the same place


def test_parallel_writers_lose_nothing_and_duplicate_nothing(tmp_path: Path) -> None:
    world = build_world(tmp_path / "memories.db", tmp_path)
    principals = [world.principal("alice") for _ in range(CLIENTS)]  # one token per client

    def client(n: int) -> list[str]:
        refs = []
        for i in range(PER_CLIENT):
            content = f"shared fact {i}" if i < SHARED else f"client {n} fact {i}: parallel writes stay whole"
            refs.append(world.service.remember(principals[n], content, path="load", project="apollo").memory.ref)
        return refs

    with ThreadPoolExecutor(CLIENTS) as pool:
        results = list(pool.map(client, range(CLIENTS)))
    for i in range(SHARED):  # every client got the one ref of each shared content
        assert len({refs[i] for refs in results}) == 1
    returned = {ref for refs in results for ref in refs}
    assert len(returned) == CLIENTS * (PER_CLIENT - SHARED) + SHARED
    stored = [m.ref for m in world.store.memories.all(["apollo"])]
    assert len(stored) == len(set(stored)) == len(returned) and set(stored) == returned
    remembered = [e for e in world.store.audit.list_since() if e.action == "memory.remember"]
    assert len(remembered) == CLIENTS * PER_CLIENT
    assert sum(1 for e in remembered if e.detail["created"]) == len(returned)
    world.store.close()
