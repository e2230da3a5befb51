"""Links and context through the REST door on both backends, over the vault of tests/links_world.py: the same
answers as the MCP tools, the same confinement (a hidden project reads as a missing one), memories as a start."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from links_world import opened_world
from mcp_world import World, serve_world
from notewell.access.principal import LOCAL_OWNER
from notewell.indexer import sync


@pytest.fixture
def world(tmp_path: Path, store_url: str) -> Iterator[World]:
    yield from opened_world(tmp_path, store_url)


def _get(base: str, token: str, route: str, **params: Any) -> httpx.Response:
    return httpx.get(f"{base}{route}", params=params, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def test_document_links_route_pages_and_confines(world: World) -> None:
    with serve_world(world) as server:
        base = server.url.removesuffix("/mcp") + "/api/v1"
        mia = _get(base, world.tokens["mia"], "/projects/team/documents/notes/review.md/links", limit=4)
        rest = _get(base, world.tokens["mia"], "/projects/team/documents/notes/review.md/links", limit=4, offset=8)
        hidden = _get(base, world.tokens["mia"], "/projects/secret/documents/plan.md/links")
        missing = _get(base, world.tokens["mia"], "/projects/secret/documents/none.md/links")
        bad = _get(base, world.tokens["mia"], "/projects/team/documents/notes/review.md/links", direction="up")
        text = _get(base, world.tokens["mia"], "/projects/team/documents/notes/review.md")  # the document itself
    assert mia.status_code == 200, mia.text
    page = mia.json()
    assert page["path"] == "team/notes/review.md" and page["outgoingTotal"] == 9 and page["backlinksTotal"] == 0
    assert [o["target"] for o in page["outgoing"]] == ["pricing-policy", "Kestrel Logistics", "kestrel logistics",
                                                       "team/plans/plan.md"]
    assert page["next"] and "offset=4" in page["next"] and 'rel="next"' in mia.headers["link"]
    assert [o["line"] for o in rest.json()["outgoing"]] == [8] and rest.json()["next"] is None
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["detail"].replace("plan.md", "none.md") == missing.json()["detail"]
    assert bad.status_code == 422
    assert text.status_code == 200 and text.json()["text"].startswith("# Q2 review")


def test_document_links_route_says_when_a_note_passed_the_indexs_bound(world: World) -> None:
    """A note of 1,105 links: the index keeps its first 1,000, and outgoingCut says so; one of 999 is not cut."""
    (world.vault / "team" / "crowded.md").write_text("".join(f"[[far-{n:04d}]]\n" for n in range(1105)),
                                                     encoding="utf-8")
    (world.vault / "team" / "roomy.md").write_text("".join(f"[[far-{n:04d}]]\n" for n in range(999)),
                                                   encoding="utf-8")
    sync(world.runtime.settings, world.runtime.store)
    with serve_world(world) as server:
        base = server.url.removesuffix("/mcp") + "/api/v1"
        crowded = _get(base, world.tokens["mia"], "/projects/team/documents/crowded.md/links", direction="outgoing")
        roomy = _get(base, world.tokens["mia"], "/projects/team/documents/roomy.md/links", direction="outgoing")
    assert crowded.status_code == roomy.status_code == 200, crowded.text
    assert crowded.json()["outgoingTotal"] == 1000 and crowded.json()["outgoingCut"] is True
    assert roomy.json()["outgoingTotal"] == 999 and roomy.json()["outgoingCut"] is False


def test_context_route_starts_from_a_path_a_query_or_a_memory(world: World) -> None:
    with serve_world(world) as server:
        base = server.url.removesuffix("/mcp") + "/api/v1"
        token = world.tokens["mia_all"]
        made = httpx.post(f"{base}/memories", json={"content": "Acme renews in May; see `team/clients/acme.md`.",
                                                    "project": "~mia", "path": "notes"},
                          headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert made.status_code == 201, made.text
        by_path = _get(base, token, "/context", path="team/clients/acme.md", maxTokens=500)
        by_ref = _get(base, token, "/context", ref=made.json()["memory"]["ref"], depth=1)
        none = _get(base, token, "/context")
        both = _get(base, token, "/context", path="team/clients/acme.md", query="acme")
        misspelt = _get(base, token, "/context", path="team/clients/acme.md", max_tokens=500)
        stranger = _get(base, token, "/projects/team/documents/notes/review.md/links", colour="blue")
    assert by_path.status_code == 200, by_path.text
    assert misspelt.status_code == 400 and misspelt.json()["field"] == "max_tokens"  # was answered, unlimited
    assert misspelt.json()["detail"].endswith("is not a parameter of GET /context; did you mean maxTokens?")
    assert stranger.status_code == 400 and stranger.json()["field"] == "colour"
    assert stranger.json()["detail"].endswith("it takes direction, limit, offset")
    got = by_path.json()
    assert got["tokensUsed"] <= 500 and got["items"][0]["why"] == "the document asked for"
    items = [(i["kind"], i["ref"], i["why"], i["distance"]) for i in by_ref.json()["items"]]
    assert items[0][0] == "memory" and items[0][2] == "the memory asked for"
    assert ("document", "team/clients/acme.md", "named by the memory (line 1)", 1) in items
    assert ("document", "team/notes/review.md", "links to team/clients/acme.md at line 3", 2) not in items  # depth 1
    assert none.status_code == both.status_code == 400


def test_a_backlink_from_a_hidden_document_is_not_counted(world: World) -> None:
    with serve_world(world) as server:
        base = server.url.removesuffix("/mcp") + "/api/v1"
        before = _get(base, world.tokens["mia"], "/projects/team/documents/notes/review.md/links").json()
        admin = _get(base, world.tokens["ada"], "/projects/team/documents/notes/review.md/links").json()
    shutil.rmtree(world.vault / "secret")
    world.runtime.indexing.sync()
    with serve_world(world) as server:
        base = server.url.removesuffix("/mcp") + "/api/v1"
        after = _get(base, world.tokens["mia"], "/projects/team/documents/notes/review.md/links").json()
    assert admin["backlinksTotal"] == 1 and [b["source"] for b in admin["backlinks"]] == ["secret/plan.md"]
    assert before == after


def test_memory_answers_name_only_readable_documents(world: World) -> None:
    """REST's recall and context pack carry the documents a memory is tied to, as the MCP tools do: the ones
    in ``secret`` only to a reader of secret."""
    admin = world.runtime.administration
    scopes = ["knowledge:read", "memory:read", "memory:write"]
    ada = admin.mint_token(LOCAL_OWNER, "ada@example.test", scopes).secret
    world.runtime.memory.remember(world.runtime.authentication.authenticate(ada),
                                  "Kestrel terms: see team/pricing-policy.md and secret/plan.md.", project="team")
    with serve_world(world) as server:
        base = server.url.removesuffix("/mcp") + "/api/v1"
        answers = {who: (_get(base, token, "/memories/recall", q="kestrel terms").json()["results"][0]["documents"],
                         _get(base, token, "/memories/context", q="kestrel terms").json()["items"][0]["documents"])
                   for who, token in (("ada", ada), ("mia", world.tokens["mia_all"]))}
    assert answers["ada"] == (["secret/plan.md", "team/pricing-policy.md"],) * 2
    assert answers["mia"] == (["team/pricing-policy.md"],) * 2
