"""A failed embedding batch is counted and backs off whatever its error's text holds: a model's message with a NUL
character (which PostgreSQL's text refuses) or a lone surrogate (which neither backend can encode) is kept with
those characters replaced, where recording the failure failed, so the batch was neither counted nor backed off
(its rows claimed again when their lease ran out, failing so without end). Through `notewell embed`, both
backends."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import make_vault, run_cli
from notewell.access.principal import LOCAL_OWNER
from notewell.meaning.model import Embedder
from notewell.runtime import open_runtime


@pytest.fixture
def args(store_url: str, tmp_path: Path) -> list[str]:
    """The --vault and --db of a store with one memory queued for its vector (no runner runs)."""
    found = ["--vault", str(make_vault(tmp_path, {"alpha/a.md": "# A\n"})), "--db", store_url]
    assert run_cli("index", *found).exit_code == 0
    rt = open_runtime(found[1], found[3])
    try:
        rt.memory.remember(LOCAL_OWNER, "We deploy on Tuesdays.", project="alpha")
    finally:
        rt.close()
    return found


@pytest.mark.parametrize("message", ["bad\x00byte", "bad\ud800half"], ids=["nul", "surrogate"])
def test_a_failure_whose_message_the_store_cannot_hold_is_counted(args: list[str], message: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Embedder, texts: Sequence[str]) -> Any:
        raise RuntimeError(message)

    monkeypatch.setattr(Embedder, "embed", broken)
    result = run_cli("embed", *args, "--json")
    assert result.exit_code == 0, result.stderr
    state = json.loads(result.stdout)
    assert (state["vectors"], state["queued"], state["failing"]) == (0, 1, 1), state
    assert state["lastError"] == "RuntimeError: bad\ufffd" + message[4:], state
