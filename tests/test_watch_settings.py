"""A running server follows notewell.toml: the watcher reads the vault's settings again when the file changes,
and every writer (the watcher, `notewell index`) indexes with the same settings, read the same way.

Observed as a user would: searchKnowledge over MCP on the app `notewell serve` runs (in this process), and
`notewell index` through the CLI beside it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from conftest import make_vault, run_cli
from mcp_world import connect, served_vault
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime

pytestmark = pytest.mark.anyio
SEEN_WITHIN_S = 15.0  # generous for a loaded machine; a change is usually seen within a second
BIG = "The bittern booms in the reeds.\n" + "A line of the long field survey, repeated.\n" * 74_000  # 3.1 MB


def _prepare(vault: Path, db: str) -> str:
    """`notewell index`, then a staff member's knowledge:read token."""
    assert run_cli("index", "--vault", str(vault), "--db", db).exit_code == 0
    rt = open_runtime(str(vault), db)
    try:
        rt.administration.add_user(LOCAL_OWNER, "sam@example.test", "staff", handle="sam")
        return rt.administration.mint_token(LOCAL_OWNER, "sam@example.test", ["knowledge:read"]).secret
    finally:
        rt.close()




async def _paths(url: str, token: str, query: str) -> list[str]:
    async with connect(url, token) as client:
        result = await client.call_tool("searchKnowledge", {"query": query})
        assert not result.is_error, result
        assert result.structured_content is not None
        return [hit["path"] for hit in result.structured_content["results"]]  # type: ignore[index, union-attr]


async def _until(url: str, token: str, query: str, expected: list[str]) -> None:
    """Search until the hits' paths are ``expected`` (fails after SEEN_WITHIN_S)."""
    deadline = time.monotonic() + SEEN_WITHIN_S
    while (found := await _paths(url, token, query)) != expected:
        assert time.monotonic() < deadline, f"{query!r}: still {found}, expected {expected}"
        await anyio.sleep(0.05)


async def _logged(caplog: pytest.LogCaptureFixture, wanted: Callable[[str], bool]) -> None:
    deadline = time.monotonic() + SEEN_WITHIN_S
    while not any(wanted(r.getMessage()) for r in caplog.records):
        assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
        await anyio.sleep(0.05)


async def test_a_raised_size_limit_indexes_the_large_file_and_every_writer_keeps_it(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"notes/heron.md": "The heron nests by the weir.\n", "notes/survey.md": BIG})
    db = str(tmp_path / "index.db")
    token = _prepare(vault, db)  # the survey is over the 2 MB default: skipped
    with served_vault(vault, db) as url:
        assert await _paths(url, token, "bittern") == []
        (vault / "notewell.toml").write_text("[index]\nmax_file_bytes = 4_000_000\n", encoding="utf-8")
        await _until(url, token, "bittern", ["notes/survey.md"])  # the server read the new limit
        # notewell index reads the same settings the same way: it finds nothing to do
        index = run_cli("index", "--vault", str(vault), "--db", db)
        assert index.exit_code == 0 and index.stdout.startswith("Up to date"), index.stdout
        # and the next edits keep the large file, through the watcher's partial and whole syncs
        (vault / "notes/heron.md").write_text("The heron and a grebe.\n", encoding="utf-8")
        await _until(url, token, "grebe", ["notes/heron.md"])
        with (vault / "notes/survey.md").open("a", encoding="utf-8") as survey:
            survey.write("A snipe drums over the marsh.\n")
        await _until(url, token, "snipe", ["notes/survey.md"])
        (vault / ".notewellignore").write_text("drafts/\n", encoding="utf-8")  # a whole-vault sync
        (vault / "notes/coot.md").write_text("A coot.\n", encoding="utf-8")
        await _until(url, token, "coot", ["notes/coot.md"])
        assert await _paths(url, token, "bittern") == ["notes/survey.md"]
        # a lowered limit takes it out again
        (vault / "notewell.toml").write_text("[index]\nmax_file_bytes = 1_000_000\n", encoding="utf-8")
        await _until(url, token, "bittern", [])


async def test_a_broken_notewell_toml_is_logged_once_and_the_settings_in_force_stay(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="notewell.watch")
    vault = make_vault(tmp_path, {"notes/heron.md": "The heron.\n", "notes/survey.md": BIG,
                                  "notewell.toml": "[index]\nmax_file_bytes = 4_000_000\n"})
    db = str(tmp_path / "index.db")
    token = _prepare(vault, db)
    with served_vault(vault, db) as url:
        assert await _paths(url, token, "bittern") == ["notes/survey.md"]
        (vault / "notewell.toml").write_text("[index]\nmax_file_bytes = 'big'\n", encoding="utf-8")
        await _logged(caplog, lambda m: m.startswith("op=watch.settings error=") and "max_file_bytes" in m)
        (vault / "notes/coot.md").write_text("A coot.\n", encoding="utf-8")  # the watcher goes on syncing
        await _until(url, token, "coot", ["notes/coot.md"])
        (vault / "notes/coot.md").write_text("A coot and a rail.\n", encoding="utf-8")
        await _until(url, token, "rail", ["notes/coot.md"])
        assert await _paths(url, token, "bittern") == ["notes/survey.md"]  # with the settings in force
        errors = [r for r in caplog.records if r.getMessage().startswith("op=watch.settings error=")]
        assert len(errors) == 1 and errors[0].levelno == logging.WARNING
        (vault / "notewell.toml").write_text("[index]\nmax_file_bytes = 1_000_000\n", encoding="utf-8")
        await _until(url, token, "bittern", [])  # fixed: read and applied
        await _logged(caplog, lambda m: m == "op=watch.settings maxFileBytes=1000000 fileTypes="
                      ".md,.markdown,.txt,.rst,.org,.csv,.json,.yaml,.yml,.toml")
        (vault / "notewell.toml").write_text("semantic = false\n[index]\nmax_file_bytes = 1_000_000\n",
                                             encoding="utf-8")  # read at a server's start: said, not applied
        await _logged(caplog, lambda m: m == "op=watch.settings semantic=false applies=next-start")
