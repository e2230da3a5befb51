"""remember writes its memory and the memory's audit entry in one transaction (store.together): a write whose
entry cannot be kept is not kept either, where before the memory stayed, unaudited, behind the error.

The audit log is made to refuse every row (a trigger, put in through the database itself, as a full disk or a
broken table would refuse it); a remember over MCP then fails, and once the log takes rows again no memory of that
text is found, while the next remember is written and audited.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from mcp_world import World, build_world, call, connect, serve_world
from notewell.access.principal import LOCAL_OWNER

TEXT = "The Kestrel renewal is priced at the 2026 day rate."
REFUSE = {
    "sqlite": ["CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'refused'); END"],
    "postgres": ["CREATE FUNCTION audit_refused() RETURNS trigger LANGUAGE plpgsql"
                 " AS $$BEGIN RAISE EXCEPTION 'refused'; END$$",
                 "CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log FOR EACH ROW"
                 " EXECUTE FUNCTION audit_refused()"],
}
ALLOW = {"sqlite": ["DROP TRIGGER audit_refused"],
         "postgres": ["DROP TRIGGER audit_refused ON audit_log", "DROP FUNCTION audit_refused()"]}


def _run(db: str, statements: list[str]) -> None:
    """``statements`` straight on the store's database, as another program would."""
    if db.startswith("postgresql://"):
        with psycopg.connect(db, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)  # type: ignore[arg-type]  # (fixed test text)
        return
    with sqlite3.connect(db) as conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


@pytest.fixture
def world(tmp_path: Path, store_url: str) -> Iterator[tuple[World, str, str]]:
    """(the MCP test world on ``store_url``, its --db, a memory:read and memory:write token of staff's)."""
    built = build_world(tmp_path, store_url)
    try:
        token = built.runtime.administration.mint_token(
            LOCAL_OWNER, "staff@northwind.test", ["memory:read", "memory:write"]).secret
        yield built, store_url, token
    finally:
        built.runtime.close()


@pytest.mark.anyio
async def test_a_memory_whose_audit_entry_is_refused_is_not_kept(world: tuple[World, str, str]) -> None:
    built, db, token = world
    backend = "postgres" if db.startswith("postgresql://") else "sqlite"
    with serve_world(built) as server:
        async with connect(server.url, token) as client:
            _run(db, REFUSE[backend])
            refused = await client.call_tool("remember", {"content": TEXT, "path": "northwind-advisory/pricing"})
            assert refused.is_error, refused
            _run(db, ALLOW[backend])
            found = await call(client, "search_memory", {"query": "kestrel renewal"})
            assert found["results"] == []
            written = await call(client, "remember", {"content": TEXT, "path": "northwind-advisory/pricing"})
    entries = [e for e in built.runtime.store.audit.list_since() if e.action == "memory.remember"]
    assert [e.target for e in entries] == [written["ref"]]
