"""One query, one order, on both backends, through the doors: an outside probe asked recall "when do the credentials
for the test environment change" among 20 rules sharing its common words and the memory that answers it in other
words; SQLite answered that memory first, PostgreSQL 21st (its ts_rank weighed no word by its rarity). Now both
rank words by FTS5's bm25 (store/postgres/word_rank.py), over MCP and REST alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from test_meaning_doors import Served, call, served

pytestmark = pytest.mark.anyio

ANSWER = "The staging cluster password rotates every Thursday at noon."
QUESTION = "when do the credentials for the test environment change"
TEAMS = ["billing", "search", "mobile", "payments", "infra"]


def _rules() -> list[str]:
    """17 rules holding "change" (a word most memories hold: bm25 weighs it little), 3 holding "test" (rarer)."""
    return [f"Rule {i}: a change to the {TEAMS[i % 5]} fixtures needs a second reviewer from team {i}."
            for i in range(17)] + [f"Rule {i}: the {TEAMS[i % 5]} test data is refreshed by team {i}."
                                   for i in range(17, 20)]


async def _asked(world: Served) -> tuple[list[str], list[str], list[str]]:
    """recall over MCP and REST, and brain_session_search over MCP, each as the contents found, in order."""
    alice = world.tokens["alice"]
    contents: dict[str, str] = {}
    for text in [*_rules(), ANSWER]:
        contents[(await call(world.mcp, alice, "remember", {"content": text, "project": "apollo"}))["ref"]] = text
    world.embedded()
    mcp = [contents[r["ref"]] for r in (await call(world.mcp, alice, "recall", {"query": QUESTION}))["results"]]
    rest: Any = httpx.get(f"{world.api}/memories/recall", params={"q": QUESTION},
                          headers={"Authorization": f"Bearer {alice}"}, timeout=30).json()
    by_rest = [contents[r["memory"]["ref"]] for r in rest["results"]]
    strict = await call(world.mcp, alice, "search_memory", {"query": "team", "limit": 20})
    return mcp, by_rest, [contents[r["ref"]] for r in strict["results"]]


async def test_recall_and_search_memory_answer_in_one_order_on_sqlite_and_postgresql(pg_url: str,
                                                                                     tmp_path: Path) -> None:
    answers = []
    for db in (str(tmp_path / "lite" / "index.db"), pg_url):
        with served(tmp_path / db.rsplit("/", 1)[-1].replace("?", "_"), db) as world:
            answers.append(await _asked(world))
    (lite_mcp, lite_rest, lite_strict), (pg_mcp, pg_rest, pg_strict) = answers
    assert ANSWER in lite_mcp and lite_mcp == lite_rest
    assert pg_mcp == lite_mcp and pg_rest == lite_rest
    assert len(lite_strict) == 20 and pg_strict == lite_strict
