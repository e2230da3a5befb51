"""A folder 1,100 deep (a path of 2,200 characters, within Linux's 4,096, which any writer may make): the vault's
walks kept each folder on Python's call stack and passed its recursion limit, so `notewell index` failed ("Notewell
did not expect this") and no document of the vault was indexed; a move walked the project for symlinks the same
way. The walks now keep their folders on a list. Through the CLI (SQLite) and MCP (both backends)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client

from conftest import run_cli
from mcp_world import ServerThread, World, connect, serve_world
from notes_world import call, notes_world_on, refusal
from notewell.services.note_files import ChangedOnDisk
from pg import BACKENDS

DEPTH = 1_100  # past Python's default recursion limit (1,000) with room to spare


def deep_folder(base: Path) -> Path:
    """``base``/a/a/.../a, DEPTH folders; made one at a time (os.makedirs recurses too)."""
    folder = base
    for _ in range(DEPTH):
        folder = folder / "a"
        folder.mkdir()
    return folder


def remove(tree: Path) -> None:
    """rm -rf: shutil.rmtree, and pytest's clean-up of its old folders with it, recurse once per folder."""
    subprocess.run(["rm", "-rf", str(tree)], check=True)


@pytest.fixture
def deep_vault(tmp_path: Path) -> Iterator[Path]:
    vault = tmp_path / "vault"
    (vault / "p").mkdir(parents=True)
    (vault / "p/top.md").write_text("top note\n")
    (deep_folder(vault / "p") / "n.md").write_text("hello from the depths\n")
    yield vault
    remove(vault)


def test_a_vault_with_a_folder_1100_deep_is_indexed_and_searched(deep_vault: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "store.db")
    indexed = run_cli("index", "--vault", str(deep_vault), "--db", db, "--json")
    assert indexed.exit_code == 0, indexed.output
    assert json.loads(indexed.stdout)["added"] == 2, indexed.output
    found = run_cli("search", "hello from the depths", "--vault", str(deep_vault), "--db", db)
    assert found.exit_code == 0, found.output
    assert found.stdout.startswith("p/" + "a/" * DEPTH + "n.md:1: hello from the depths\n"), found.output
    assert "1 match" in found.output, found.output



@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("deep")
    try:
        yield from notes_world_on(request, tmp)
    finally:
        remove(tmp)


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[ServerThread]:
    with serve_world(world) as running:
        yield running


@pytest.fixture
async def alice(server: ServerThread, world: World) -> AsyncIterator[Client]:
    async with connect(server.url, world.tokens["alice_write"]) as client:
        yield client


@pytest.mark.anyio
async def test_a_note_written_1100_folders_deep_is_found_and_a_move_beside_it_works(alice: Client,
                                                                                   world: World) -> None:
    deep = "projects/deep/" + "a/" * DEPTH + "n.md"
    await call(alice, "write_note", {"path": deep, "content": "# Depths\n\nhello from the depths\n"})
    found = await call(alice, "searchKnowledge", {"query": "hello from the depths", "project": "projects"})
    assert [r["path"] for r in found["results"]] == [deep], found
    await call(alice, "write_note", {"path": "projects/deep/top.md", "content": "# Top\n"})
    moved = await call(alice, "move_note", {"path": "projects/deep/top.md", "new_path": "projects/deep/top2.md"})
    assert "summary" in moved, moved  # the walk of the project for symlinks passed the deep folder
    world.runtime.indexing.sync()  # the whole vault's walk, as the watcher's and a restart's
    again = await call(alice, "searchKnowledge", {"query": "hello from the depths", "project": "projects"})
    assert [r["path"] for r in again["results"]] == [deep], again


@pytest.mark.anyio
async def test_a_deep_delete_another_program_races_leaves_no_trash_copy(alice: Client, world: World,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A delete whose note changes on disk meanwhile takes its trash copy away again; for a note 1,100 folders deep
    that was shutil.rmtree, which recursed once per folder and failed past Python's limit ("did not expect")."""
    deep = "projects/race/" + "b/" * DEPTH + "n.md"
    await call(alice, "write_note", {"path": deep, "content": "# Race\n"})
    files = world.runtime.notes.vault.files
    real_remove = files.remove

    def changed(*args: object, **kwargs: object) -> None:
        raise ChangedOnDisk()

    monkeypatch.setattr(files, "remove", changed)
    refused = await refusal(alice, "delete_note", {"path": deep})
    assert "keeps changing on disk" in refused, refused
    trash = world.vault / ".notewell/trash"
    assert not trash.exists() or not any(p.is_file() for p in trash.rglob("n.md")), "a trash copy was left"
    monkeypatch.setattr(files, "remove", real_remove)
    deleted = await call(alice, "delete_note", {"path": deep})
    assert deleted["trash"].endswith("/" + deep), deleted


def test_doctor_counts_the_folders_of_a_vault_1100_deep(deep_vault: Path, tmp_path: Path) -> None:
    """Doctor counts the vault's folders against the watcher's inotify limit; os.walk recursed once per folder."""
    db = str(tmp_path / "store.db")
    assert run_cli("index", "--vault", str(deep_vault), "--db", db).exit_code == 0
    checked = run_cli("doctor", "--vault", str(deep_vault), "--db", db, "--json")
    assert "did not expect" not in checked.output, checked.output
    watcher = [c for c in json.loads(checked.stdout) if c["check"] == "watcher"]
    assert watcher and f"{DEPTH + 2} folders" in watcher[0]["found"], watcher  # the vault, p and the 1,100 below
