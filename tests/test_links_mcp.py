"""Links and backlinks through the MCP door on both backends (getLinks, buildContext, the links resource;
docs/links.md), over the vault of tests/links_world.py: the same name in two folders, spaces, non-ASCII, case,
anchors, a fenced block, and a project ``secret`` that mia may not read, which links into ``team`` and is
linked from it. Every answer mia gets must be the one she would get if ``secret`` did not exist at all, byte
for byte.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import MCPError

from conftest import make_vault
from links_world import FILES, links_world, opened_world
from mcp_world import World, connect, serve_world, served_vault
from notewell.access.principal import LOCAL_OWNER
from notewell.indexer import sync
from notewell.runtime import Runtime, open_runtime
from notewell.services.link_context import LinkContext
from notewell.services.token_count import count_tokens
from notewell.vault.scan import Subtrees

pytestmark = pytest.mark.anyio


@pytest.fixture
def world(tmp_path: Path, store_url: str) -> Iterator[World]:
    yield from opened_world(tmp_path, store_url)


async def _call(url: str, token: str, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    async with connect(url, token) as client:
        result = await client.call_tool(tool, args)
        return result.is_error, result.content[0].text  # type: ignore[union-attr]


async def _links(url: str, token: str, path: str, **more: Any) -> dict[str, Any]:
    failed, text = await _call(url, token, "getLinks", {"path": path, **more})
    assert not failed, text
    return json.loads(text)  # type: ignore[no-any-return]


def _outgoing(answer: dict[str, Any]) -> list[tuple[int, str, str, str, str | None]]:
    return [(o["line"], o["kind"], o["target"], o["anchor"], o["path"]) for o in answer["outgoing"]]


async def test_the_resolution_rules_through_get_links(world: World) -> None:
    with serve_world(world) as server:
        got = await _links(server.url, world.tokens["ada"], "team/notes/review.md")
    assert _outgoing(got) == [
        (2, "wikilink", "pricing-policy", "", "team/pricing-policy.md"),
        (2, "wikilink", "Kestrel Logistics", "", "team/clients/Kestrel Logistics.md"),
        (2, "wikilink", "kestrel logistics", "Terms", "team/clients/Kestrel Logistics.md"),
        (3, "markdown", "team/plans/plan.md", "goals", "team/plans/plan.md"),
        (3, "mention", "clients/acme.md", "", "team/clients/acme.md"),  # `clients/none.md` names nothing: no link
        (4, "markdown", "secret/plan.md", "", "secret/plan.md"),  # ada may read secret
        (4, "markdown", "secret/lost.md", "", None),
        (4, "wikilink", "Café Menu", "", "team/menus/Café Menu.md"),
        (8, "wikilink", "plan", "", None),  # plans/plan.md and other/plan.md: ambiguous, so unresolved
    ]
    assert got["outgoing"][1]["label"] == "Kestrel" and got["outgoingTotal"] == 9
    assert got["outgoing"][0]["snippet"].startswith("See [[pricing-policy]]")


async def test_backlinks_list_line_and_snippet(world: World) -> None:
    with serve_world(world) as server:
        got = await _links(server.url, world.tokens["ada"], "team/pricing-policy.md", direction="backlinks")
    assert got["outgoing"] == [] and got["backlinksTotal"] == 2
    assert [(b["path"], b["line"], b["kind"]) for b in got["backlinks"]] == [
        ("team/clients/Kestrel Logistics.md", 3, "wikilink"), ("team/notes/review.md", 2, "wikilink")]


async def test_a_hidden_project_reads_exactly_as_a_missing_one(world: World, tmp_path: Path) -> None:
    token = world.tokens["mia"]
    with serve_world(world) as server:
        review = await _links(server.url, token, "team/notes/review.md")
        raw = await _call(server.url, token, "getLinks", {"path": "team/notes/review.md"})
        asked = [await _call(server.url, token, "getLinks", {"path": p}) for p in ("secret/plan.md", "secret/nope.md")]
        context = await _call(server.url, token, "buildContext", {"path": "team/notes/review.md", "depth": 2})
        admin_sees = await _links(server.url, world.tokens["ada"], "team/notes/review.md")
    assert next(o for o in review["outgoing"] if o["target"] == "secret/plan.md")["path"] is None
    assert review["backlinksTotal"] == 0 and review["backlinks"] == []
    assert admin_sees["backlinksTotal"] == 1  # secret/plan.md links to the review: ada sees it
    assert asked[0] == (True, asked[1][1].replace("secret/nope.md", "secret/plan.md"))
    shutil.rmtree(world.vault / "secret")
    world.runtime.indexing.sync()
    with serve_world(world) as server:
        assert await _call(server.url, token, "getLinks", {"path": "team/notes/review.md"}) == raw
        assert await _call(server.url, token, "buildContext", {"path": "team/notes/review.md", "depth": 2}) == context
    assert not any(i["ref"].startswith("secret/") for i in json.loads(context[1])["items"])


async def test_a_rename_and_a_delete_re_resolve_through_the_watchers_sync(world: World) -> None:
    vault, rt = world.vault, world.runtime

    def changed(*paths: str) -> None:  # what the watcher does with the paths it saw change
        sync(rt.settings, rt.store, only=Subtrees(list(paths)))

    (vault / "team" / "archive").mkdir()
    (vault / "team/pricing-policy.md").rename(vault / "team/archive/pricing-policy.md")
    changed("team/pricing-policy.md", "team/archive/pricing-policy.md")
    with serve_world(world) as server:
        moved = await _links(server.url, world.tokens["mia"], "team/notes/review.md")
        back = await _links(server.url, world.tokens["mia"], "team/archive/pricing-policy.md")
    assert _outgoing(moved)[0][4] == "team/archive/pricing-policy.md"  # the only one of that name: found again
    assert back["backlinksTotal"] == 2
    (vault / "team/archive/pricing-policy.md").rename(vault / "team/prices.md")
    (vault / "team/plans/plan.md").unlink()
    (vault / "team/clients/acme.md").unlink()
    changed("team/archive", "team/prices.md", "team/plans/plan.md", "team/clients/acme.md")
    with serve_world(world) as server:
        gone = await _links(server.url, world.tokens["mia"], "team/notes/review.md")
    assert _outgoing(gone)[0] == (2, "wikilink", "pricing-policy", "", None)  # renamed away: unresolved
    assert (3, "markdown", "team/plans/plan.md", "goals", None) in _outgoing(gone)  # deleted: unresolved
    assert (8, "wikilink", "plan", "", "team/other/plan.md") in _outgoing(gone)  # no longer ambiguous
    assert all(o[1] != "mention" for o in _outgoing(gone))  # a mention of nothing is no link
    (vault / "team/pricing-policy.md").write_text("# A new policy\n")
    changed("team/pricing-policy.md")
    with serve_world(world) as server:
        again = await _links(server.url, world.tokens["mia"], "team/notes/review.md")
    assert _outgoing(again)[0][4] == "team/pricing-policy.md"


async def test_get_links_pages_and_refuses_bad_arguments(world: World) -> None:
    with serve_world(world) as server:
        first = await _links(server.url, world.tokens["ada"], "team/notes/review.md", limit=4)
        second = await _links(server.url, world.tokens["ada"], "team/notes/review.md", limit=4, offset=4)
        outgoing_only = await _links(server.url, world.tokens["ada"], "team/notes/review.md", direction="outgoing")
        async with connect(server.url, world.tokens["ada"]) as client:
            for args, field in (({"path": "team/notes/review.md", "limit": 0}, "limit"),
                                ({"path": "team/notes/review.md", "direction": "sideways"}, "direction"),
                                ({}, "path")):
                with pytest.raises(MCPError) as err:
                    await client.call_tool("getLinks", args)
                assert err.value.error.data["argument"] == field  # type: ignore[index]
            with pytest.raises(MCPError) as err:
                await client.call_tool("buildContext", {"path": "team/notes/review.md", "query": "plan"})
            assert err.value.error.data["argument"] == "path"  # type: ignore[index]
            with pytest.raises(MCPError) as err:
                await client.call_tool("buildContext", {"path": "team/notes/review.md", "depth": 4})
            assert err.value.error.data["argument"] == "depth"  # type: ignore[index]
    assert first["hasMore"] and first["nextOffset"] == 4 and len(first["outgoing"]) == 4
    assert [o["line"] for o in second["outgoing"]] == [3, 4, 4, 4]  # the mention of nothing is no link
    # one direction asked for: the other list is left out, not its count
    assert outgoing_only["backlinks"] == [] and outgoing_only["backlinksTotal"] == first["backlinksTotal"] > 0


async def test_pages_ended_early_by_the_bound_skip_no_link_of_either_list(world: World) -> None:
    """300 long links out of a hub and 250 notes linking to it: a page of 200 is over 32 KB, so it ends early
    with the same count taken from each list, and following nextOffset gives every link of both once."""
    long = "x" * 300
    (world.vault / "team" / "hub.md").write_text(
        "".join(f"[[target-{n:03d}-{long}|label {n} {long}]] and [m{n}](missing-{n}.md)\n" for n in range(300)),
        encoding="utf-8")
    for n in range(250):
        (world.vault / "team" / "spokes" / f"spoke-{n:03d}.md").parent.mkdir(exist_ok=True)
        (world.vault / "team" / "spokes" / f"spoke-{n:03d}.md").write_text(f"{long}\nsee [[hub]]\n", encoding="utf-8")
    sync(world.runtime.settings, world.runtime.store)
    outgoing: list[tuple[int, str]] = []
    backlinks: list[str] = []
    offset, pages = 0, 0
    with serve_world(world) as server:
        while True:
            failed, text = await _call(server.url, world.tokens["mia"], "getLinks",
                                       {"path": "team/hub.md", "limit": 200, "offset": offset})
            assert not failed and len(text.encode()) <= 32 * 1024
            page = json.loads(text)
            outgoing += [(o["line"], o["target"]) for o in page["outgoing"]]
            backlinks += [b["path"] for b in page["backlinks"]]
            pages += 1
            if not page["hasMore"]:
                break
            assert page["nextOffset"] == offset + max(len(page["outgoing"]), len(page["backlinks"]))
            offset = page["nextOffset"]
    assert pages > 3  # pages were ended early by the bound, not only by the limit
    assert len(outgoing) == len(set(outgoing)) == 600
    assert sorted(backlinks) == [f"team/spokes/spoke-{n:03d}.md" for n in range(250)]


async def test_a_note_past_the_indexs_bound_of_links_says_so(world: World) -> None:
    """The index keeps a note's first 1,000 links: getLinks (and the links resource) on a note of 1,105 says its
    list stops there and names readDoc for the rest; a note of 999 says nothing (docs/links.md)."""
    (world.vault / "team" / "crowded.md").write_text("".join(f"[[far-{n:04d}]]\n" for n in range(1105)),
                                                     encoding="utf-8")
    (world.vault / "team" / "roomy.md").write_text("".join(f"[[far-{n:04d}]]\n" for n in range(999)),
                                                   encoding="utf-8")
    sync(world.runtime.settings, world.runtime.store)
    with serve_world(world) as server:
        crowded = await _links(server.url, world.tokens["mia"], "team/crowded.md", limit=200, offset=900)
        roomy = await _links(server.url, world.tokens["mia"], "team/roomy.md", limit=200, offset=900)
        async with connect(server.url, world.tokens["mia"]) as client:
            read = await client.read_resource("notewell://doc/team/crowded.md/links")
    assert crowded["outgoingTotal"] == 1000 and crowded["outgoing"][-1]["target"] == "far-0999"
    assert crowded["hasMore"] is False and crowded["truncated"] is True
    assert crowded["note"] == ("This note holds 1,000 links or more; the index keeps only its first 1,000, so "
                               "outgoing and outgoingTotal stop there: read the note itself (readDoc) for the rest.")
    assert json.loads(read.contents[0].text)["note"] == crowded["note"]  # type: ignore[union-attr]
    assert roomy["outgoingTotal"] == 999 and "note" not in roomy and "truncated" not in roomy


async def test_build_context_follows_links_and_says_why(world: World) -> None:
    with serve_world(world) as server:
        failed, text = await _call(server.url, world.tokens["mia"], "buildContext",
                                   {"path": "team/clients/acme.md", "depth": 1, "max_tokens": 2000})
        _, deeper = await _call(server.url, world.tokens["mia"], "buildContext",
                                {"path": "team/clients/acme.md", "depth": 2, "max_tokens": 2000})
        _, query = await _call(server.url, world.tokens["mia"], "buildContext", {"query": "maximum discount"})
    assert not failed, text
    got = json.loads(text)
    assert [(i["ref"], i["why"], i["distance"]) for i in got["items"]] == [
        ("team/clients/acme.md", "the document asked for", 0),
        ("team/notes/review.md", "links to team/clients/acme.md at line 3", 1)]
    assert got["tokens_used"] <= 2000 and "[team/notes/review.md]" in got["context"]
    reached = {i["ref"]: i["distance"] for i in json.loads(deeper)["items"]}
    assert reached["team/pricing-policy.md"] == 2 and reached["team/plans/plan.md"] == 2
    assert "secret/plan.md" not in reached
    items = json.loads(query)["items"]
    assert items[0]["ref"] == "team/pricing-policy.md" and items[0]["why"] == "matches the query (line 3)"
    assert {"team/notes/review.md", "team/clients/Kestrel Logistics.md"} <= {i["ref"] for i in items}


async def test_build_context_counts_hops_from_a_memory_and_brings_the_memories_about_a_document(
        world: World) -> None:
    """A memory's documents are one hop from it (depth 0: the memory alone; depth 1: no document two hops away);
    a document brings the memories about it one hop further, saying how; a ref past its length is refused."""
    rt, mia = world.runtime, world.tokens["mia_all"]
    about = rt.memory.remember(LOCAL_OWNER, "Acme pays in 60 days.", project="team", about="team/clients/acme.md")
    with serve_world(world) as server:
        contexts = [json.loads((await _call(server.url, mia, "buildContext", {"ref": about.memory.ref, "depth": d}))[1])
                    for d in (0, 1, 2)]
        _, from_doc = await _call(server.url, mia, "buildContext", {"path": "team/clients/acme.md"})
        async with connect(server.url, mia) as client:
            with pytest.raises(MCPError) as err:
                await client.call_tool("buildContext", {"ref": "m" * 400_000})
    assert [(i["ref"], i["distance"]) for i in contexts[0]["items"]] == [(about.memory.ref, 0)]
    assert [(i["ref"], i["why"], i["distance"]) for i in contexts[1]["items"]] == [
        (about.memory.ref, "the memory asked for", 0), ("team/clients/acme.md", "the memory is about it", 1)]
    assert {i["ref"]: i["distance"] for i in contexts[2]["items"]}["team/notes/review.md"] == 2
    assert all(i["distance"] <= 2 for i in contexts[2]["items"])
    assert (about.memory.ref, "about team/clients/acme.md", 1) in [
        (i["ref"], i["why"], i["distance"]) for i in json.loads(from_doc)["items"]]
    assert err.value.error.data["argument"] == "ref" and len(str(err.value)) < 300  # type: ignore[index]


def _context_over(tmp_path: Path, store_url: str, files: dict[str, str], **start: Any) -> LinkContext:
    """buildContext as the owner, over a vault of ``files`` indexed into a fresh store."""
    rt = open_runtime(str(make_vault(tmp_path, files)), store_url)
    try:
        rt.indexing.sync()
        return rt.link_context.build_context(LOCAL_OWNER, **start)
    finally:
        rt.close()


async def test_a_query_starts_from_the_documents_that_match_it_best(tmp_path: Path, store_url: str) -> None:
    """Not in path order: the document about zebras (most lines, the word in its name) comes first, though
    five others that name a zebra once sort before it."""
    files = {f"team/aa{n}.md": f"# Note {n}\n\nA zebra passed by.\n" for n in range(1, 7)}
    files["team/zz-zebra.md"] = "# Zebras\n\nA zebra has stripes.\nEvery zebra differs.\nZebra foals stay close.\n"
    found = _context_over(tmp_path, store_url, files, query="zebra", depth=0)
    assert [(i.ref, i.why) for i in found.items][:2] == [
        ("team/zz-zebra.md", "matches the query (line 1 and 3 more)"), ("team/aa1.md", "matches the query (line 3)")]


def test_a_document_that_links_where_the_start_links_says_so(tmp_path: Path, store_url: str) -> None:
    """Two notes about the same client: from one, the other is two hops away (its link to the client is a
    backlink of the client's page), and its reason names what they share."""
    files = {"team/review.md": "# Review\n\nAbout [[kestrel]].\n", "team/kestrel.md": "# Kestrel\n",
             "team/meeting.md": "# Meeting\n\nWith [Kestrel](kestrel.md).\n"}
    found = _context_over(tmp_path, store_url, files, path="team/review.md", depth=2)
    assert [(i.ref, i.why, i.distance) for i in found.items] == [
        ("team/review.md", "the document asked for", 0), ("team/kestrel.md", "linked from team/review.md line 3", 1),
        ("team/meeting.md", "links to team/kestrel.md at line 3, as team/review.md does", 2)]


@pytest.fixture(scope="module")
def context_runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    """One indexed copy of the vault for every example of the property (SQLite: the walk is the same on both)."""
    tmp = tmp_path_factory.mktemp("context")
    rt = open_runtime(str(make_vault(tmp, FILES)), str(tmp / "index.db"))
    rt.indexing.sync()
    yield rt
    rt.close()


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=50, max_value=1500), st.integers(min_value=0, max_value=3),
       st.sampled_from(["team/notes/review.md", "team/pricing-policy.md", "team/clients/acme.md"]))
def test_build_context_never_exceeds_its_budget(context_runtime: Runtime, max_tokens: int, depth: int,
                                                start: str) -> None:
    found = context_runtime.link_context.build_context(LOCAL_OWNER, path=start, depth=depth, max_tokens=max_tokens)
    assert found.tokens_used == count_tokens(found.text) <= max_tokens
    assert all(item.distance <= depth for item in found.items)
    assert (found.items and found.items[0].ref == start) or found.left_out[0].ref == start


async def test_the_links_resource_answers_as_get_links_and_hides_as_missing(world: World) -> None:
    with serve_world(world) as server:
        async with connect(server.url, world.tokens["mia"]) as client:
            listed = await client.list_resource_templates()
            assert [t.uri_template for t in listed.resource_templates] == ["notewell://doc/{path}/links"]
            read = await client.read_resource("notewell://doc/team/clients/Kestrel%20Logistics.md/links")
            assert read.contents[0].mime_type == "application/json"
            tool = await client.call_tool("getLinks", {"path": "team/clients/Kestrel Logistics.md"})
            assert read.contents[0].text == tool.content[0].text  # type: ignore[union-attr]
            refusals = []
            for uri in ("notewell://doc/secret/plan.md/links", "notewell://doc/secret/none.md/links"):
                with pytest.raises(MCPError) as err:
                    await client.read_resource(uri)
                refusals.append((err.value.error.code, err.value.error.message.replace(uri, "<uri>")))
            assert refusals[0] == refusals[1] == (-32002, "Resource not found: <uri>")


async def test_the_running_watcher_re_resolves_a_rename(tmp_path: Path, store_url: str) -> None:
    """`notewell serve`'s own watcher (served_vault): a renamed target's links follow within its second (10 s
    allowed on a loaded machine), and a deleted one leaves them unresolved."""
    world = links_world(tmp_path, store_url)
    token, vault = world.tokens["mia"], world.vault
    world.runtime.close()

    async def until(expected: str | None, within: float = 10.0) -> float:
        started = time.monotonic()
        while True:
            got = _outgoing(await _links(url, token, "team/notes/review.md"))[0][4]
            if got == expected:
                return time.monotonic() - started
            assert time.monotonic() - started < within, f"still {got}, expected {expected}"
            await anyio.sleep(0.05)

    with served_vault(vault, store_url, watch=True) as url:
        await until("team/pricing-policy.md")
        (vault / "team/pricing-policy.md").rename(vault / "team/plans/pricing-policy.md")
        await until("team/plans/pricing-policy.md")
        (vault / "team/plans/pricing-policy.md").unlink()
        await until(None)


async def test_the_oracle_cites_the_best_documents_neighbours(world: World) -> None:
    admin = world.runtime.administration
    token = admin.mint_token(LOCAL_OWNER, "mia@example.test", ["sessions", "knowledge:read"]).secret
    with serve_world(world) as server:
        async with connect(server.url, token) as client:
            result = await client.call_tool("brain_ask_oracle", {"question": "maximum discount"})
    answer = json.loads(result.content[0].text)  # type: ignore[union-attr]
    cited = [(c["kind"], c["id"].split("#")[0]) for c in answer["citations"]]
    assert cited[0] == ("document", "team/pricing-policy.md")
    assert ("document", "team/clients/Kestrel Logistics.md") in cited[1:]  # it links to the policy
    assert "team/clients/Kestrel Logistics.md) links to team/pricing-policy.md at line 3." in answer["answer"]
    assert not any(path.startswith("secret/") for _, path in cited)
