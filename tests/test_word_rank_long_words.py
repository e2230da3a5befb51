"""A word longer than PostgreSQL's longest lexeme (2,046 bytes: here 700 Devanagari letters, 3 bytes each, one word
to FTS5) on both backends, through MCP and REST. PostgreSQL left it out of the memory's words, so the memory was
shorter there and bm25 ordered "alpha" otherwise than SQLite, its prefix found nothing, and a query holding it
failed ("word is too long in tsquery"); SQLite keeps it whole. Now it is cut to fit, in the index and the query
alike (store/postgres/lexemes.py), and both answer the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from test_meaning_doors import Served, call, served

pytestmark = pytest.mark.anyio

LONG = "क" * 700
MEMORIES = ["alpha beta", f"alpha {LONG}", "gamma alpha alpha"]


async def _asked(world: Served) -> dict[str, Any]:
    alice = world.tokens["alice"]
    contents: dict[str, str] = {}
    for text in MEMORIES:
        contents[(await call(world.mcp, alice, "remember", {"content": text, "project": "apollo"}))["ref"]] = text
    world.embedded()

    async def searched(query: str) -> list[tuple[str, float]]:
        found = await call(world.mcp, alice, "search_memory", {"query": query, "limit": 10})
        return [(contents[r["ref"]], r["score"]) for r in found["results"]]

    rest: Any = httpx.get(f"{world.api}/memories/recall", params={"q": f"alpha {LONG}"},
                          headers={"Authorization": f"Bearer {alice}"}, timeout=30)
    assert rest.status_code == 200, rest.text
    recall = await call(world.mcp, alice, "recall", {"query": f"alpha {LONG}"})
    prefix = await call(world.mcp, alice, "recall", {"query": LONG[:600]})  # the long word's beginning
    return {"alpha": await searched("alpha"), "long": await searched(LONG),
            "recall": [contents[r["ref"]] for r in recall["results"]],
            "prefix": [contents[r["ref"]] for r in prefix["results"]],
            "rest": [contents[r["memory"]["ref"]] for r in rest.json()["results"]]}


async def test_a_word_past_postgresql_s_longest_lexeme_is_searched_and_ranked_as_on_sqlite(pg_url: str,
                                                                                          tmp_path: Path) -> None:
    answers = []
    for db in (str(tmp_path / "lite" / "index.db"), pg_url):
        with served(tmp_path / db.rsplit("/", 1)[-1].replace("?", "_"), db) as world:
            answers.append(await _asked(world))
    lite, pg = answers
    assert len(lite["alpha"]) == 3
    assert [c for c, _ in lite["long"]] == [f"alpha {LONG}"]
    assert lite["recall"][0] == f"alpha {LONG}" and lite["rest"] == lite["recall"]
    assert lite["prefix"][0] == f"alpha {LONG}"
    for key in ("alpha", "long"):
        assert [c for c, _ in pg[key]] == [c for c, _ in lite[key]], key
        assert [r for _, r in pg[key]] == pytest.approx([r for _, r in lite[key]], rel=1e-9), key
    for key in ("recall", "rest", "prefix"):
        assert pg[key] == lite[key], key


async def test_a_word_repeated_past_what_a_tsvector_holds_leaves_every_other_memory_s_relevance_as_on_sqlite(
        pg_url: str, tmp_path: Path) -> None:
    """A tsvector holds 256 positions of a word: a memory of one word 3,000 times was 256 words long on PostgreSQL,
    the average length bm25 weighs every memory by fell from about 1,000 to 88, and "alpha" in a memory of one word
    and in one of six scored apart (0.96 to 1) where SQLite scores them almost alike (0.997 to 1)."""
    answers = []
    for db in (str(tmp_path / "lite" / "index.db"), pg_url):
        with served(tmp_path / db.rsplit("/", 1)[-1].replace("?", "_"), db) as world:
            alice = world.tokens["alice"]
            for text in ("alpha", "alpha beta gamma delta epsilon zeta", " ".join(["omega"] * 3000)):
                await call(world.mcp, alice, "remember", {"content": text, "project": "apollo"})
            found = await call(world.mcp, alice, "search_memory", {"query": "alpha", "limit": 10})
            answers.append([(r["content"], r["score"]) for r in found["results"]])
    lite, pg = answers
    assert [c for c, _ in lite] == ["alpha", "alpha beta gamma delta epsilon zeta"]
    assert pg == lite
