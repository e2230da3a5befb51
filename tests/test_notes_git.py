"""[writing] git_commit: in a vault that is a git work tree each note write is a commit of the touched paths
only, with the person as author and the journal id in the message; off by default; never pushed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import make_vault
from notewell.access.principal import LOCAL_OWNER
from notewell.errors import ConfigError
from notewell.runtime import open_runtime
from notewell.services.note_edits import Edit


def _git(vault: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(vault), *args], capture_output=True, text=True, check=True).stdout


def _repo(tmp_path: Path, setting: str) -> Path:
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n", "apollo/mine.md": "my own change\n",
                                  "notewell.toml": setting})
    _git(vault, "init", "-q")
    return vault


def test_each_write_is_a_commit_by_its_author(tmp_path: Path) -> None:
    vault = _repo(tmp_path, "[writing]\ngit_commit = true\n")
    _git(vault, "add", "apollo/mine.md")  # the person's own staged change: left out of Notewell's commits
    rt = open_runtime(str(vault), str(tmp_path / "index.db"))
    try:
        rt.indexing.sync()
        done = rt.notes.edit_note(LOCAL_OWNER, "apollo/plan.md", Edit("append", "- ship"), tool="test")
        moved = rt.notes.move_note(LOCAL_OWNER, "apollo/plan.md", "apollo/done/plan.md", tool="test")
    finally:
        rt.close()
    log = _git(vault, "log", "--format=%an <%ae>|%s").splitlines()
    assert log == [f"owner <owner@localhost>|notewell: move apollo/plan.md (journal {moved.journal_id}, test)",
                   f"owner <owner@localhost>|notewell: edit apollo/plan.md (journal {done.journal_id}, test)"]
    assert _git(vault, "show", "HEAD:apollo/done/plan.md") == "# Plan\n- ship\n"
    assert "apollo/mine.md" in _git(vault, "diff", "--cached", "--name-only")  # still only staged


def test_off_by_default_and_a_bad_setting_is_named(tmp_path: Path) -> None:
    vault = _repo(tmp_path, "")
    rt = open_runtime(str(vault), str(tmp_path / "index.db"))
    try:
        rt.indexing.sync()
        rt.notes.write_note(LOCAL_OWNER, "apollo/new.md", "new\n", tool="test")
    finally:
        rt.close()
    assert subprocess.run(["git", "-C", str(vault), "log"], capture_output=True).returncode != 0  # no commit
    (vault / "notewell.toml").write_text("[writing]\ngit_commit = \"yes\"\n")
    with pytest.raises(ConfigError, match=r"\[writing\] git_commit must be true or false"):
        open_runtime(str(vault), str(tmp_path / "index.db"))
