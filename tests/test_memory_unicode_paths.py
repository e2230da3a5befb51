"""A memory's path is one place whichever Unicode form it is typed in, on both backends: "café" composed (NFC)
and as "e" and a combining accent (NFD, as a Mac names files) were two places, so a memory filed under one was
missed by a listing, a path_filter or a write of the same text under the other. Paths are kept composed, every
path a caller gives is read so (MCP and REST), and a store an earlier version wrote is rewritten so once
(SqlMemories.compose_paths), keeping both memories when two collide (docs/memory.md)."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from mcp_world import ServerThread, World, call, connect, serve_world
from notes_world import notes_world_on
from notewell.access.principal import LOCAL_OWNER
from notewell.records.memories import MemoryFilter, MemoryInput, MemoryQuery, Narrowing
from notewell.store import open_store
from notewell.store.postgres.dialect import PostgresDialect
from notewell.store.shared.dialect import Dialect
from notewell.store.sqlite import SqliteStore
from notewell.store.sqlite.dialect import SqliteDialect
from pg import BACKENDS
from rest_world import RestWorld, rest  # noqa: F401

NFC = "caf\u00e9/r\u00e9unions"
NFD = unicodedata.normalize("NFD", NFC)
assert NFC != NFD and unicodedata.normalize("NFC", NFD) == NFC
SCOPES = ["memory:read", "memory:write", "knowledge:read"]


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    for built in notes_world_on(request, tmp_path_factory.mktemp("memory-forms")):
        built.tokens["alice_mem"] = built.runtime.administration.mint_token(
            LOCAL_OWNER, "alice@northwind.test", SCOPES).secret
        yield built


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[ServerThread]:
    with serve_world(world) as running:
        yield running


def refs(found: dict[str, Any]) -> list[str]:
    return [r["ref"] for r in found["results"]]



@pytest.mark.anyio
async def test_a_memory_path_is_one_place_in_either_form_over_mcp(server: ServerThread, world: World) -> None:
    async with connect(server.url, world.tokens["alice_mem"]) as alice:
        first = await call(alice, "remember", {"content": "Quokka minutes go to the shared drive.", "path": NFD})
        assert first["path"] == NFC and not first["deduplicated"], first
        again = await call(alice, "remember", {"content": "Quokka minutes go to the shared drive.", "path": NFC})
        assert again["ref"] == first["ref"] and again["deduplicated"], again
        for typed in (NFC, NFD):
            for tool in ("search_memory", "recall"):
                found = await call(alice, tool, {"query": "quokka minutes", "path_filter": f"~alice/{typed}"})
                assert refs(found) == [first["ref"]], (tool, typed, found)
                assert found["results"][0]["path"] == NFC
            packed = await call(alice, "recall_context", {"query": "quokka minutes", "path_filter": f"~alice/{typed}"})
            assert [i["ref"] for i in packed["items"]] == [first["ref"]], packed
        newer = await call(alice, "remember", {"content": "Quokka minutes go to the wiki.", "path": NFD,
                                               "supersedes": first["ref"]})
        assert newer["superseded"] == first["ref"] and newer["path"] == NFC, newer
        assert refs(await call(alice, "search_memory", {"query": "quokka minutes",
                                                        "path_filter": f"~alice/{NFD}"})) == [newer["ref"]]
        assert (await call(alice, "forget", {"ref": newer["ref"]}))["forgotten"]
        for typed in (NFC, NFD):
            assert refs(await call(alice, "recall", {"query": "quokka", "path_filter": f"~alice/{typed}"})) == []


@pytest.mark.anyio
async def test_about_finds_a_document_by_either_form_of_each_name(server: ServerThread, world: World) -> None:
    """remember's about took a document's path exactly as stored: a note a Mac named decomposed, in a folder
    named composed, was Not found by the path typed in either whole form."""
    on_disk = "projects/forms/R\u00e9unions/cafe\u0301.md"  # the folder composed, the file decomposed
    (world.vault / on_disk).parent.mkdir(parents=True, exist_ok=True)
    (world.vault / on_disk).write_text("# Café\n\nthe agenda\n")
    world.runtime.indexing.sync_paths([on_disk])
    async with connect(server.url, world.tokens["alice_mem"]) as alice:
        said = [await call(alice, "remember", {"content": f"The café agenda needs a chair ({form}).",
                                               "about": unicodedata.normalize(form, on_disk)})
                for form in ("NFC", "NFD")]
        read = await call(alice, "readDoc", {"path": on_disk})
        assert [(m["ref"], m["how"]) for m in read["memories"]] == [(s["ref"], "about") for s in reversed(said)], read


def test_a_memory_path_is_one_place_in_either_form_over_rest(rest: RestWorld) -> None:  # noqa: F811
    made = rest.call("POST", "/memories", "alice_rw", json={"content": "Wallaby notes live in the binder.",
                                                            "path": NFD})
    assert made.status_code == 201 and made.json()["memory"]["path"] == NFC, made.text
    ref = made.json()["memory"]["ref"]
    again = rest.call("POST", "/memories", "alice_rw", json={"content": "Wallaby notes live in the binder.",
                                                             "path": NFC})
    assert again.status_code == 200 and again.json()["memory"]["ref"] == ref, again.text
    for typed in (NFC, NFD, unicodedata.normalize("NFD", "caf\u00e9")):
        listed = rest.get("/memories", "alice_rw", params={"project": "~alice", "path": typed})
        assert listed.status_code == 200 and [m["ref"] for m in listed.json()["items"]] == [ref], (typed, listed.text)
        for route in ("/memories/search", "/memories/recall"):
            found = rest.get(route, "alice_rw", params={"q": "wallaby binder", "pathFilter": f"~alice/{typed}"})
            assert found.status_code == 200 and [r["memory"]["ref"] for r in found.json()["results"]] == [ref], \
                (route, typed, found.text)
    assert rest.get(f"/memories/{ref}", "alice_rw").json()["path"] == NFC


def _dialect(store: Any) -> Dialect:
    return SqliteDialect(store.db) if isinstance(store, SqliteStore) else PostgresDialect(store.db)


def _memory(ref: str, path: str, content: str, created: str) -> MemoryInput:
    return MemoryInput(ref=ref, project="p", author_user_id="u_ada", author_token_id=None, memory_type="durable",
                       path=path, title=content, content=content, tags=(),
                       content_hash=hashlib.sha256(content.encode()).hexdigest(), created=created)


def test_paths_an_earlier_version_kept_decomposed_are_composed_once_keeping_both_twins(store_url: str) -> None:
    """The store as an earlier version left it: memories filed decomposed (the service wrote paths as typed),
    one of them the same text as a memory filed composed. Opening it composes every path; the twin written later
    is superseded by the earlier (still readable by its ref), and nothing is lost from the word indexes."""
    store = open_store(store_url)
    add = store.memories.add
    add(_memory("mem_early_nfd", NFD, "Kiwi budget is frozen.", "2026-01-01T00:00:00.000000Z"))
    add(_memory("mem_late_nfc", NFC, "Kiwi budget is frozen.", "2026-01-02T00:00:00.000000Z"))
    add(_memory("mem_alone_nfd", NFD, "Kiwi travel needs a form.", "2026-01-03T00:00:00.000000Z"))
    add(_memory("mem_gone_nfd", NFD, "Kiwi lunch on Fridays.", "2026-01-04T00:00:00.000000Z"))
    add(_memory("mem_first_nfc", NFC, "Kiwi rota is weekly.", "2026-01-06T00:00:00.000000Z"))
    add(_memory("mem_then_nfd", NFD, "Kiwi rota is weekly.", "2026-01-07T00:00:00.000000Z"))
    store.memories.forget("mem_gone_nfd", "u_ada", "cancelled", "2026-01-05T00:00:00.000000Z")
    with _dialect(store).transaction() as conn:
        conn.execute("DELETE FROM schema_migrations WHERE component = 'memory_paths'")
    store.close()
    store = open_store(store_url)  # runs the step
    try:
        rows = {r.ref: r for r in store.memories.listing(
            MemoryFilter(projects=["p"], narrowing=Narrowing(), superseded=True, forgotten_projects=["p"],
                         forgotten_author="u_ada"), 10, 0)}
        assert {ref: r.path for ref, r in rows.items()} == {
            "mem_early_nfd": NFC, "mem_late_nfc": NFC, "mem_alone_nfd": NFC, "mem_gone_nfd": NFC,
            "mem_first_nfc": NFC, "mem_then_nfd": NFC}
        assert rows["mem_late_nfc"].superseded_by == "mem_early_nfd" and rows["mem_early_nfd"].superseded_by is None
        assert rows["mem_then_nfd"].superseded_by == "mem_first_nfc" and rows["mem_first_nfc"].superseded_by is None
        assert rows["mem_gone_nfd"].deleted_at is not None
        query = MemoryQuery(projects=["p"], terms=["kiwi"], now="2026-02-01T00:00:00.000000Z", limit=10,
                            path_prefix=NFC, narrowing=Narrowing(), viewer="u_ada")
        for search in (store.memories.strict, store.memories.tolerant):
            assert sorted(h.record.ref for h in search(query)) == ["mem_alone_nfd", "mem_early_nfd", "mem_first_nfc"]
        if isinstance(store, SqliteStore):
            for index in ("memory_words", "memory_stems"):
                store.db.conn.execute(f"INSERT INTO {index} ({index}) VALUES ('integrity-check')")
    finally:
        store.close()


def test_the_migration_never_puts_an_expired_twin_in_a_live_ones_place(store_url: str) -> None:
    """An earlier version filed a working memory under the decomposed path, long expired; the same text was then
    remembered as durable under the composed path (a second place then). Composing kept the earlier, expired one
    and superseded the durable one, so the text left search for good; the expired one is superseded instead,
    as a write there (_retire_expired_twin) retires it. So too when the expired one is the later."""
    store = open_store(store_url)
    add = store.memories.add
    expired = {"memory_type": "working", "expires_at": "2026-01-02T00:00:00.000000Z"}
    add(replace(_memory("mem_expired_nfd", NFD, "Quokka budget is frozen.", "2026-01-01T00:00:00.000000Z"),
                **expired))
    add(_memory("mem_durable_nfc", NFC, "Quokka budget is frozen.", "2026-02-01T00:00:00.000000Z"))
    add(_memory("mem_durable_nfd", NFD, "Quokka rota is weekly.", "2026-01-01T00:00:00.000000Z"))
    add(replace(_memory("mem_expired_nfc", NFC, "Quokka rota is weekly.", "2026-01-01T12:00:00.000000Z"),
                **expired))
    with _dialect(store).transaction() as conn:
        conn.execute("DELETE FROM schema_migrations WHERE component = 'memory_paths'")
    store.close()
    store = open_store(store_url)  # runs the step
    try:
        get = store.memories.get
        assert get("mem_durable_nfc").superseded_by is None and get("mem_durable_nfd").superseded_by is None
        assert get("mem_expired_nfd").superseded_by == "mem_durable_nfc"
        assert get("mem_expired_nfc").superseded_by == "mem_durable_nfd"
        query = MemoryQuery(projects=["p"], terms=["quokka"], now="2026-06-01T00:00:00.000000Z", limit=10,
                            path_prefix=NFC, narrowing=Narrowing(), viewer="u_ada")
        for search in (store.memories.strict, store.memories.tolerant):
            assert sorted(h.record.ref for h in search(query)) == ["mem_durable_nfc", "mem_durable_nfd"]
    finally:
        store.close()


@pytest.mark.anyio
async def test_build_context_joins_a_decomposed_note_and_the_memories_kept_at_its_path(
        server: ServerThread, world: World) -> None:
    """A memory's path is kept composed; a note a Mac named decomposed keeps its name. buildContext compared the
    two spellings as they were: the memory kept at the note's path was missing from the note's context, and the
    note from the memory's."""
    on_disk = "notes/cafe\u0301-plan.md"
    (world.vault / "projects/notes").mkdir(parents=True, exist_ok=True)
    (world.vault / "projects" / on_disk).write_text("# Cafe\n\nthe plan\n")
    world.runtime.indexing.sync_paths([f"projects/{on_disk}"])
    async with connect(server.url, world.tokens["alice_mem"]) as alice:
        kept = await call(alice, "remember", {"content": "The cafe plan needs a chair.", "project": "projects",
                                              "path": on_disk})
        assert kept["path"] == unicodedata.normalize("NFC", on_disk)
        from_note = await call(alice, "buildContext", {"path": f"projects/{on_disk}"})
        from_memory = await call(alice, "buildContext", {"ref": kept["ref"]})
    assert (kept["ref"], f"kept at projects/{on_disk}'s path") in [(i["ref"], i["why"]) for i in from_note["items"]]
    assert (f"projects/{on_disk}", "the memory's path") in [(i["ref"], i["why"]) for i in from_memory["items"]]



@pytest.mark.anyio
async def test_a_path_longer_once_composed_than_a_path_may_be_is_refused_over_mcp(
        server: ServerThread, world: World) -> None:
    """Composing may lengthen a path threefold (U+1D160 is three code points composed: a composition exclusion):
    its length was checked before, so a memory was kept at a path longer than any a caller may give."""
    typed = "\U0001D160" * 2000  # 2,000 characters typed, 6,000 composed: past the 4,096 a path may hold
    async with connect(server.url, world.tokens["alice_mem"]) as alice:
        with pytest.raises(MCPError) as refused:
            await alice.call_tool("remember", {"content": "Eighth notes.", "path": typed})
        assert "path: is 6000 characters; keep it to 4096" in refused.value.error.message, refused.value.error.message
        kept = await call(alice, "remember", {"content": "Eighth notes.", "path": typed[:1000]})
        assert len(kept["path"]) == 3000
