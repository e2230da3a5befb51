"""Committing each note write when the vault is a git work tree and ``[writing] git_commit = true`` says so
(off by default): the person who wrote is the author, the journal id is in the message, nothing is pushed.

Only the paths the write touched are staged and committed (``git commit -- <paths>``), so a person's own
staged changes elsewhere in the vault are left alone. A commit that fails (no git, a hook, a lock) is logged
and the write stands: it is done, journaled and indexed already.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

log = logging.getLogger("notewell.notes")
GIT_TIMEOUT_S = 20
COMMITTER = ("Notewell", "notewell@localhost")  # the committer; the author is the person who wrote


class NoteGit:
    def __init__(self, vault: Path, enabled: bool) -> None:
        self.vault = vault
        self.enabled = enabled

    @cached_property
    def _work_tree(self) -> bool:
        try:
            done = self._git("rev-parse", "--is-inside-work-tree")
        except (OSError, subprocess.SubprocessError):
            return False
        return done.returncode == 0 and done.stdout.strip() == "true"

    def commit(self, paths: Sequence[str], author: tuple[str, str], message: str) -> None:
        """Commit ``paths`` (vault-relative) as ``author`` (name, email), when enabled and in a work tree."""
        if not self.enabled or not self._work_tree:
            return
        try:
            added = self._git("add", "-A", "--", *paths)
            done = self._git("commit", "-q", "--no-verify", "-m", message, f"--author={author[0]} <{author[1]}>",
                             "--", *paths) if added.returncode == 0 else added
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("notes: git commit of %s failed: %s", ", ".join(paths), exc)
            return
        if done.returncode != 0:
            log.warning("notes: git commit of %s failed: %s", ", ".join(paths), done.stderr.strip()[:500])

    def _git(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "GIT_COMMITTER_NAME": COMMITTER[0], "GIT_COMMITTER_EMAIL": COMMITTER[1],
               "GIT_TERMINAL_PROMPT": "0"}
        return subprocess.run(["git", "-C", str(self.vault), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, env=env, check=False)
