"""A PostgreSQL store keeps each phrase's rows with word_totals' oid (word_rank.Ranker). A restore makes word_totals
again, and the writes after it could bring its totals back to the ones a store open across it kept, over other
memories: the store would rank with the counts of the index before the restore (a rarer word than it now is
weighed as such). The kept counts are let go when the oid changes (and the restore starts the log of changes
anew: tests/test_word_rank_kept.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from conftest import run_cli
from notewell.records.memories import MemoryInput, MemoryQuery
from notewell.store import Store, open_store

NOW = "2026-11-29T12:00:00.000000Z"


def _add(store: Store, ref: str, content: str) -> None:
    store.memories.add(MemoryInput(ref=ref, project="apollo", author_user_id="u1", author_token_id=None,
                                   memory_type="durable", path="", title="", content=content, tags=(),
                                   content_hash=hashlib.sha256(content.encode()).hexdigest(), created=NOW))


def _alpha(store: Store) -> list[tuple[str, float]]:
    return [(h.record.ref, h.relevance)
            for h in store.memories.tolerant(MemoryQuery(["apollo"], ["alpha"], NOW, 10, explain=False))]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_store_open_across_a_restore_ranks_as_a_store_opened_after_it(backend: str, request: pytest.FixtureRequest,
                                                                        tmp_path: Path) -> None:
    db = str(tmp_path / "index.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    vault = tmp_path / "vault"
    vault.mkdir()
    backup = tmp_path / "store.backup"
    served = open_store(db)
    try:
        for i in range(22):
            _add(served, f"a{i}", f"alpha filler{i}" if i < 2 else f"filler{i}")
        result = run_cli("backup", str(backup), "--db", db, "--vault", str(vault))
        assert result.exit_code == 0, result.output
        for i in range(5):
            _add(served, f"b{i}", f"beta gamma{i}")
        assert [r for r, _ in _alpha(served)] == ["a1", "a0"]  # "alpha": 2 of 27 memories, kept
        result = run_cli("restore", str(backup), "--db", db, "--vault", str(vault), "--replace")
        assert result.exit_code == 0, result.output
        other = open_store(db)
        try:
            for i in range(5):  # as many writes as before the restore: the same sum of changes
                _add(other, f"c{i}", f"alpha delta{i}")
            assert _alpha(served) == _alpha(other)  # "alpha": 7 of 27
        finally:
            other.close()
    finally:
        served.close()
