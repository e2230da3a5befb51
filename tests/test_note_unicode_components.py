"""A note whose folder and file are named in different Unicode forms (a folder composed, NFC, holding a file a Mac
named decomposed, NFD, or the other way round) is found by its path typed in either whole form, for reads and
writes, through MCP and REST on both backends: the whole-path forms named neither, so readDoc, getLinks, the
writes and the journal answered Not found. Each name is now matched in either form as it is on disk
(paths.spelled_as), and the name found is checked as a typed one is (an ignore file still passes over it)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from mcp_world import ServerThread, World, connect, serve_world
from notes_world import call, notes_world_on
from notewell.access.principal import LOCAL_OWNER
from pg import BACKENDS
from rest_world import RestWorld, rest  # noqa: F401

NFC_FOLDER, NFD_FOLDER = "R\u00e9unions", "Re\u0301unions"
NFC_FILE, NFD_FILE = "caf\u00e9.md", "cafe\u0301.md"


def _mixed(parent: str) -> list[str]:
    """The two mixed spellings below ``parent``: the folder composed and the file decomposed, and the reverse."""
    return [f"{parent}/{NFC_FOLDER}/{NFD_FILE}", f"{parent}-2/{NFD_FOLDER}/{NFC_FILE}"]


def _typed(on_disk: str) -> list[str]:
    return [unicodedata.normalize("NFC", on_disk), unicodedata.normalize("NFD", on_disk)]


def _put(vault: Any, on_disk: str, text: str) -> None:
    (vault / on_disk).parent.mkdir(parents=True, exist_ok=True)
    (vault / on_disk).write_text(text)


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from notes_world_on(request, tmp_path_factory.mktemp("note-forms"))


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[ServerThread]:
    with serve_world(world) as running:
        yield running


@pytest.mark.anyio
async def test_a_note_named_in_mixed_forms_is_read_and_written_by_either_form_over_mcp(
        server: ServerThread, world: World) -> None:
    notes = _mixed("handbook/mixed")
    for on_disk in notes:
        _put(world.vault, on_disk, "# Café\n\nagenda\n")
    world.runtime.indexing.sync_paths(notes)
    async with connect(server.url, world.tokens["admin_write"]) as admin:
        for on_disk in notes:
            for typed in _typed(on_disk):
                read = await call(admin, "readDoc", {"path": typed})
                assert read["path"] == on_disk and "agenda" in read["text"], (typed, read)
                assert (await call(admin, "getLinks", {"path": typed}))["path"] == on_disk
            nfc, nfd = _typed(on_disk)
            edited = await call(admin, "edit_note", {"path": nfc, "operation": "append", "content": "minutes"})
            assert edited["path"] == on_disk, edited
            replaced = await call(admin, "write_note", {"path": nfd, "content": "# Café\n\nagain\n",
                                                        "overwrite": True, "expected_version": edited["version"]})
            assert replaced["path"] == on_disk, replaced
            journal = await call(admin, "note_journal", {"path": nfd})
            assert [e["action"] for e in journal["entries"]] == ["write", "edit"], journal
            assert (await call(admin, "readDoc", {"path": nfc}))["version"] == replaced["version"]
            moved = await call(admin, "move_note", {"path": nfd, "new_path": f"{on_disk.rsplit('/', 1)[0]}/plan.md"})
            assert moved["moved_from"] == on_disk, moved
            folder = world.vault / on_disk.rsplit("/", 1)[0]
            assert [p.name for p in folder.iterdir()] == ["plan.md"]  # no second file, no second folder
            assert [p.name for p in folder.parent.iterdir()] == [folder.name]
            assert (folder / "plan.md").read_text() == "# Café\n\nagain\n"


@pytest.mark.anyio
async def test_an_ignore_file_passes_over_a_note_found_by_its_names_in_mixed_forms(
        server: ServerThread, world: World) -> None:
    """The ignore file names the file as it is on disk (decomposed) in a folder named composed: typed in either
    whole form, the note is found name by name, and the found name is what the ignore file is checked against."""
    folder = world.vault / f"handbook/ignored-mixed/{NFC_FOLDER}"
    secret = unicodedata.normalize("NFD", "secret-café.md")
    folder.mkdir(parents=True)
    (folder / ".notewellignore").write_text(f"{secret}\n")
    (folder / secret).write_text("# the secret\n")
    async with connect(server.url, world.tokens["admin_write"]) as admin:
        for typed in _typed(f"handbook/ignored-mixed/{NFC_FOLDER}/{secret}"):
            for tool, args in [("edit_note", {"operation": "append", "content": "leak"}), ("delete_note", {}),
                               ("write_note", {"content": "over", "overwrite": True})]:
                with pytest.raises(MCPError) as err:
                    await admin.call_tool(tool, {"path": typed, **args})
                assert "is excluded by an ignore file" in err.value.error.message, (tool, err.value.error.message)
    assert sorted(p.name for p in folder.iterdir()) == [".notewellignore", secret]
    assert (folder / secret).read_text() == "# the secret\n"
    assert [p.name for p in folder.parent.iterdir()] == [NFC_FOLDER]


def test_a_document_named_in_mixed_forms_is_read_and_written_by_either_form_over_rest(
        rest: RestWorld) -> None:  # noqa: F811
    rest.runtime.administration.grant(LOCAL_OWNER, "admin@northwind.test", "handbook", "write")
    vault = rest.runtime.settings.vault
    notes = _mixed("handbook/rest-mixed")
    for on_disk in notes:
        _put(vault, on_disk, "# Café\n\nagenda\n")
    rest.runtime.indexing.sync_paths(notes)
    for on_disk in notes:
        rel = on_disk.removeprefix("handbook/")
        for typed in _typed(rel):
            read = rest.get(f"/projects/handbook/documents/{typed}", "admin_all")
            assert read.status_code == 200 and read.json()["path"] == on_disk, (typed, read.text)
        nfc, nfd = _typed(rel)
        edited = rest.call("PATCH", f"/projects/handbook/documents/{nfc}", "admin_all",
                           json={"operation": "append", "content": "minutes"})
        assert edited.status_code == 200 and edited.json()["path"] == on_disk, edited.text
        journal = rest.get("/journal", "admin_all", params={"path": f"handbook/{nfd}"}).json()["entries"]
        assert [e["action"] for e in journal] == ["edit"], journal
        deleted = rest.call("DELETE", f"/projects/handbook/documents/{nfd}", "admin_all",
                            headers={"If-Match": edited.json()["version"]})
        assert deleted.status_code == 200 and deleted.json()["path"] == on_disk, deleted.text
        assert not (vault / on_disk).exists() and rest.get(f"/projects/handbook/documents/{nfc}",
                                                           "admin_all").status_code == 404
