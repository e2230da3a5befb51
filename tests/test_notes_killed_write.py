"""A note write killed outright (SIGKILL) between writing its temporary file and renaming it over the note leaves
that file in the note's folder; the next scan of the vault (`notewell index`, the watcher's sync when a server
starts) removes it and says so in the log, and never a user's file named alike, a live write's or another
machine's (src/notewell/scratch_files.py, docs/writing.md "Atomic, serialised, indexed").

The write is a real `notewell note write` whose rename of its temporary file says READY on stdout and waits there
until it is killed."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_vault, run_cli
from notewell.scratch_files import NOTE_TEMP_PREFIX

BLOCKED_RENAME = f"""
import os, sys
renamed = os.replace
def held(src, dst, *rest, **named):
    if str(src).startswith({NOTE_TEMP_PREFIX!r}):
        print("READY", flush=True)
        sys.stdin.read()  # until killed
    return renamed(src, dst, *rest, **named)
os.replace = held
sys.argv = ["notewell", *sys.argv[1:]]
from notewell.cli import main
main()
"""


def killed(vault: Path, *command: str) -> int:
    """`notewell <command>` killed at its first rename of a temporary file: its process id."""
    base = ["--vault", str(vault)]
    assert run_cli("index", *base).exit_code == 0
    proc = subprocess.Popen([sys.executable, "-c", BLOCKED_RENAME, *command, *base], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "READY\n"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.pid


def killed_write(vault: Path) -> tuple[list[Path], int]:
    """`notewell note write` over apollo/plan.md killed at its rename: what it left, and its process id."""
    pid = killed(vault, "note", "write", "apollo/plan.md", "# Mine\n", "--overwrite")
    folder = vault / "apollo"
    # the new text, and the note's second name the write holds across its rename (note_files._second_name)
    left = sorted(p for p in folder.iterdir() if p.name.startswith(NOTE_TEMP_PREFIX))
    assert sorted(p.read_text() for p in left) == ["# Mine\n", "# Plan\n"]
    assert (folder / "plan.md").read_text() == "# Plan\n"
    return left, pid


def test_a_killed_writes_temporary_file_is_removed_by_the_next_index(tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n"})
    base = ["--vault", str(vault)]
    left, pid = killed_write(vault)
    folder = vault / "apollo"
    host = left[0].name[len(NOTE_TEMP_PREFIX):].rsplit("-", 1)[0].split("@", 1)[1]
    kept = [
        folder / f"{NOTE_TEMP_PREFIX}draft.md",  # a user's file, named alike
        folder / f"{NOTE_TEMP_PREFIX}{pid}@{host}-{'a' * 16}.md",  # the same with more after it
        folder / f"{NOTE_TEMP_PREFIX}{os.getpid()}@{host}-{'b' * 16}",  # a live process's write
        folder / f"{NOTE_TEMP_PREFIX}{pid}@another-machine-{'c' * 16}",  # a folder shared over the network
    ]
    for path in kept:
        path.write_text("keep\n")
    link = folder / f"{NOTE_TEMP_PREFIX}{pid}@{host}-{'d' * 16}"
    link.symlink_to("plan.md")  # no regular file: never removed, nor what it names
    made = folder / f"{NOTE_TEMP_PREFIX}{pid}@{host}-{'e' * 16}"
    made.mkdir()  # a folder named alike
    with caplog.at_level(logging.WARNING):
        done = run_cli("index", *base)
    assert done.exit_code == 0, done.output
    assert not [path for path in left if path.exists()]
    assert all(path.read_text() == "keep\n" for path in kept)
    assert link.is_symlink() and made.is_dir() and (folder / "plan.md").read_text() == "# Plan\n"
    assert ('op=index.removed what="the temporary files of note writes killed before their rename" files=2 '
            f"paths=apollo/{left[0].name},apollo/{left[1].name}") in caplog.text, caplog.text


def test_a_server_removes_a_killed_writes_temporary_files_as_it_starts(tmp_path: Path) -> None:
    """`notewell serve`: its watcher's first sync of the whole vault, before any change is seen."""
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n"})
    left, _ = killed_write(vault)
    (vault / "apollo/new.md").write_text("# New\n")  # so that its first sync says it is done (op=watch.sync)
    server = subprocess.Popen([sys.executable, "-m", "notewell", "serve", "--port", "8821", "--vault", str(vault),
                               "--no-jobs", "--no-semantic"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    try:
        assert server.stderr is not None
        said: list[str] = []
        while not said or "op=watch.sync" not in said[-1]:
            said.append(server.stderr.readline())
            assert said[-1], f"the server ended: {said}"
        assert [line for line in said if "op=index.removed" in line and "files=2" in line], said
        assert not [path for path in left if path.exists()]
        assert (vault / "apollo/plan.md").read_text() == "# Plan\n"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_killed_deletes_temporary_file_in_the_trash_is_removed_by_the_next_index(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """`notewell note delete` killed at the rename of its copy into the trash (.notewell/trash/<id>/<path>): the scan
    passes over the hidden .notewell folder, so that temporary file stayed there for ever."""
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n"})
    pid = killed(vault, "note", "delete", "apollo/plan.md")
    left = [p for p in (vault / ".notewell/trash").rglob(f"{NOTE_TEMP_PREFIX}*")]
    assert [p.read_text() for p in left] == ["# Plan\n"] and left[0].parent.name == "apollo"
    host = left[0].name[len(NOTE_TEMP_PREFIX):].rsplit("-", 1)[0].split("@", 1)[1]
    live = left[0].parent / f"{NOTE_TEMP_PREFIX}{os.getpid()}@{host}-{'b' * 16}"  # a live process's write
    live.write_text("keep\n")
    older = vault / "apollo" / f"{NOTE_TEMP_PREFIX}{'f' * 16}"  # an earlier version's name: says no process
    older.write_text("# Older\n")
    with caplog.at_level(logging.WARNING):
        done = run_cli("index", "--vault", str(vault))
    assert done.exit_code == 0, done.output
    assert not left[0].exists() and live.read_text() == "keep\n" and str(pid) in left[0].name
    assert older.read_text() == "# Older\n"
    assert run_cli("search", "Older", "--vault", str(vault)).output == "No results for 'Older'\n"
    assert (vault / "apollo/plan.md").read_text() == "# Plan\n"  # killed before the note was touched
    rel = left[0].relative_to(vault)
    assert f"files=1 paths={rel}" in caplog.text, caplog.text
