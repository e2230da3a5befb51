"""recall_context's include_documents walks links as buildContext does (services/recall_documents.py), through
the MCP door on both backends, over the vault of tests/links_world.py: the documents one link from the best
passages' documents and from the best memories' documents come in, each saying why; a document mia may not
read (project ``secret``) never does, nor is it named: her answer is the one she gets once ``secret`` is gone,
byte for byte; and the pack never exceeds its budget.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import make_vault
from links_world import FILES, links_world
from mcp_world import World, connect, serve_world
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import Runtime, open_runtime
from notewell.services.token_count import count_tokens

pytestmark = pytest.mark.anyio
MEMORY_SCOPES = ["knowledge:read", "memory:read", "memory:write"]


@pytest.fixture
def world(tmp_path: Path, store_url: str) -> Iterator[World]:
    made = links_world(tmp_path, store_url)
    made.tokens["ada_all"] = made.runtime.administration.mint_token(LOCAL_OWNER, "ada@example.test",
                                                                    MEMORY_SCOPES).secret
    yield made
    made.runtime.close()


async def _tool(url: str, token: str, tool: str, args: dict[str, Any]) -> str:
    async with connect(url, token) as client:
        result = await client.call_tool(tool, args)
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    return text


def _context(query: str, max_tokens: int = 3000) -> dict[str, Any]:
    return {"query": query, "include_documents": True, "max_tokens": max_tokens}


def _labels(answer: str) -> dict[str, str]:
    return {i["ref"]: i["label"] for i in json.loads(answer)["items"]}


async def test_a_passages_neighbours_come_in_saying_why(world: World) -> None:
    with serve_world(world) as server:
        text = await _tool(server.url, world.tokens["mia_all"], "recall_context", _context("maximum discount"))
    got = json.loads(text)
    labels = _labels(text)
    assert next(iter(labels)).startswith("team/pricing-policy.md#L")  # the passage first, then its neighbours
    assert labels["team/clients/Kestrel Logistics.md"] == "links to team/pricing-policy.md at line 3"
    assert labels["team/notes/review.md"] == "links to team/pricing-policy.md at line 2"
    assert "(links to team/pricing-policy.md at line 3)\n# Kestrel" in got["context"]
    assert got["tokens_used"] == count_tokens(got["context"]) <= 3000


async def test_a_memorys_document_and_its_neighbours_come_in(world: World) -> None:
    with serve_world(world) as server:
        remembered = json.loads(await _tool(server.url, world.tokens["ada_all"], "remember", {
            "content": "Onboarding checklist for the small client.", "project": "team",
            "about": "team/clients/acme.md"}))
        text = await _tool(server.url, world.tokens["mia_all"], "recall_context", _context("onboarding checklist"))
    labels = _labels(text)
    assert next(iter(labels)) == remembered["ref"]
    assert labels["team/clients/acme.md"] == f"tied to memory {remembered['ref']}"
    assert labels["team/notes/review.md"] == "links to team/clients/acme.md at line 3"
    assert not any(ref.startswith("secret/") for ref in labels)


async def test_a_hidden_neighbour_is_never_reached_nor_named(world: World) -> None:
    """secret/plan.md links to the review and the review links to it; a memory of team is about it. Ada may
    read secret and gets it; mia's answer is exactly the one she gets once secret is gone."""
    with serve_world(world) as server:
        await _tool(server.url, world.tokens["ada_all"], "remember", {
            "content": "The ambiguous plan link needs fixing.", "project": "team", "about": "secret/plan.md"})
        ada = await _tool(server.url, world.tokens["ada_all"], "recall_context", _context("ambiguous"))
        mia = await _tool(server.url, world.tokens["mia_all"], "recall_context", _context("ambiguous"))
    assert _labels(ada)["secret/plan.md"].startswith("tied to memory mem_")  # the walk does reach it for ada
    assert "team/notes/review.md#L3-8" in _labels(mia)
    assert not any(ref.startswith("secret/") for ref in _labels(mia))
    assert "secret/plan.md" not in "".join(_labels(mia).values())
    shutil.rmtree(world.vault / "secret")
    world.runtime.indexing.sync()
    with serve_world(world) as server:
        assert await _tool(server.url, world.tokens["mia_all"], "recall_context", _context("ambiguous")) == mia


async def test_a_small_budget_holds_over_mcp(world: World) -> None:
    with serve_world(world) as server:
        for budget in (50, 120, 400):
            got = json.loads(await _tool(server.url, world.tokens["mia_all"], "recall_context",
                                         _context("maximum discount plan review", budget)))
            assert got["tokens_used"] == count_tokens(got["context"]) <= budget
            assert got["left_out"]


@pytest.fixture(scope="module")
def recall_runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    """One indexed copy of the vault for every example of the property (SQLite: the walk is the same on both)."""
    tmp = tmp_path_factory.mktemp("recall")
    rt = open_runtime(str(make_vault(tmp, FILES)), str(tmp / "index.db"))
    rt.indexing.sync()
    rt.memory.remember(LOCAL_OWNER, "The plan for Kestrel: see team/pricing-policy.md before any discount.",
                       project="team", about="team/clients/Kestrel Logistics.md")
    yield rt
    rt.close()


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=50, max_value=1500),
       st.sampled_from(["plan", "maximum discount", "kestrel plan review", "client", "café goals"]))
def test_recall_context_with_links_never_exceeds_its_budget(recall_runtime: Runtime, max_tokens: int,
                                                            query: str) -> None:
    found = recall_runtime.memory.recall_context(LOCAL_OWNER, query, max_tokens=max_tokens, include_documents=True)
    assert found.tokens_used == count_tokens(found.text) <= max_tokens
    assert len({i.ref for i in found.items}) == len(found.items)


async def test_memory_answers_name_the_documents_the_caller_may_read(world: World) -> None:
    """A memory about Kestrel that names the policy and a secret plan: ada, who reads secret, is told all three;
    mia the two she may read, in recall, search_memory and recall_context alike; a token without knowledge:read
    none; a deleted document is named to no one (hidden or gone: the same answer)."""
    memory_only = world.runtime.administration.mint_token(LOCAL_OWNER, "mia@example.test", ["memory:read"]).secret
    team = ["team/clients/Kestrel Logistics.md", "team/pricing-policy.md"]
    with serve_world(world) as server:
        said = json.loads(await _tool(server.url, world.tokens["ada_all"], "remember", {
            "content": "Kestrel terms: see team/pricing-policy.md and secret/plan.md.", "project": "team",
            "about": "team/clients/Kestrel Logistics.md"}))

        async def named(token: str) -> list[list[str]]:
            answers = [json.loads(await _tool(server.url, token, tool, {"query": "kestrel terms"}))
                       for tool in ("recall", "search_memory")]
            pack = json.loads(await _tool(server.url, token, "recall_context", {"query": "kestrel terms"}))
            assert all(a["results"][0]["ref"] == said["ref"] for a in answers)
            assert pack["items"][0]["ref"] == said["ref"]
            return [a["results"][0]["documents"] for a in answers] + [pack["items"][0]["documents"]]

        assert await named(world.tokens["ada_all"]) == [["secret/plan.md", *team]] * 3
        assert await named(world.tokens["mia_all"]) == [team] * 3
        assert await named(memory_only) == [[]] * 3
        pack = json.loads(await _tool(server.url, world.tokens["mia_all"], "recall_context", {"query": "kestrel"}))
        assert pack["items"][0]["label"].endswith(f" · about {', '.join(team)}")
    (world.vault / "team/pricing-policy.md").unlink()
    world.runtime.indexing.sync()
    with serve_world(world) as server:
        assert await named(world.tokens["mia_all"]) == [team[:1]] * 3
