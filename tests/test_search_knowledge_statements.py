"""A document search runs as many statements for many hits as for one: XMemo's search_knowledge read each hit's
title with a statement of its own (a round trip each on PostgreSQL), where the titles of all the hits are now one
statement, as searchKnowledge's versions were already. The answers are unchanged: each hit's title (its file name's stem
when the document has no heading), path and line. On both backends, over MCP."""

from __future__ import annotations

from pathlib import Path

import pytest

from statements_world import world

pytestmark = pytest.mark.anyio

GRANTED = ("beta", "gamma")  # alice's projects in the large vault, with alpha
PER_PROJECT = 5  # 15 hits: one statement of the SQLite engine's text reads (16 documents each)


def small(vault: Path) -> None:
    (vault / "alpha").mkdir(parents=True)
    (vault / "alpha" / "doc-000.md").write_text("# Alpha 0\n\nThe walrus sings.\n", encoding="utf-8")


def large(vault: Path) -> None:
    """Five matching documents in each of alpha, beta and gamma (the last without a heading)."""
    for project in ("alpha", *GRANTED):
        (vault / project).mkdir(parents=True, exist_ok=True)
        for i in range(PER_PROJECT):
            head = "" if i % 5 == 4 else f"# {project.title()} {i}\n\n"
            (vault / project / f"doc-{i:03d}.md").write_text(f"{head}The walrus sings.\n", encoding="utf-8")


def _expected_title(project: str, i: int) -> str:
    return f"doc-{i:03d}" if i % 5 == 4 else f"{project.title()} {i}"


async def test_search_knowledge_runs_as_many_statements_for_many_hits_as_for_one(
        store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    xmemo_args = {"query": "walrus", "limit": 100}
    with world(tmp_path, store_url, monkeypatch, small, large, GRANTED) as (url, served):
        one, few = await served.called(url, "search_knowledge", xmemo_args)
        sasha_one, sasha_few = await served.called(url, "searchKnowledge", {"query": "walrus"})
        assert [(r["location"], r["title"]) for r in one["results"]] == [("alpha/doc-000.md", "Alpha 0")]
        assert len(sasha_one["results"]) == 1
        served.grown()
        many, ran = await served.called(url, "search_knowledge", xmemo_args)
        sasha_many, sasha_ran = await served.called(url, "searchKnowledge", {"query": "walrus"})
    assert [(r["location"], r["title"], r["line"]) for r in many["results"]] == [
        (f"{project}/doc-{i:03d}.md", _expected_title(project, i), 1 if i % 5 == 4 else 3)
        for project in ("alpha", *GRANTED) for i in range(PER_PROJECT)]
    assert len(sasha_many["results"]) == 3 * PER_PROJECT
    assert ran == few, (ran, few)
    assert sasha_ran == sasha_few, (sasha_ran, sasha_few)
