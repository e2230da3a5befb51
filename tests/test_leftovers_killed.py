"""A backup or an import killed outright (SIGKILL: no cleanup runs) leaves its scratch file or folder, holding
every home's rows; the next run of the same command in that folder removes it, and never a live run's
(src/notewell/scratch_files.py, docs/operations.md "Leftovers of a killed run"), on both backends.

Each run to leave something behind is a real process whose step after its scratch is written (the rename of a
backup's copy, the load after an import's unpacking) says so on stdout and waits there until it is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import run_cli
from notewell.store import open_store

BLOCKED_RENAME = """
import os, sys
renamed = os.replace
def held(src, dst, *rest, **named):
    if str(src).endswith(".part"):
        print("READY", flush=True)
        sys.stdin.read()  # until killed
    return renamed(src, dst, *rest, **named)
os.replace = held
"""
BLOCKED_LOAD = """
import sys
from notewell.services import portability
unpacked = portability.unpack
def held(archive, folder):
    unpacked(archive, folder)
    print("READY", flush=True)
    sys.stdin.read()  # until killed
portability.unpack = held
"""
RUN_CLI = """
sys.argv = ["notewell", *sys.argv[1:]]
from notewell.cli import main
main()
"""


@contextmanager
def held_run(patch: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    """``notewell ARGS`` running, stopped at the step ``patch`` holds (it has said READY); killed at the end."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys\n" + patch + RUN_CLI, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=dict(os.environ))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "READY\n"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def killed(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    """An export (one .tar) of a SQLite store, alone in a folder of its own."""
    source = tmp_path / "source.db"
    open_store(str(source)).close()
    (tmp_path / "exports").mkdir()
    tar = tmp_path / "exports" / "export.tar"
    assert run_cli("export", str(tar), "--db", str(source)).exit_code == 0
    return tar


def test_the_next_backup_removes_a_killed_backups_copy_not_a_live_ones(store_url: str, archive: Path,
                                                                        tmp_path: Path) -> None:
    assert run_cli("import", str(archive), "--db", store_url).exit_code == 0  # the store, made
    folder = tmp_path / "backups"
    folder.mkdir()
    with held_run(BLOCKED_RENAME, "backup", str(folder / "one.db"), "--db", store_url) as first:
        [left] = folder.glob("one.db*.part")
        journal = left.with_name(left.name + "-journal")  # as SQLite leaves it beside a copy it was writing
        journal.write_bytes(b"")
        killed(first)
        with held_run(BLOCKED_RENAME, "backup", str(folder / "two.db"), "--db", store_url):
            [live] = folder.glob("two.db*.part")
            done = run_cli("backup", str(folder / "three.db"), "--db", store_url)
            assert done.exit_code == 0, done.output
            assert sorted(p.name for p in folder.iterdir()) == sorted([live.name, "three.db"])


def test_the_next_import_removes_a_killed_imports_folder_not_a_live_ones(store_url: str, archive: Path,
                                                                          tmp_path: Path) -> None:
    folder = archive.parent
    with held_run(BLOCKED_LOAD, "import", str(archive), "--db", store_url) as first:
        [left] = [p for p in folder.iterdir() if p != archive]
        assert left.name.startswith(".notewell-import-") and (left / "manifest.json").is_file()
        killed(first)
        with held_run(BLOCKED_LOAD, "import", str(archive), "--db", str(tmp_path / "other.db")):
            [live] = [p for p in folder.iterdir() if p not in (archive, left)]
            done = run_cli("import", str(archive), "--db", store_url)  # into the store the killed one made
            assert done.exit_code == 0, done.output
            assert sorted(folder.iterdir()) == sorted([archive, live])
            assert (live / "manifest.json").is_file()


def test_another_machines_leftovers_are_kept_and_the_doctor_lists_them(store_url: str, archive: Path,
                                                                       tmp_path: Path) -> None:
    """A folder shared over the network: nothing here can tell whether another machine still writes there."""
    assert run_cli("import", str(archive), "--db", store_url).exit_code == 0
    folder = tmp_path / "backups"
    folder.mkdir()
    theirs = folder / "nightly.db.4242@another-machine.part"
    theirs.write_bytes(b"x" * 1234)
    (folder / ".notewell-import-4242@another-machine-abcd1234").mkdir()
    (folder / ".notewell-import-4242@another-machine-abcd1234" / "manifest.json").write_bytes(b"y" * 10)
    assert run_cli("backup", str(folder / "mine.db"), "--db", store_url).exit_code == 0
    assert theirs.is_file()
    doctor = run_cli("doctor", "--db", store_url, "--vault", str(tmp_path), "--json")
    check = next(c for c in json.loads(doctor.stdout) if c["check"] == "backup")
    assert check["status"] == "warn", check
    assert (".notewell-import-4242@another-machine-abcd1234 (10 bytes), nightly.db.4242@another-machine.part "
            "(1234 bytes)") in check["found"], check
    assert "rm -r" in check["fix"], check
