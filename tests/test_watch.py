"""The vault watcher on running servers, observed through MCP.

On the server app `notewell serve` runs (in this process, for speed), a change to the vault (create,
edit, rename, delete, a 2,000-file burst, a note at the vault root, a text file without an extension)
is found, or gone, through searchKnowledge without running `notewell index`; with watching off it is
not. On PostgreSQL two real `notewell serve` processes share one database: one leads (writes
documents), and when it is killed the other takes over and indexes the next change within 10 s.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest

from conftest import make_vault
from mcp_world import connect, free_port, served_vault
from notewell.access.principal import LOCAL_OWNER
from notewell.indexer import sync
from notewell.runtime import open_runtime
from notewell.watcher import start_watcher

pytestmark = pytest.mark.anyio
STARTUP_S = 60
SEEN_WITHIN_S = 10.0  # generous for a loaded CI machine; bench/watch_bench.py measures the real latency


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def leading(self) -> bool:
        return "op=watch.leader state=leading" in self.log.read_text(errors="replace")


def _prepare(vault: Path, db: str) -> str:
    """Index the vault, add a staff member and return their knowledge:read token."""
    rt = open_runtime(str(vault), db)
    try:
        sync(rt.settings, rt.store)
        rt.indexing.sync_projects()
        rt.administration.add_user(LOCAL_OWNER, "sam@example.test", "staff", handle="sam")
        return rt.administration.mint_token(LOCAL_OWNER, "sam@example.test", ["knowledge:read"]).secret
    finally:
        rt.close()


def _start(vault: Path, db: str, log: Path) -> Server:
    """A real `notewell serve` process (watching, as by default); wait for it with _healthy."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}
    proc = subprocess.Popen([sys.executable, "-m", "notewell", "serve", "--port", str(port), "--vault", str(vault),
                             "--db", db], env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    return Server(f"http://127.0.0.1:{port}/mcp", proc, log)


def _healthy(server: Server) -> None:
    health = server.url.removesuffix("/mcp") + "/healthz"
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"notewell serve exited: {server.log.read_text()[-2000:]}")
        try:
            if httpx.get(health, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"notewell serve did not start: {server.log.read_text()[-2000:]}")


def _stop(server: Server) -> None:
    if server.proc.poll() is None:
        server.proc.terminate()
        try:
            server.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()


async def _paths(url: str, token: str, query: str) -> list[str]:
    async with connect(url, token) as client:
        result = await client.call_tool("searchKnowledge", {"query": query})
        assert not result.is_error, result
        assert result.structured_content is not None
        return [hit["path"] for hit in result.structured_content["results"]]  # type: ignore[index, union-attr]


async def _until(url: str, token: str, query: str, expected: list[str], within: float = SEEN_WITHIN_S) -> float:
    """Search until the hits' paths are ``expected``; the seconds it took (fails after ``within``)."""
    started = time.monotonic()
    while True:
        found = await _paths(url, token, query)
        if found == expected:
            return time.monotonic() - started
        assert time.monotonic() - started < within, f"{query!r}: still {found}, expected {expected}"
        await anyio.sleep(0.05)




async def test_changes_are_searchable_without_indexing(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"notes/first.md": "# First\nThe heron nests by the weir.\n"})
    db = str(tmp_path / "index.db")
    token = _prepare(vault, db)
    with served_vault(vault, db, watch=True) as url:
        await _observe_changes(url, token, vault)


async def _observe_changes(url: str, token: str, vault: Path) -> None:
    assert await _paths(url, token, "heron") == ["notes/first.md"]
    (vault / "notes/second.md").write_text("A kingfisher on the alder.\n")
    await _until(url, token, "kingfisher", ["notes/second.md"])  # created
    (vault / "notes/second.md").write_text("A dipper on the alder.\n")
    await _until(url, token, "dipper", ["notes/second.md"])  # edited
    await _until(url, token, "kingfisher", [])
    (vault / "notes/second.md").rename(vault / "notes/renamed.md")
    await _until(url, token, "dipper", ["notes/renamed.md"])  # renamed
    (vault / "notes/renamed.md").unlink()
    await _until(url, token, "dipper", [])  # deleted
    (vault / "Inbox.md").write_text("An otter at the root of the vault.\n")
    await _until(url, token, "otter", ["_root/Inbox.md"])  # a note at the vault root
    (vault / "notes/base-passwd-README").write_text("The wagtail file has no extension.\n")
    await _until(url, token, "wagtail", ["notes/base-passwd-README"])  # an extensionless text file
    burst = vault / "burst"
    burst.mkdir()
    for i in range(2000):  # a git checkout: a new top-level folder with 2,000 files at once
        (burst / f"note-{i:04d}.md").write_text(f"Burst note {i} about the curlew-{i:04d}.\n")
    await _until(url, token, "curlew-1999", ["burst/note-1999.md"], within=30)
    for i in (0, 777, 1234):
        assert await _paths(url, token, f"curlew-{i:04d}") == [f"burst/note-{i:04d}.md"]
    shutil.rmtree(burst)
    await _until(url, token, "curlew-1999", [], within=30)



async def test_an_edit_is_seen_through_a_symlink_and_with_its_mtime_put_back(tmp_path: Path, store_url: str) -> None:
    """A followed symlink's document is its target's text: an edit of the target is an edit of the link, though
    no event names the link. And an edit that keeps the file's size and puts its mtime back (cp -p, touch -r,
    rsync -t) is read all the same: the watcher saw it written. Both once stayed stale until a restart."""
    vault = make_vault(tmp_path, {"notes/target.md": "The heron nests by the weir.\n"})
    target = vault / "notes/target.md"
    os.utime(target, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))  # long settled: not "racy"
    os.symlink("target.md", vault / "notes/link.md")
    token = _prepare(vault, store_url)
    with served_vault(vault, store_url, watch=True) as url:
        await _until(url, token, "heron", ["notes/link.md", "notes/target.md"])
        kept = os.stat(target)
        target.write_text("The egret nests by the weir.\n")  # the same size
        os.utime(target, ns=(kept.st_atime_ns, kept.st_mtime_ns))
        await _until(url, token, "egret", ["notes/link.md", "notes/target.md"])
        await _until(url, token, "heron", [])
        with target.open("a") as more:
            more.write("A kingfisher too.\n")
        await _until(url, token, "kingfisher", ["notes/link.md", "notes/target.md"])
        target.unlink()  # the link is broken now: neither is found
        await _until(url, token, "egret", [])
        target.write_text("The grebe came back.\n")
        await _until(url, token, "grebe", ["notes/link.md", "notes/target.md"])


async def test_a_changed_ignore_file_resyncs_the_whole_vault(tmp_path: Path) -> None:
    """Issue 22 (mutant M5): an edited .notewellignore, or a new .gitignore at the vault root, changes what the
    vault holds beyond the ignore file itself: a file newly ignored leaves search, one no longer ignored joins it."""
    vault = make_vault(tmp_path, {"notes/keep.md": "The heron nests by the weir.\n",
                                  "notes/draft.md": "A grebe, not yet checked.\n",
                                  "notes/old.md": "A coot, set aside.\n",
                                  "notes/.notewellignore": "old.md\n",
                                  "other/plan.md": "A plover plan.\n"})
    db = str(tmp_path / "index.db")
    token = _prepare(vault, db)
    with served_vault(vault, db, watch=True) as url:
        assert await _paths(url, token, "coot") == []
        assert await _paths(url, token, "grebe") == ["notes/draft.md"]
        (vault / "notes/.notewellignore").write_text("draft.md\n")
        await _until(url, token, "grebe", [])  # newly ignored
        await _until(url, token, "coot", ["notes/old.md"])  # no longer ignored
        (vault / ".gitignore").write_text("plan.md\n")
        await _until(url, token, "plover", [])  # an ignore file at the vault root reaches every project
        assert await _paths(url, token, "heron") == ["notes/keep.md"]

async def test_no_watch_serves_the_store_as_it_is(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"notes/a.md": "The heron.\n"})
    db = str(tmp_path / "index.db")
    token = _prepare(vault, db)
    with served_vault(vault, db, watch=False) as url:
        (vault / "notes/b.md").write_text("A grebe.\n")
        await anyio.sleep(1.5)
        assert await _paths(url, token, "grebe") == []
        assert await _paths(url, token, "heron") == ["notes/a.md"]


async def test_postgres_leader_handover(tmp_path: Path, pg_url: str) -> None:
    vault = make_vault(tmp_path, {"notes/first.md": "The heron.\n"})
    token = _prepare(vault, pg_url)
    servers = [_start(vault, pg_url, tmp_path / f"serve-{i}.log") for i in range(2)]  # started together
    try:
        for server in servers:
            _healthy(server)
        deadline = time.monotonic() + SEEN_WITHIN_S
        while sum(s.leading() for s in servers) != 1:
            assert time.monotonic() < deadline, "no single leader"
            await anyio.sleep(0.1)
        leader = next(s for s in servers if s.leading())
        other = next(s for s in servers if s is not leader)
        (vault / "notes/second.md").write_text("A kingfisher.\n")
        for server in servers:  # the leader writes; both serve it
            await _until(server.url, token, "kingfisher", ["notes/second.md"])
        assert not other.leading()
        following = [line for line in other.log.read_text(errors="replace").splitlines() if "op=watch.leader" in line]
        assert len(following) == 1 and re.match(r"\d{4}-\d\d-\d\dT[\d:.]+Z op=watch\.leader state=following ",
                                                 following[0]), following  # said at start, with its UTC time
        leader.proc.send_signal(signal.SIGKILL)
        leader.proc.wait()
        (vault / "notes/third.md").write_text("A dipper.\n")
        waited = await _until(other.url, token, "dipper", ["notes/third.md"], within=SEEN_WITHIN_S)
        assert other.leading() and waited < SEEN_WITHIN_S
    finally:
        for server in servers:
            _stop(server)


def test_index_watch_is_a_standalone_indexer(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"notes/a.md": "The heron.\n"})
    db = str(tmp_path / "index.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}
    log = tmp_path / "index.log"
    proc = subprocess.Popen([sys.executable, "-m", "notewell", "index", "--watch", "--vault", str(vault), "--db", db],
                            env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    try:
        deadline = time.monotonic() + STARTUP_S
        while "state=leading" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        (vault / "Inbox.md").write_text("A grebe at the root.\n")
        rt = open_runtime(str(vault), db)
        try:
            deadline = time.monotonic() + SEEN_WITHIN_S
            while ("_root", "Inbox.md") not in rt.store.documents.state():
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        finally:
            rt.close()
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_a_vault_folder_moved_away_and_replaced_is_watched_again(tmp_path: Path) -> None:
    """A watch on a folder that was moved sees nothing more: the watcher notices and watches the new one."""
    vault = make_vault(tmp_path, {"notes/a.md": "The heron.\n"})
    rt = open_runtime(str(vault), str(tmp_path / "index.db"))
    try:
        thread = start_watcher(rt.settings, rt.store, lambda _ids: None)
        try:
            _wait_for(lambda: ("notes", "a.md") in rt.store.documents.state())
            vault.rename(tmp_path / "old-vault")
            make_vault(tmp_path, {"notes/b.md": "A grebe.\n"})  # a new folder at the same path (a re-clone)
            _wait_for(lambda: set(rt.store.documents.state()) == {("notes", "b.md")})
            (vault / "notes/c.md").write_text("A coot.\n")  # and its changes are seen
            _wait_for(lambda: ("notes", "c.md") in rt.store.documents.state())
        finally:
            thread.stop()
    finally:
        rt.close()


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + SEEN_WITHIN_S
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_symlink_the_policy_skips_is_not_read_again_and_again(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """A link out of the vault and a broken one are skipped the same way each time: a sync leaves them for their
    next change, and schedules no retry (it once logged one every 30 s for ever)."""
    from notewell.store.leadership import open_leadership
    from notewell.watcher import VaultWatcher

    outside = tmp_path / "outside.md"
    outside.write_text("outside secret\n")
    vault = make_vault(tmp_path, {"notes/a.md": "The heron.\n"})
    os.symlink(outside, vault / "notes" / "out.md")
    os.symlink(vault / "notes" / "gone.md", vault / "notes" / "broken.md")
    (vault / "notes" / "ok.md").write_text("A grebe.\n")
    rt = open_runtime(str(vault), str(tmp_path / "index.db"))
    try:
        watcher = VaultWatcher(rt.settings, rt.store, open_leadership(rt.settings.db))
        watcher._pending = {"notes/out.md", "notes/broken.md", "notes/ok.md"}
        with caplog.at_level("WARNING", logger="notewell"):
            watcher._sync_pending()
        assert ("notes", "ok.md") in rt.store.documents.state()
        assert watcher._retry_at is None and watcher._pending == set()
        assert "op=watch.retry" not in caplog.text
        skipped = {s.path: s.reason for s in rt.store.documents.skipped()}
        assert skipped["out.md"] == "symlink leads outside the vault" and skipped["broken.md"] == "broken symlink"
        (vault / "notes" / "gone.md").write_text("The target at last.\n")  # the broken link's target appears
        watcher._pending = {"notes/gone.md"}
        watcher._sync_pending()
        state = rt.store.documents.state()
        assert ("notes", "gone.md") in state and ("notes", "broken.md") in state  # the link is read again with it

        def away(reason: str | None = None) -> list[object]:
            raise OSError("the database is away")

        (vault / "notes" / "later.md").write_text("Later.\n")
        watcher._pending = {"notes/later.md"}
        rt.store.documents.skipped = away  # type: ignore[method-assign]
        with caplog.at_level("WARNING", logger="notewell"):
            watcher._sync_pending()  # the store failing while the scope is worked out: kept, tried again
        assert watcher._pending == {"notes/later.md"} and watcher._retry_at is not None
        assert "op=watch.retry" in caplog.text and "the database is away" in caplog.text
    finally:
        rt.close()


def test_a_chain_of_links_and_a_link_skipped_for_a_while_follow_their_target(tmp_path: Path, store_url: str) -> None:
    """A link to a link: retargeting or removing the middle one changes the first one's text too. A link whose
    target grew past the size limit (so both were left out) comes back with its target."""
    from notewell.store.leadership import open_leadership
    from notewell.watcher import VaultWatcher

    vault = make_vault(tmp_path, {"notes/t.md": "The heron.\n", "notes/t2.md": "The egret, a longer line.\n",
                                  "notes/big.md": "A grebe.\n", "notewell.toml": "[index]\nmax_file_bytes = 100\n"})
    os.symlink("t.md", vault / "notes/b.md")
    os.symlink("b.md", vault / "notes/a.md")
    os.symlink("big.md", vault / "notes/l.md")
    rt = open_runtime(str(vault), store_url)
    try:
        watcher = VaultWatcher(rt.settings, rt.store, open_leadership(rt.settings.db))

        def text(path: str) -> str | None:
            doc = rt.store.documents.get("notes", path)
            return None if doc is None else doc.text

        def synced(*paths: str) -> None:
            watcher._pending = set(paths)
            watcher._sync_pending()

        synced("")
        assert text("a.md") == text("b.md") == "The heron.\n" and text("l.md") == "A grebe.\n"
        (vault / "notes/b.md").unlink()
        os.symlink("t2.md", vault / "notes/b.md")  # the middle link retargeted
        synced("notes/b.md")
        assert text("a.md") == text("b.md") == "The egret, a longer line.\n"
        (vault / "notes/b.md").unlink()  # the middle link removed: the first one is broken
        synced("notes/b.md")
        assert text("a.md") is None and text("b.md") is None
        (vault / "notes/big.md").write_text("A grebe. " * 20)  # past the limit: both left out
        synced("notes/big.md")
        assert text("big.md") is None and text("l.md") is None
        (vault / "notes/big.md").write_text("A grebe again.\n")
        synced("notes/big.md")
        assert text("big.md") == text("l.md") == "A grebe again.\n"
        for i in range(300):  # many links elsewhere in the project: an edit reads only its own file again
            (vault / f"notes/shared-{i}.md").write_text(f"Shared {i}.\n")
            os.symlink(f"shared-{i}.md", vault / f"notes/link-{i}.md")
        synced("")
        (vault / "notes/t.md").write_text("The heron, again.\n")
        watcher._pending = {"notes/t.md"}
        assert watcher._scope().covers("notes/t.md") and not watcher._scope().covers("notes/link-7.md")
        assert watcher._links_into({"notes/shared-7.md"}) == {"notes/link-7.md"}
    finally:
        rt.close()
