"""Ctrl-C during notewell index (docs/operations.md, "An interrupt"): one line saying what the interrupt left, exit
status 130, the store as that line says, and the next notewell index finishing the work, on both backends.

The sync of the documents is one transaction: an interrupt before its commit leaves nothing of it, one after it
the documents indexed and perhaps not yet the projects of the vault's top-level folders (each written on its own).
Two tests make the Ctrl-C land in each stage every time (the process sends it to itself from inside the stage);
the third sends it as a terminal does, to the whole process group, once the sync says it has begun reading.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from conftest import make_vault, run_cli
from notewell.store import open_store

FILES = 1_500
LEFT = "notewell index: interrupted; "
NOTHING = LEFT + "nothing was indexed: the sync is one transaction, and it was rolled back; run notewell index again\n"
DOCUMENTS = (LEFT + "the documents were indexed (the sync's transaction was committed), but the projects of the "
             "vault's top-level folders may not all be made or updated yet; run notewell index again to finish\n")
DONE = LEFT + "the sync was done: the store is in line with the vault\n"

LANDS_IN_READING = """
import os, signal, sys
import notewell.indexer as indexer
real, calls = indexer._load, [0]
def load(reader, file):
    calls[0] += 1
    if calls[0] == 100:  # Ctrl-C, as the sync reads its 100th file
        os.kill(os.getpid(), signal.SIGINT)
    return real(reader, file)
indexer._load = load
from notewell.cli import main
sys.argv[0] = "notewell"
main()
"""

LANDS_IN_PROJECTS = """
import os, signal, sys
from notewell.services.indexing import IndexingService
real = IndexingService.sync_projects
def sync_projects(self, ids=None):
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, as the projects are synced (the documents committed)
    return real(self, ids)
IndexingService.sync_projects = sync_projects
from notewell.cli import main
sys.argv[0] = "notewell"
main()
"""


def _vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path, {f"{'acme' if i % 2 else 'globex'}/notes/n{i:05d}.md":
                                 f"# Note {i}\n\n" + "gripper servo torque café firmware " * 160 for i in range(FILES)})


def _index(program: list[str], vault: Path, store_url: str, *, group: bool) -> tuple[int, str]:
    """``notewell index`` run by ``program``; with ``group``, sent Ctrl-C (to its whole process group, as a terminal
    sends it) once its progress line says the reading has begun. Its exit status and what it said on stderr after
    that line."""
    proc = subprocess.Popen([*program, "index", "--vault", str(vault), "--db", store_url], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stderr is not None
        if group:
            begun = proc.stderr.readline()
            assert begun.startswith("Indexing: ") and begun.endswith(" to read\n"), begun
            os.killpg(proc.pid, signal.SIGINT)
        said = proc.stderr.read()
        return proc.wait(timeout=300), said
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _held(store_url: str) -> tuple[int, list[str]]:
    """(documents, projects) the store holds."""
    store = open_store(store_url)
    try:
        return store.documents.sizes()[0], sorted(p.id for p in store.identity.projects())
    finally:
        store.close()


def _last_line(said: str) -> str:
    """The line an interrupt ends with, after nothing but the sync's progress lines."""
    *progress, last = said.splitlines(keepends=True) or [""]
    assert all(line.startswith("Indexing: ") for line in progress), said
    return last


def _indexed_again(vault: Path, store_url: str) -> None:
    again = run_cli("index", "--vault", str(vault), "--db", store_url)
    assert again.exit_code == 0, again.output
    assert _held(store_url) == (FILES, ["acme", "globex"])


def test_ctrl_c_while_the_documents_are_read_leaves_nothing_and_index_again_does_it_all(
        tmp_path: Path, store_url: str) -> None:
    vault = _vault(tmp_path)
    code, said = _index([sys.executable, "-c", LANDS_IN_READING], vault, store_url, group=False)
    assert (code, _last_line(said)) == (130, NOTHING), said
    assert _held(store_url)[0] == 0
    _indexed_again(vault, store_url)


def test_ctrl_c_after_the_documents_commit_says_they_are_kept_and_index_again_makes_the_projects(
        tmp_path: Path, store_url: str) -> None:
    vault = _vault(tmp_path)
    code, said = _index([sys.executable, "-c", LANDS_IN_PROJECTS], vault, store_url, group=False)
    assert (code, _last_line(said)) == (130, DOCUMENTS), said
    assert _held(store_url) == (FILES, [])
    _indexed_again(vault, store_url)


def test_ctrl_c_from_the_terminal_during_an_index_says_what_it_left(tmp_path: Path, store_url: str) -> None:
    vault = _vault(tmp_path)
    code, said = _index([sys.executable, "-m", "notewell"], vault, store_url, group=True)
    # the reading has begun, but the sync may be over (a fast machine) by the time the signal lands
    assert code == 130 and _last_line(said) in (NOTHING, DOCUMENTS, DONE), said
    documents, _ = _held(store_url)
    assert documents == (0 if said.endswith(NOTHING) else FILES)
    _indexed_again(vault, store_url)
