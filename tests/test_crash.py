"""kill -9 loses nothing: during a first index, an incremental index and a burst of remembers. Both backends.

Each index crash is followed by an ordinary `notewell index`, and the store must then equal a fresh store
built from the same vault (every document, its hash and its text, the skipped files, the projects). The
remember burst runs in a child process that prints each memory's ref once remember returned it (the
acknowledgement a client gets); after the kill every acknowledged memory must be in the store, whole.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from notewell.indexer import sync
from notewell.runtime import open_runtime
from notewell.store import open_store

FILES = 120
WORDS = [f"word{i:03d}" for i in range(300)]


def _write_vault(vault: Path, files: int = FILES, salt: str = "") -> None:
    for i in range(files):
        folder = vault / f"p{i % 3}" / f"f{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n".join(" ".join(WORDS[(i * 7 + j + k) % len(WORDS)] for k in range(12)) + f" {salt}"
                         for j in range(80))
        (folder / f"doc{i:04d}.md").write_text(f"# Doc {i}\n\n{body}\n")


def _snapshot(db: str, vault: Path) -> dict[str, object]:
    rt = open_runtime(str(vault), db, create=False)
    try:
        docs = rt.store.documents
        state = {key: (st.sha256, st.size) for key, st in docs.state().items()}
        texts = {key: doc.text for key in state if (doc := docs.get(*key)) is not None}
        skipped = sorted((s.project, s.path, s.reason) for s in docs.skipped())
        return {"state": state, "texts": texts, "skipped": skipped, "projects": docs.vault_projects()}
    finally:
        rt.close()


def _index(vault: Path, db: str) -> None:
    """Index in this process, as `notewell index` does."""
    rt = open_runtime(str(vault), db)
    try:
        sync(rt.settings, rt.store)
    finally:
        rt.close()


INDEX_CHILD = textwrap.dedent("""
    import sys
    from notewell.indexer import sync
    from notewell.runtime import open_runtime

    rt = open_runtime(sys.argv[1], sys.argv[2])
    sync(rt.settings, rt.store, progress=lambda done, total: print(done, total, flush=True))
    print("done", flush=True)
""")


def _index_killed_part_way(vault: Path, db: str, fraction: float) -> None:
    """Index in a child process, killed with SIGKILL once it has read ``fraction`` of the bytes to read."""
    proc = subprocess.Popen([sys.executable, "-c", INDEX_CHILD, str(vault), db], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        done, total = (int(n) for n in line.split())
        if done >= total * fraction:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert "done" not in proc.stdout.read(), "the index finished before the kill: nothing was tested"


@pytest.fixture(params=["sqlite", "postgres"])
def dbs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """Two empty stores of one backend: the one crashed into, and a fresh one to compare with."""
    if request.param == "sqlite":
        yield str(tmp_path / "crashed.db"), str(tmp_path / "fresh.db")
        return
    cluster = request.getfixturevalue("pg_cluster")
    names = [cluster.create_database(), cluster.create_database()]
    yield cluster.url(names[0]), cluster.url(names[1])
    for name in names:
        cluster.drop_database(name)


def test_kill_during_a_first_and_an_incremental_index_loses_nothing(tmp_path: Path, dbs: tuple[str, str]) -> None:
    crashed, fresh = dbs
    vault = tmp_path / "vault"
    _write_vault(vault)
    _index(vault, fresh)
    _index_killed_part_way(vault, crashed, 0.6)
    _index(vault, crashed)
    assert _snapshot(crashed, vault) == _snapshot(fresh, vault)

    # an incremental run: changes, additions, deletions and a rename, killed part way
    _write_vault(vault, FILES // 2, salt="changed")
    for i in range(FILES, FILES + 40):
        (vault / "p0" / f"new{i}.md").write_text(f"new document {i}\n")
    for doc in sorted(vault.glob("p1/f1/*.md"))[:5]:
        doc.unlink()
    moved = sorted(vault.glob("p2/f2/*.md"))[0]
    moved.rename(moved.with_name("renamed.md"))
    _index_killed_part_way(vault, crashed, 0.5)
    _index(vault, crashed)
    _index(vault, fresh)
    assert _snapshot(crashed, vault) == _snapshot(fresh, vault)
    if not crashed.startswith("postgresql"):
        store = open_store(crashed, create=False)
        try:
            assert store.db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"  # type: ignore[attr-defined]
        finally:
            store.close()


REMEMBER_BURST = textwrap.dedent("""
    import sys, threading
    from notewell.access.principal import LOCAL_OWNER
    from notewell.runtime import open_runtime

    rt = open_runtime(sys.argv[1], sys.argv[2])
    rt.indexing.sync_projects()
    memory = rt.memory
    lock = threading.Lock()

    def burst(worker):
        for i in range(100000):
            content = f"memory {worker}-{i}: " + "words " * (i % 50)
            ref = memory.remember(LOCAL_OWNER, content, project="p0", path=f"w{worker}").memory.ref
            with lock:
                print(ref, worker, i, flush=True)

    threads = [threading.Thread(target=burst, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
""")


def test_kill_during_a_burst_of_remembers_loses_no_acknowledged_write(tmp_path: Path,
                                                                      dbs: tuple[str, str]) -> None:
    db, _fresh = dbs
    vault = tmp_path / "vault"
    (vault / "p0").mkdir(parents=True)
    _index(vault, db)
    out = tmp_path / "acknowledged.txt"
    with out.open("w") as sink:
        proc = subprocess.Popen([sys.executable, "-c", REMEMBER_BURST, str(vault), db], stdout=sink,
                                stderr=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + 60
        while out.stat().st_size < 20_000 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    lines = [line.split() for line in out.read_text().splitlines() if line.count(" ") == 2]
    assert len(lines) > 100, proc.stderr.read().decode() if proc.stderr else ""
    rt = open_runtime(str(vault), db, create=False)
    try:
        for ref, worker, i in lines:
            memory = rt.store.memories.get(ref)
            assert memory is not None, f"acknowledged {ref} is lost"
            assert memory.content.startswith(f"memory {worker}-{i}: ")
    finally:
        rt.close()
