"""A folder or note typed in the other Unicode form, or in a mix of its names' forms, is found by search_notes'
``path`` and listDocs' folder (REST: /search?path= and /projects/{p}/documents?path=; the CLI's search --path)
as readDoc finds it, on
both backends: they looked the path up exactly, so a folder a Mac named decomposed, typed composed, was Not
found to search_notes and listed nothing. The index-side lookup (paths.indexed_prefix) comes after the
permission check: a project the caller may not read stays Not found in every form."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import make_vault, run_cli
from mcp_world import ServerThread, World, connect, serve_world
from notes_world import call, notes_world_on, refusal
from pg import BACKENDS
from rest_world import RestWorld, rest  # noqa: F401

FOLDER = "R\u00e9unions"  # composed on disk, holding a file named decomposed
ON_DISK = f"{FOLDER}/cafe\u0301.md"


def _forms(path: str) -> list[str]:
    """``path`` typed decomposed whole, composed whole, and with its folder decomposed and its file composed (a
    mix no whole-path form names)."""
    folder, name = path.rsplit("/", 1)
    return [unicodedata.normalize("NFD", path), unicodedata.normalize("NFC", path),
            f"{unicodedata.normalize('NFD', folder)}/{unicodedata.normalize('NFC', name)}"]


def _put(vault: Any, on_disk: str) -> None:
    (vault / on_disk).parent.mkdir(parents=True, exist_ok=True)
    (vault / on_disk).write_text("# Café\n\nagenda for the wombats\n")


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from notes_world_on(request, tmp_path_factory.mktemp("note-listing-forms"))


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[ServerThread]:
    with serve_world(world) as running:
        yield running


@pytest.mark.anyio
async def test_search_notes_and_listdocs_find_a_path_typed_in_either_form_over_mcp(
        server: ServerThread, world: World) -> None:
    on_disk = f"handbook/forms/{ON_DISK}"
    _put(world.vault, on_disk)
    world.runtime.indexing.sync_paths([on_disk])
    async with connect(server.url, world.tokens["admin_write"]) as admin:
        for typed in _forms(on_disk):
            assert (await call(admin, "readDoc", {"path": typed}))["path"] == on_disk
            for path in (typed, typed.rsplit("/", 1)[0]):  # the file, and its folder
                found = await call(admin, "search_notes", {"query": "wombats", "path": path})
                assert [m["path"] for m in found["matches"]] == [on_disk], (path, found)
            listed = await call(admin, "listDocs", {"project": "handbook", "path": typed.rsplit("/", 1)[0][9:]})
            assert [d["path"] for d in listed["documents"]] == [on_disk[9:]], (typed, listed)
    async with connect(server.url, world.tokens["bob_write"]) as bob:  # handbook is hidden from bob
        missing = await refusal(bob, "search_notes", {"query": "wombats", "path": "handbook/missing.md"})
        for typed in _forms(on_disk):
            assert await refusal(bob, "search_notes", {"query": "wombats", "path": typed}) == missing
            listed = await refusal(bob, "listDocs", {"project": "handbook", "path": typed.rsplit("/", 1)[0][9:]})
            assert listed == await refusal(bob, "listDocs", {"project": "handbook"}), listed


@pytest.mark.anyio
async def test_search_knowledge_and_a_root_note_find_a_path_typed_in_either_form_keeping_twins_apart(
        server: ServerThread, world: World) -> None:
    """search_knowledge's path_filter (a folder, a file, or the first characters of a name) and search_notes' root
    note by its name on disk, typed in the form the file is not named in: they compared the characters as typed,
    so a folder a Mac named decomposed, typed composed, matched nothing and the root note was Not found. Two
    folders named alike in both forms (two on Linux) stay two: each form typed finds its own folder alone."""
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    base = "handbook/filter-forms"
    files = {f"{base}/{nfd}/menu.md": "kestrel on the menu", f"{base}/bistro/{nfd}-list.md": "kestrel list",
             f"{base}/twins/{nfc}/a.md": "kestrel composed", f"{base}/twins/{nfd}/b.md": "kestrel decomposed",
             f"{nfd} kestrels.md": "kestrel at the root"}
    for on_disk, text in files.items():
        (world.vault / on_disk).parent.mkdir(parents=True, exist_ok=True)
        (world.vault / on_disk).write_text(f"# K\n\n{text}\n")
    world.runtime.indexing.sync()
    async with connect(server.url, world.tokens["admin"]) as admin:
        async def located(path_filter: str) -> list[str]:
            found = await call(admin, "search_knowledge", {"query": "kestrel", "path_filter": path_filter,
                                                           "limit": 50})
            return [r["location"] for r in found["results"]]

        for form in (nfc, nfd):
            for typed in (f"{base}/{form}/", f"{base}/{form}", f"{base}/{form}/menu.md", f"{base}/{form}/me"):
                assert await located(typed) == [f"{base}/{nfd}/menu.md"], typed
            assert await located(f"{base}/bistro/{form}") == [f"{base}/bistro/{nfd}-list.md"]
            twin = f"{base}/twins/{form}/{'a' if form == nfc else 'b'}.md"
            for typed in (f"{base}/twins/{form}/", f"{base}/twins/{form}"):
                assert await located(typed) == [twin], typed
            assert await located(f"_root/{form} kes") == [f"_root/{nfd} kestrels.md"]
            found = await call(admin, "search_notes", {"query": "kestrel", "path": f"{form} kestrels.md"})
            assert [m["path"] for m in found["matches"]] == [f"_root/{nfd} kestrels.md"], form
        # characters both spellings begin with find both, in code point order ("e" before "\u00e9")
        assert await located(f"{base}/twins/caf") == [f"{base}/twins/{nfd}/b.md", f"{base}/twins/{nfc}/a.md"]


def test_search_and_listing_find_a_path_typed_in_either_form_over_rest(rest: RestWorld) -> None:  # noqa: F811
    on_disk = f"handbook/rest-forms/{ON_DISK}"
    _put(rest.runtime.settings.vault, on_disk)
    rest.runtime.indexing.sync_paths([on_disk])
    for typed in _forms(on_disk):
        folder = typed.rsplit("/", 1)[0]
        for path in (typed, folder):
            found = rest.get("/search", "admin_all", params={"q": "wombats", "path": path})
            assert found.status_code == 200 and [m["path"] for m in found.json()["matches"]] == [on_disk], \
                (path, found.text)
        listed = rest.get("/projects/handbook/documents", "admin_all", params={"path": folder[9:]})
        assert listed.status_code == 200 and [d["path"] for d in listed.json()["items"]] == [on_disk[9:]], \
            (folder, listed.text)


def test_the_cli_search_finds_a_path_typed_in_either_form(tmp_path: Path, store_url: str) -> None:
    on_disk = f"apollo/{ON_DISK}"
    vault = make_vault(tmp_path, {on_disk: "# Café\n\nagenda for the wombats\n"})
    where = ["--vault", str(vault), "--db", store_url]
    assert run_cli("index", *where).exit_code == 0
    for typed in _forms(on_disk):
        for path in (typed, typed.rsplit("/", 1)[0]):
            found = run_cli("search", "wombats", "--path", path, *where, "--json")
            assert found.exit_code == 0, found.stderr
            assert [m["path"] for m in json.loads(found.stdout)["matches"]] == [on_disk], (path, found.stdout)
