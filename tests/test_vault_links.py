"""The symlink policy, reads that a swap cannot lead outside the vault, and hostile file names.

Regression tests for issue 14 defects 1, 2, 6 and 7: each failed on the code before the fix.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import IndexedVault, make_vault, run_cli
from mcp_world import World, connect, serve_world
from notewell.access.principal import LOCAL_OWNER
from notewell.indexer import sync


def paths(indexed: IndexedVault) -> set[str]:
    return {f"{project}/{path}" for project, path in indexed.store.documents.state()}


def skipped(indexed: IndexedVault) -> dict[str, str]:
    return {f"{s.project}/{s.path}": s.reason for s in indexed.store.documents.skipped()}


def texts(indexed: IndexedVault) -> str:
    docs = indexed.store.documents
    return "\n".join(d.text for key in docs.state() if (d := docs.get(*key)) is not None)


# --- defect 1: a link is followed only inside its own project, never to what the scan passes over -----


@pytest.fixture
def linked_vault(tmp_path: Path) -> Path:
    vault = make_vault(tmp_path, {
        "proja/real.md": "proja words\n",
        "proja/.env.md": "API_KEY=hidden-env\n",
        "proja/.hidden/inner.md": "hidden folder words\n",
        "proja/.gitignore": "private/\n",
        "proja/private/notes.md": "git-ignored words\n",
        "proja/script.py": "print('not an indexed type')\n",
        "projb/plan.md": "projb confidential\n",
        "~bob/diary.md": "bob private diary\n",
        ".notewell/quickstart-token": "nw_admin_secret\n",
    })
    links = {
        "qs-token.md": "../.notewell/quickstart-token",
        "x.md": "../~bob/diary.md",
        "env.md": ".env.md",
        "hid.md": ".hidden/inner.md",
        "ign.md": "private/notes.md",
        "other.md": "../projb/plan.md",
        "py.md": "script.py",
        "ok.md": "real.md",
    }
    for name, target in links.items():
        (vault / "proja" / name).symlink_to(target)
    return vault


def test_links_are_followed_only_inside_their_own_project(linked_vault: Path, index_vault) -> None:
    nv = index_vault(linked_vault)
    assert {p for p in paths(nv) if p.startswith("proja/")} == {"proja/real.md", "proja/ok.md"}
    reasons = skipped(nv)
    assert reasons["proja/qs-token.md"] == "symlink leads outside its project"
    assert reasons["proja/x.md"] == "symlink leads outside its project"
    assert reasons["proja/other.md"] == "symlink leads outside its project"
    assert reasons["proja/env.md"] == "symlink leads to a hidden file or folder"
    assert reasons["proja/hid.md"] == "symlink leads to a hidden file or folder"
    assert reasons["proja/ign.md"] == "symlink leads to an ignored or excluded file"
    assert reasons["proja/py.md"] == "symlink leads to a file of a type that is not indexed"
    stored = texts(nv)
    for secret in ("nw_admin_secret", "hidden-env", "hidden folder", "git-ignored", "not an indexed type"):
        assert secret not in stored
    assert stored.count("bob private diary") == 1  # bob's own home, not its link in proja
    assert stored.count("projb confidential") == 1


def _world(nv: IndexedVault, handle: str, project: str) -> World:
    """The indexed vault with a member holding read on ``project`` and a knowledge:read token for them."""
    rt = nv.runtime
    rt.indexing.sync_projects()
    rt.administration.add_user(LOCAL_OWNER, f"{handle}@example.test", "member", handle=handle)
    rt.administration.grant(LOCAL_OWNER, f"{handle}@example.test", project, "read")
    token = rt.administration.mint_token(LOCAL_OWNER, f"{handle}@example.test", ["knowledge:read"]).secret
    return World(rt, {handle: token})


async def _read(url: str, token: str, path: str) -> tuple[bool, str]:
    async with connect(url, token) as client:
        result = await client.call_tool("readDoc", {"path": path})
        return result.is_error, result.content[0].text  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_reader_of_the_project_cannot_read_through_a_link(linked_vault: Path, index_vault) -> None:
    world = _world(index_vault(linked_vault), "m", "proja")
    with serve_world(world) as server:
        for link in ("qs-token.md", "x.md", "other.md", "env.md", "hid.md", "ign.md"):
            failed, text = await _read(server.url, world.tokens["m"], f"proja/{link}")
            assert failed and text.startswith("Error in readDoc: Not found")
        failed, text = await _read(server.url, world.tokens["m"], "proja/ok.md")
        assert not failed and "proja words" in text


def test_index_prints_the_links_it_did_not_follow(linked_vault: Path, tmp_path: Path) -> None:
    result = run_cli("index", "--vault", str(linked_vault), "--db", str(tmp_path / "i.db"))
    assert result.exit_code == 0
    assert "proja/x.md: symlink leads outside its project" in result.stdout
    assert "proja/env.md: symlink leads to a hidden file or folder" in result.stdout


def test_doctor_counts_the_links_it_does_not_follow(linked_vault: Path, tmp_path: Path) -> None:
    assert run_cli("index", "--vault", str(linked_vault), "--db", str(tmp_path / "i.db")).exit_code == 0
    result = run_cli("doctor", "--vault", str(linked_vault), "--db", str(tmp_path / "i.db"), "--json")
    vault_check = next(c for c in json.loads(result.stdout) if c["check"] == "vault")
    assert "7 symlink not followed" in vault_check["found"]


def test_the_quickstart_token_file_is_outside_the_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from notewell.cli.quickstart_cmd import quickstart_token_file

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    vault = make_vault(tmp_path, {"p/a.md": "words\n"})
    token_file = quickstart_token_file(vault)
    assert not token_file.resolve().is_relative_to(vault.resolve())
    assert token_file.is_relative_to(tmp_path / "state")
    assert quickstart_token_file(vault) == token_file != quickstart_token_file(tmp_path / "other")


# --- defect 2: a file or folder swapped for a symlink between the scan and the read -------------------


@pytest.mark.parametrize("swapped", ["p/b.md", "p/sub"])
def test_a_swap_during_indexing_is_not_read(tmp_path: Path, index_vault, swapped: str) -> None:
    outside = make_vault(tmp_path, {"b.md": "outside secret\n", "sub/c.md": "outside secret\n"}, "outside")
    vault = make_vault(tmp_path, {"p/a.md": "first\n", "p/b.md": "second\n", "p/sub/c.md": "third\n"})
    nv = index_vault(make_vault(tmp_path, {"q/x.md": "x\n"}, "other"))  # a store to sync the vault into
    settings = nv.runtime.settings.__class__(vault=vault.resolve(), db=nv.db)
    calls = 0

    def swap(_done: int, _total: int) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:  # (0, total) as reading starts, then after the first file was read, before the others
            target = vault / swapped
            if target.is_dir():
                (target / "c.md").unlink()
                target.rmdir()
            else:
                target.unlink()
            target.symlink_to(outside / Path(swapped).name, target_is_directory=target.name == "sub")

    sync(settings, nv.store, progress=swap)
    docs = nv.store.documents
    stored = "\n".join(d.text for key in docs.state() if (d := docs.get(*key)) is not None)
    assert "outside secret" not in stored
    assert calls == 4  # the start, then once per file
    reasons = {f"{s.project}/{s.path}": s.reason for s in docs.skipped()}
    swapped_file = "p/b.md" if swapped == "p/b.md" else "p/sub/c.md"
    assert reasons[swapped_file].startswith("unreadable")


# --- defect 6: a name that is not UTF-8 is skipped and reported, with or without ignore files ---------


@pytest.mark.parametrize("ignore_file", [None, ".notewellignore", "p/.gitignore"])
def test_a_name_that_is_not_utf8_never_aborts_indexing(tmp_path: Path, index_vault, ignore_file: str | None) -> None:
    files = {"p/ok.md": "fine words\n"} | ({ignore_file: "drafts/\n*.tmp\n"} if ignore_file else {})
    vault = make_vault(tmp_path, files)
    (vault / "p").joinpath(os.fsdecode(b"bad\xff.md")).write_text("bad name words\n")
    (vault / "p" / os.fsdecode(b"dir\xfe")).mkdir()
    (vault / "p" / os.fsdecode(b"dir\xfe") / "inner.md").write_text("words\n")
    nv = index_vault(vault)
    assert paths(nv) == {"p/ok.md"}
    assert skipped(nv) == {"p/bad\ufffd.md": "file name is not valid UTF-8",
                           "p/dir\ufffd": "file name is not valid UTF-8"}


def test_quickstart_example_vault_with_a_non_utf8_name_indexes(tmp_path: Path) -> None:
    from mcp_world import NORTHWIND

    vault = tmp_path / "northwind"
    shutil.copytree(NORTHWIND, vault, ignore=shutil.ignore_patterns(".notewell"))
    assert (vault / ".notewellignore").exists()
    project = next(p for p in sorted(vault.iterdir()) if p.is_dir() and not p.name.startswith("."))
    (project / os.fsdecode(b"caf\xe9.md")).write_text("latin-1 name\n")
    result = run_cli("index", "--vault", str(vault), "--db", str(tmp_path / "i.db"))
    assert result.exit_code == 0, result.output
    assert "file name is not valid UTF-8" in result.stdout


# --- defect 7: a backslash in a name is part of the name ----------------------------------------------


@pytest.mark.anyio
async def test_a_backslash_name_is_readable_by_its_exact_path(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/back\\slash.md": "backslash words\n", "p/back/slash.md": "folder words\n"})
    nv = index_vault(vault)
    assert paths(nv) == {"p/back\\slash.md", "p/back/slash.md"}
    world = _world(nv, "m", "p")
    with serve_world(world) as server:
        failed, text = await _read(server.url, world.tokens["m"], "p/back\\slash.md")
        assert not failed and "backslash words" in text
        failed, text = await _read(server.url, world.tokens["m"], "p/back/slash.md")
        assert not failed and "folder words" in text
