"""The watcher does not index the server's own write again, on both backends.

The server runs as `notewell serve` runs it (the vault watcher on, in this process); an agent creates a note of
about 1.8 MB through write_note, rewrites it whole and appends to it. Each write indexes the note itself (it is found
by search when the tool returns); the watcher sees the same files change, finds them as the store already has
them, and writes nothing of the index: its only syncs that did work are the two files written beside the tools
(one before, to know it watches; one after, so that it has seen every write by then).

That end to end test meets the race only when the timing brings it; the one it guards against is shown
directly below: a sync that waits for the writer lock while another indexes the same file plans after it.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import make_vault
from mcp_world import ServerThread, World, connect
from notes_world import notes_world_on
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.indexer import IndexReport, sync
from notewell.mcp.registry import choose
from notewell.runtime import open_runtime
from notewell.vault.scan import Subtrees
from pg import BACKENDS

pytestmark = pytest.mark.anyio
SEEN_WITHIN_S = 20.0  # the watcher finds a file written beside it (generous for a loaded machine)
LINE = "The quarterly pricing review keeps the retainer floor and the discount ladder as they are.\n"
BIG = "# Ledger\n\n" + "".join(f"## Section {i}\n" + LINE * 40 for i in range(500))  # about 1.8 MB (the limit: 2 MB)
SYNC_LINE = re.compile(r"op=watch\.sync added=(\d+) changed=(\d+) removed=(\d+) renamed=(\d+)")


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from notes_world_on(request, tmp_path_factory.mktemp("notes-watch"))


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def watch_lines() -> Iterator[list[str]]:
    """The watcher's log lines (op=watch.…) written while the test runs."""
    logger, handler = logging.getLogger("notewell.watch"), _Lines()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler.lines
    logger.removeHandler(handler)
    logger.setLevel(level)


async def _call(client: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content
    return result.structured_content  # type: ignore[no-any-return]


async def _paths(client: Any, query: str) -> list[str]:
    return [hit["path"] for hit in (await _call(client, "searchKnowledge", {"query": query}))["results"]]


async def _until_found(client: Any, query: str, path: str) -> None:
    started = time.monotonic()
    while await _paths(client, query) != [path]:
        assert time.monotonic() - started < SEEN_WITHIN_S, f"the watcher never indexed {path}"
        await anyio.sleep(0.05)


async def test_the_watcher_does_not_index_the_servers_own_write(world: World, watch_lines: list[str]) -> None:
    with ServerThread(build_app(world.runtime, ServeOptions(choose(None), watch=True))) as server:
        async with connect(server.url, world.tokens["alice_write"]) as alice:
            (world.vault / "projects/apollo/before.md").write_text("qzwatchbefore\n")  # beside the tools
            await _until_found(alice, "qzwatchbefore", "projects/apollo/before.md")
            done = await _call(alice, "write_note", {"path": "projects/apollo/ledger.md",
                                                     "content": BIG + "qzcreated\n"})
            assert await _paths(alice, "qzcreated") == ["projects/apollo/ledger.md"]  # indexed by the write
            for i in range(8):
                word = f"qzedit{i}x"
                if i % 2:  # an append: one region of the note indexed again
                    done = await _call(alice, "edit_note", {"path": "projects/apollo/ledger.md",
                                                            "operation": "append", "content": word})
                else:  # every line changed: all 32 regions (the write's own indexing takes longest)
                    done = await _call(alice, "write_note", {
                        "path": "projects/apollo/ledger.md", "content": BIG.replace("floor", f"floor{i}") + word,
                        "overwrite": True, "expected_version": done["version"]})
                assert await _paths(alice, word) == ["projects/apollo/ledger.md"]
                await anyio.sleep(0.03 * i)  # some writes land while the watcher waits for quiet, some after
            (world.vault / "projects/apollo/after.md").write_text("qzwatchafter\n")
            await _until_found(alice, "qzwatchafter", "projects/apollo/after.md")
    syncs = [tuple(int(n) for n in found.groups()) for line in watch_lines if (found := SYNC_LINE.search(line))]
    assert syncs == [(1, 0, 0, 0), (1, 0, 0, 0)], f"the watcher re-indexed: {watch_lines}"


def test_a_sync_that_waited_for_the_writer_finds_the_file_current(tmp_path: Path, store_url: str) -> None:
    """The watcher's sync starts while the note writer's own sync holds the writer lock (here: this thread,
    inside its writer); once it has the lock it finds the note as the writer stored it and indexes nothing."""
    vault = make_vault(tmp_path, {"p/note.md": "first\n"})
    rt = open_runtime(str(vault), store_url)
    try:
        sync(rt.settings, rt.store)
        reports: list[IndexReport] = []
        watcher = threading.Thread(target=lambda: reports.append(sync(rt.settings, rt.store,
                                                                       only=Subtrees(["p/note.md"]))))
        with rt.store.documents.writer():
            (vault / "p/note.md").write_text("second, longer\n")
            assert sync(rt.settings, rt.store, only=Subtrees(["p/note.md"])).changed == 1  # the write's own
            watcher.start()
            watcher.join(0.5)  # it waits for the lock (on old code, it had planned before taking it)
            assert watcher.is_alive()
        watcher.join(30)
        assert (reports[0].changed, reports[0].added, reports[0].unchanged) == (0, 0, 1)
        doc = rt.store.documents.get("p", "note.md")
        assert doc is not None and doc.text == "second, longer\n"
    finally:
        rt.close()


def test_a_file_written_again_while_a_sync_of_its_path_reads_is_left_to_the_next(tmp_path: Path,
                                                                                  store_url: str) -> None:
    """A note written again between a path sync's scan and its read (the server's next write landing while
    the watcher's sync of the previous one runs) is not indexed by that sync: the write indexes it itself, or
    the change's own event brings the next sync. A whole-vault sync indexes what it read."""
    vault = make_vault(tmp_path, {"p/note.md": "first\n", "p/other.md": "other\n"})
    rt = open_runtime(str(vault), store_url)
    note = vault / "p/note.md"
    written = iter(["second, longer\n", "fourth\n"])

    def write_again(done: int, total: int) -> None:  # called once planned, before any file is read
        if done == 0:  # a later mtime whatever the clock's tick
            mtime = note.stat().st_mtime_ns
            note.write_text(next(written))
            os.utime(note, ns=(mtime + 10_000_000_000, mtime + 10_000_000_000))

    try:
        sync(rt.settings, rt.store)
        note.write_text("changed once\n")
        report = sync(rt.settings, rt.store, progress=write_again, only=Subtrees(["p/note.md"]))
        assert (report.changed, report.unchanged, report.skipped) == (0, 0, 0)
        doc = rt.store.documents.get("p", "note.md")
        assert doc is not None and doc.text == "first\n"  # left as it was: nothing indexed with a stale mtime
        assert sync(rt.settings, rt.store, only=Subtrees(["p/note.md"])).changed == 1  # the next sync
        doc = rt.store.documents.get("p", "note.md")
        assert doc is not None and doc.text == "second, longer\n"
        note.write_text("third\n")
        assert sync(rt.settings, rt.store, progress=write_again).changed == 1  # a whole sync: indexed
        doc = rt.store.documents.get("p", "note.md")
        assert doc is not None and doc.text == "fourth\n"
    finally:
        rt.close()
