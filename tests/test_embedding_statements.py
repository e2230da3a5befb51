"""The embedding queue costs as many statements for a batch of many items as for a batch of one (issue 27): the
claim leased each row in a statement of its own, the write locked, wrote and took off each row in three or four
more, and a failed batch counted each item's attempt in a transaction of its own (about 12 statements a memory
embedded). Through `notewell embed` on both backends: every vector lands, a failed batch waits to be retried."""

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
from statements_world import counting

ONE = ["We deploy on Tuesdays and Thursdays only."]
MANY = [f"Service {n} is owned by team {n % 3}; page them first." for n in range(20)]  # one batch (32) still


def _queued(args: Sequence[str], texts: Sequence[str]) -> None:
    """Memories remembered, queued for their vectors (not embedded: no runner runs)."""
    rt = open_runtime(args[1], args[3])
    try:
        for text in texts:
            rt.memory.remember(LOCAL_OWNER, text, project="alpha")
    finally:
        rt.close()


def _embedded(args: Sequence[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict[str, Any]]:
    """The statements `notewell embed` ran, and its --json answer."""
    with monkeypatch.context() as patched:
        statements = counting(patched)
        result = run_cli("embed", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return statements.count, json.loads(result.stdout)


@pytest.fixture
def args(store_url: str, tmp_path: Path) -> list[str]:
    """The --vault and --db of a store whose project alpha has one document and no memory."""
    found = ["--vault", str(make_vault(tmp_path, {"alpha/a.md": "# A\n"})), "--db", store_url]
    assert run_cli("index", *found).exit_code == 0
    return found


def test_a_batch_of_twenty_costs_the_statements_of_a_batch_of_one(args: list[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _queued(args, ONE)
    one, state = _embedded(args, monkeypatch)
    assert (state["vectors"], state["queued"]) == (1, 0), state
    _queued(args, MANY)
    many, state = _embedded(args, monkeypatch)
    assert (state["vectors"], state["items"], state["queued"]) == (21, 21, 0), state
    assert many == one, (many, one)


def test_a_failed_batch_of_twenty_costs_the_statements_of_a_failed_batch_of_one(
        args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Embedder, texts: Sequence[str]) -> Any:
        raise RuntimeError("the model broke")

    with monkeypatch.context() as patched:
        patched.setattr(Embedder, "embed", broken)
        _queued(args, ONE)
        one, state = _embedded(args, patched)
        assert (state["vectors"], state["queued"], state["failing"]) == (0, 1, 1), state
        assert "RuntimeError: the model broke" in state["lastError"]
        _queued(args, MANY)
        many, state = _embedded(args, patched)  # the one failed before is made due again, and fails again
        assert (state["vectors"], state["queued"], state["failing"]) == (0, 21, 21), state
    assert many == one, (many, one)
    _, state = _embedded(args, monkeypatch)  # retried, with the model back
    assert (state["vectors"], state["queued"], state["failing"]) == (21, 0, 0), state
