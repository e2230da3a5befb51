"""What the brain's learning-loop tests share (KEA, the job runner, evolution, autoskill): a clock a test sets, a
vault whose notewell.toml turns meaning off (exact-rule dedup, no model to load), a runtime on it, a member."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pytest

from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.runtime import Runtime, open_runtime


class Clock:
    """What the runners and services a test gives it read as now; the test moves ``now``."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def words_only_vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    folder.mkdir()
    (folder / "notewell.toml").write_text("semantic = false\n", encoding="utf-8")
    return folder


@contextmanager
def runtime_on(vault: Path, store_url: str) -> Iterator[Runtime]:
    opened = open_runtime(str(vault), store_url)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(name="vault")
def loop_vault(tmp_path: Path) -> Path:
    """The learning loop's tests' vault (a module that needs another defines its own ``vault``)."""
    return words_only_vault(tmp_path)


@pytest.fixture(name="rt")
def loop_runtime(vault: Path, store_url: str) -> Iterator[Runtime]:
    """A runtime on ``vault`` over each backend (``store_url``)."""
    with runtime_on(vault, store_url) as opened:
        yield opened


def member(rt: Runtime, handle: str) -> Principal:
    return user_principal(rt.administration.add_user(LOCAL_OWNER, f"{handle}@example.test", "member", handle=handle))
