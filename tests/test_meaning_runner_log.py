"""The embedding runner's log line when the store fails under it (services/meaning.py, EmbeddingRunner).

A probe stopped PostgreSQL under a running server: the runner logged ``op=meaning.runner outcome=error`` with a
whole traceback (PoolTimeout, then Unavailable) at every retry, where the vault watcher says the same outage in one
line (``op=watch.error``). The store unreachable is said in one line with its reason; an error nobody expects
keeps its traceback, for a bug report.
"""

from __future__ import annotations

import logging
import threading
from types import SimpleNamespace
from typing import Any, cast

import pytest

from notewell.errors import Unavailable
from notewell.services.meaning import EmbeddingRunner, MeaningService

DOWN = ("the database at postgresql://localhost:5432/notewell gave no connection in 5 s (is it running and\n"
        "reachable?)")


def _logged(caplog: pytest.LogCaptureFixture, failure: Exception) -> logging.LogRecord:
    """The record the runner logs when ``embed_due`` raises ``failure``, the runner stopped right after."""
    said = threading.Event()

    def embed_due() -> int:
        said.set()
        raise failure

    meaning: Any = SimpleNamespace(switched_off=False, missing=False, work=threading.Event(), embed_due=embed_due,
                                   store=SimpleNamespace(meaning=SimpleNamespace(requeue_other_models=lambda _: 0)))
    runner = EmbeddingRunner(cast(MeaningService, meaning))
    with caplog.at_level(logging.WARNING, logger="notewell.meaning"):
        runner.start()
        assert said.wait(10)
        runner.stop()
    records = [r for r in caplog.records if r.getMessage().startswith("op=meaning.runner")]
    assert len(records) == 1, [r.getMessage() for r in caplog.records]
    return records[0]


def test_the_store_unreachable_is_one_line_with_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    record = _logged(caplog, Unavailable(DOWN))
    assert record.getMessage() == ('op=meaning.runner outcome=error error="' + " ".join(DOWN.split()) + '"')
    assert record.exc_info is None and record.levelno == logging.WARNING


def test_an_unexpected_error_keeps_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    record = _logged(caplog, RuntimeError("a bug"))
    assert record.getMessage() == "op=meaning.runner outcome=error"
    assert record.exc_info is not None and record.levelno == logging.ERROR


def test_a_store_down_as_the_server_starts_does_not_end_the_runner(caplog: pytest.LogCaptureFixture) -> None:
    """The runner's first step, queueing again what another model embedded, ran outside its retries: with the store
    down as a server started, the thread died and nothing was embedded for the rest of the server's life."""
    requeues: list[str] = []
    embedding = threading.Event()

    def requeue_other_models(model: str) -> int:
        requeues.append(model)
        if len(requeues) == 1:
            raise Unavailable(DOWN)
        return 0

    def embed_due() -> int:
        embedding.set()
        return 0

    meaning: Any = SimpleNamespace(switched_off=False, missing=False, work=threading.Event(), embed_due=embed_due,
                                   store=SimpleNamespace(meaning=SimpleNamespace(
                                       requeue_other_models=requeue_other_models)))
    runner = EmbeddingRunner(cast(MeaningService, meaning))
    with caplog.at_level(logging.WARNING, logger="notewell.meaning"):
        runner.start()
        assert embedding.wait(30)  # after the retry's pause (2.5 s)
        runner.stop()
    assert len(requeues) == 2
    assert [r.getMessage() for r in caplog.records if r.getMessage().startswith("op=meaning.runner")] == [
        'op=meaning.runner outcome=error error="' + " ".join(DOWN.split()) + '"']
