"""A note whose folder and file are named in different Unicode forms (a folder composed, NFC, holding a file a Mac
named decomposed, NFD, or the other way round) is found by its path typed in either whole form, for reads and
writes, through MCP and REST on both backends: the whole-path forms named neither, so readDoc, getLinks, the
writes and the journal answered Not found. Each name is now matched in either form as it is on disk
(paths.spelled_as), and the name found is checked as a typed one is (an ignore file still passes over it)."""

from __future__ import annotations

import os
import subprocess
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from mcp_world import ServerThread, World, connect, serve_world
from notes_world import call, notes_world_on, refusal
from notewell.access.principal import LOCAL_OWNER
from notewell.paths import spelled_as
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


def _chain(top: Path, levels: int, forms: tuple[str, ...]) -> None:
    """Folders ``levels`` deep below ``top``, a folder by each of ``forms`` at every level (made by descriptor:
    a path this deep is past what pathlib's recursive helpers walk)."""
    def below(fd: int, left: int) -> None:
        for form in forms if left else ():
            os.mkdir(form, dir_fd=fd)
            child = os.open(form, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            try:
                below(child, left - 1)
            finally:
                os.close(child)
    top.mkdir(parents=True)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if len(forms) == 1:  # one folder a level: a loop, however deep
            for _ in range(levels):
                os.mkdir(forms[0], dir_fd=fd)
                child = os.open(forms[0], os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = child
        else:
            below(fd, levels)
    finally:
        os.close(fd)


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The os.open calls made while the test runs (the server answers in this process)."""
    made: list[str] = []
    real = os.open

    def counted(path: Any, *args: Any, **kwargs: Any) -> int:
        made.append(str(path))
        return real(path, *args, **kwargs)
    monkeypatch.setattr(os, "open", counted)
    return made


@pytest.mark.anyio
async def test_a_missing_note_deep_in_the_vault_is_not_found_in_one_walk_down_over_mcp(
        server: ServerThread, world: World, opens: list[str]) -> None:
    """990 folders deep (1,980 characters, a path may hold 4,096): the name-by-name lookup recursed once a folder
    (RecursionError: note_journal's path, by a reader, and delete_note of a missing note failed) and reopened the
    chain from the vault's root at every level; and an all-ASCII path, whose one form the whole-path lookup has
    tried, needs no name-by-name lookup at all."""
    levels = 990
    top = world.vault / "projects/deep"
    _chain(top, levels, ("a",))
    missing = "projects/deep/" + "a/" * levels + "missing.md"
    try:
        async with connect(server.url, world.tokens["alice_read"]) as alice:
            del opens[:]
            assert (await call(alice, "note_journal", {"path": missing}))["entries"] == []
            assert len(opens) <= levels + 3, len(opens)  # the vault, projects, deep, then one a level, once
        async with connect(server.url, world.tokens["alice_write"]) as alice:
            refused = await refusal(alice, "delete_note", {"path": missing})
            assert "Not found: there is no note at this path" in refused, refused
    finally:
        subprocess.run(["rm", "-rf", str(top)], check=True)  # pytest's own cleanup recurses a folder a frame


@pytest.mark.anyio
async def test_folders_in_both_forms_are_walked_down_once_not_every_way_over_mcp(
        server: ServerThread, world: World, opens: list[str]) -> None:
    """Ten levels of a folder in each form (two folders a level on Linux; one folder that answers to both on
    macOS): the lookup searched below every form found, 2^10 ways down for a note that is not there, each
    reopening the chain from the root. Now each folder in the first form found, one lookup below the last."""
    levels = 10
    top = world.vault / "handbook/forms"
    _chain(top, levels, ("\u00e9", "e\u0301"))
    missing = "handbook/forms/" + "\u00e9/" * levels + "missing.md"
    try:
        async with connect(server.url, world.tokens["admin_write"]) as admin:
            del opens[:]
            refused = await refusal(admin, "delete_note", {"path": missing})
            assert "Not found: there is no note at this path" in refused, refused
            assert len(opens) <= 20 * levels, len(opens)
    finally:
        subprocess.run(["rm", "-rf", str(top)], check=True)


def test_a_file_system_that_finds_a_folder_by_either_form_costs_a_few_lookups_a_folder() -> None:
    """macOS (APFS) finds a folder by either form of its name, which no Linux test can make: modelled by lookups
    that compare composed names. Eighteen accented folders to a note that is not there cost 786,432 lookups
    (every form of every folder searched below); now at most three a name."""
    folders = 18
    asked: list[str] = []
    there = {unicodedata.normalize("NFC", "/".join(["\u00e9"] * k)) for k in range(1, folders + 1)}

    def has(rel: str) -> bool:
        asked.append(rel)
        return False

    def has_folder(rel: str) -> bool:
        asked.append(rel)
        return unicodedata.normalize("NFC", rel) in there

    assert spelled_as("/".join(["\u00e9"] * folders) + "/new.md", has, has_folder) is None
    assert len(asked) <= 3 * folders + 6, len(asked)
