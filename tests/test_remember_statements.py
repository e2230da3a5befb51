"""remember answers what it wrote without reading the memory back (issue 24, issue 27): after its INSERT it read
the whole row again by id, a statement whose answer the values written already held. One remember over MCP reads
the memories table once (whether an expired twin holds the place), on both backends; REST's answer is the memory
as the store keeps it (GET answers the same), a second write of the text answers it again, deduplicated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_world import call, connect
from notewell.access.principal import LOCAL_OWNER
from statements_world import world

pytestmark = pytest.mark.anyio


def small(vault: Path) -> None:
    (vault / "alpha").mkdir(parents=True)
    (vault / "alpha" / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")


def _writer(served: Any) -> str:
    """A token of alice's that may write alpha's memories."""
    administration = served.rt.administration
    administration.grant(LOCAL_OWNER, "alice@example.com", "alpha", "write")
    return str(administration.mint_token(LOCAL_OWNER, "alice@example.com", ["memory:read", "memory:write"]).secret)


async def test_one_remember_reads_the_memories_table_once(store_url: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with world(tmp_path, store_url, monkeypatch, small, small, ()) as (url, served):
        token = _writer(served)
        async with connect(url, token) as client:
            await call(client, "remember", {"content": "The first memory warms the session.", "project": "alpha"})
            before = len(served.statements.run)
            said = await call(client, "remember", {"content": "We deploy on Tuesdays and Thursdays only.",
                                                   "project": "alpha", "tags": ["release"]})
            ran = served.statements.run[before:]
    assert said["deduplicated"] is False and said["project"] == "alpha"
    reads = [sql for sql in ran if sql.lstrip().upper().startswith("SELECT") and " FROM memories " in f"{sql} "]
    assert len(reads) == 1, reads  # the expired twin's check; its row was read back after the INSERT


def test_rest_answers_the_memory_as_the_store_keeps_it(store_url: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    body = {"content": "Café menus change\non Mondays.", "project": "alpha", "path": "ops/kitchen",
            "title": "Menus", "tags": ["café", "ops"], "memoryType": "working",
            "expiresAt": "2999-01-01T00:00:00Z", "private": True}
    with world(tmp_path, store_url, monkeypatch, small, small, ()) as (url, served):
        headers = {"Authorization": f"Bearer {_writer(served)}"}
        api = url.removesuffix("/mcp") + "/api/v1"
        with httpx.Client(timeout=30, headers=headers) as http:
            made = http.post(f"{api}/memories", json=body)
            assert made.status_code == 201, made.text
            memory = made.json()["memory"]
            kept = http.get(f"{api}/memories/{memory['ref']}")
            again = http.post(f"{api}/memories", json=body)
    assert kept.status_code == 200 and kept.json() == memory
    assert again.status_code == 200 and again.json()["memory"] == memory and again.json()["created"] is False
    assert memory["tags"] == ["café", "ops"] and memory["private"] is True and memory["updated"] == memory["created"]
