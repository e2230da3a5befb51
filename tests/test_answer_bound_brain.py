"""The memory and brain tools' answers past the 32 KB bound (answer_bound.py): each cut field's note names a way
to the rest, and following it gets the rest; relevantKnowledge is kept far below the bound where it is made.

Through the MCP door with real tokens, on SQLite and PostgreSQL. Each person has the test's own words and items,
so the tests share one server per backend. Rules of letters of four bytes (U+20000) make answers long in bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from conftest import make_vault
from mcp_world import ServerThread, connect
from notewell.access.principal import LOCAL_OWNER
from notewell.answer_bound import ANSWER_BYTES_MAX, json_bytes
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import open_runtime
from pg import BACKENDS, module_store

pytestmark = pytest.mark.anyio

WIDE = "\U00020000"  # a letter of four bytes in UTF-8, one token
DIGIT = "\U0001d7cf"  # MATHEMATICAL BOLD DIGIT ONE: four bytes, three to a token
SHELF = [f"lib/{'shelf-of-long-named-things/' * 3}doc-{i:02d}.md" for i in range(10)]
LORE_TITLE = "Wombat " + WIDE * 2500  # a document title of some 10 KB
PEOPLE = ("rex", "ava", "rel", "ret", "ora", "ctx")
RELEVANT_BYTES = 6000  # brain_limits.RELEVANT_INJECTION_BYTES, as docs/brain.md gives it


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The served vault on one backend and a token per person (every scope; a read grant on lib and lore)."""
    files = {path: f"# Shelf document {n}\n\nOn the shelf.\n" for n, path in enumerate(SHELF)}
    files["lore/wombat.md"] = f"# {LORE_TITLE}\n\nThe wombat lore of the burrow.\n"
    with module_store(request, tmp_path_factory.mktemp("bound-brain")) as db:
        rt = open_runtime(str(make_vault(tmp_path_factory.mktemp("bound-brain-vault"), files)), db)
        try:
            rt.indexing.sync()
            tokens: dict[str, str] = {}
            for handle in PEOPLE:
                email = f"{handle}@example.test"
                rt.administration.add_user(LOCAL_OWNER, email, "member", handle=handle)
                for project in ("lib", "lore"):
                    rt.administration.grant(LOCAL_OWNER, email, project, "read")
                tokens[handle] = rt.administration.mint_token(
                    LOCAL_OWNER, email, ["knowledge:read", "memory:read", "memory:write", "sessions"]).secret
            with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False))) as running:
                yield {"url": running.url, **tokens}
        finally:
            rt.close()


@pytest.fixture
def as_person(server: dict[str, str]) -> Any:
    def connected(handle: str) -> Any:
        return connect(server["url"], server[handle])
    return connected


async def _call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The answer, checked against the bound; the client has validated it against the tool's output schema."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    assert len(text.encode()) <= ANSWER_BYTES_MAX, (tool, len(text.encode()))
    answer: dict[str, Any] = result.structured_content or {}
    return answer


async def _teach(client: Client, rule: str, **fields: Any) -> str:
    taught = await _call(client, "brain_teach_knowledge", {"rule": rule, **fields})
    assert taught["created"] is True
    return str(taught["id"])


async def test_reflexes_past_the_bound_come_a_page_at_a_time(as_person: Any) -> None:
    """20 reflexes of 6 KB each: the door cut them, its note naming no way to the rest (the tool took no
    argument). Each page keeps within the bound and names the offset of the next; none is missed or repeated."""
    async with as_person("rex") as client:
        made = {await _teach(client, f"Reflex {n:02d}: " + WIDE * 1500, type="reflex") for n in range(20)}
        seen: list[str] = []
        offset = 0
        while True:
            page = await _call(client, "brain_get_user_style", {"offset": offset} if offset else {})
            assert page["peerCard"]["email"] == "rex@example.test"
            seen += [r["id"] for r in page["reflexes"]]
            if not page.get("truncated"):
                break
            offset += len(page["reflexes"])
            assert page["note"].endswith(f"of 20, most confident first; more follow: call brain_get_user_style "
                                         f"again with offset {offset}."), page["note"]
        assert 0 < offset < 20 and len(seen) == len(set(seen)) == 20 and set(seen) == made
        past = await _call(client, "brain_get_user_style", {"offset": 10**30})
        assert past["reflexes"] == [] and past["note"] == "No reflex from offset 1000000000000000000000000000000: " \
                                                          "there are 20 in all.", past


async def test_open_action_items_cut_are_read_whole_by_their_ids(as_person: Any) -> None:
    """Ten action items of 7.6 KB each: brain_start_session's answer passes the bound and its openActionItems are
    cut; the note once gave only answer_bound's general advice (the tool takes no limit). It names buildContext
    with each item's id, which shows each whole."""
    async with as_person("ava") as client:
        rules = {await _teach(client, f"Ship crate {n}: " + WIDE * 1900, type="action_item",
                              tags=["action-item", "for:ava@example.test"]): f"Ship crate {n}: " + WIDE * 1900
                 for n in range(10)}
        started = await _call(client, "brain_start_session", {"clientType": "claude_code"})
        assert started["truncated"] is True and "openActionItems" in started["note"], started["note"]
        assert set(started["openActionItems"]["knowledgeIds"]) == set(rules)
        ids = ", ".join(started["openActionItems"]["knowledgeIds"])
        way = re.search(rf"buildContext with its id \({re.escape(ids)}\) as ref, depth 0 and max_tokens (\d+) shows "
                        "it whole", started["note"])
        assert way, started["note"]
        for ref, rule in rules.items():
            pack = await _call(client, "buildContext", {"ref": ref, "depth": 0, "max_tokens": int(way[1])})
            assert rule in pack["context"] and pack["left_out"] == [], pack["left_out"]


async def test_relevant_knowledge_is_kept_far_below_the_bound(as_person: Any) -> None:
    """Five rules of 600 digits of four bytes: 1,050 tokens together, within the opening injection's 1,200, but
    12 KB of JSON; the injection keeps within RELEVANT_INJECTION_BYTES (it took all five), so the door never cuts
    relevantKnowledge. brain_retrieve_knowledge, for the same prompt and budget, still injects all five."""
    async with as_person("rel") as client:
        made = [await _teach(client, f"Mind the zebra crossing {n} " + DIGIT * 600) for n in range(5)]
        started = await _call(client, "brain_start_session", {"prompt": "zebra crossing"})
        relevant = started["relevantKnowledge"]
        assert json_bytes(relevant["injection"]) <= RELEVANT_BYTES
        assert 0 < len(relevant["knowledgeIds"]) < 5 and set(relevant["knowledgeIds"]) < set(made)
        for ref in relevant["knowledgeIds"]:
            assert f"[{ref}]" in relevant["injection"]
        again = await _call(client, "brain_retrieve_knowledge", {"prompt": "zebra crossing", "limit": 5})
        assert sorted(again["bundle"]["injectedIds"]) == sorted(made)


async def test_a_cut_injection_comes_whole_for_a_smaller_max_tokens(as_person: Any) -> None:
    """Eight rules of 1,900 letters of four bytes and maxTokens 8,000: the injection (four of them) and the bundle
    pass the bound and the injection is cut; its note names a smaller maxTokens, for which it comes whole, each
    line an item of the bundle."""
    async with as_person("ret") as client:
        rules = {await _teach(client, f"Feed the quokka at noon {n} " + WIDE * 1900): f"Feed the quokka at noon {n} "
                 + WIDE * 1900 for n in range(8)}
        cut = await _call(client, "brain_retrieve_knowledge", {"prompt": "quokka", "limit": 8, "maxTokens": 8000})
        assert cut["truncated"] is True and "characters of injection" in cut["note"], cut["note"]
        assert ("brain_retrieve_knowledge again with a smaller maxTokens makes an injection that fits whole"
                in cut["note"]), cut["note"]
        whole = await _call(client, "brain_retrieve_knowledge", {"prompt": "quokka", "limit": 2, "maxTokens": 4000})
        assert "truncated" not in whole and whole["injection"].startswith(cut["injection"])
        assert len(whole["bundle"]["injectedIds"]) == 2
        for item in whole["bundle"]["items"]:
            assert f"{rules[item['id']]} [{item['id']}]" in whole["injection"]


async def test_a_cut_oracle_answer_names_where_each_source_is_whole(as_person: Any) -> None:
    """Three rules of 6 KB and a document titled in 10 KB: the oracle's answer and citations pass the bound and
    are cut; its note once gave answer_bound's general advice (the tool takes no limit). It names the tools that
    give its sources whole: brain_session_search and brain_retrieve_knowledge for the question, readDoc by the
    cited document's path."""
    question = "wombat lore"
    async with as_person("ora") as client:
        rules = {await _teach(client, f"Dig the wombat lore burrow {n} " + WIDE * 1500):
                 f"Dig the wombat lore burrow {n} " + WIDE * 1500 for n in range(3)}
        session = (await _call(client, "brain_start_session", {"prompt": "wombat lore survey"}))["sessionId"]
        told = await _call(client, "brain_ask_oracle", {"question": question})
        assert told["truncated"] is True and "characters of answer" in told["note"], told["note"]
        assert "brain_session_search with the question as query and limit 3" in told["note"], told["note"]
        cited = {kind: [c["id"] for c in told["citations"] if c["kind"] == kind]
                 for kind in ("session", "knowledge", "document")}
        assert cited["session"] == [session] and sorted(cited["knowledge"]) == sorted(rules), cited
        sessions = await _call(client, "brain_session_search", {"query": question, "limit": 3})
        assert [s["sessionId"] for s in sessions["sessions"]] == cited["session"]
        found = await _call(client, "brain_retrieve_knowledge", {"prompt": question, "limit": 3})
        assert [i["id"] for i in found["bundle"]["items"]] == cited["knowledge"]
        assert {i["id"]: i["rule"] for i in found["bundle"]["items"]} == rules
        path = next(ref for ref in cited["document"] if ref.startswith("lore/wombat.md")).split("#L")[0]
        part = await _call(client, "readDoc", {"path": path})
        assert part["text"].startswith(f"# {LORE_TITLE}\n")


async def test_a_pack_whose_lists_pass_the_bound_comes_whole_for_a_smaller_max_tokens(as_person: Any) -> None:
    """Fifty memories each naming ten documents: the pack's items alone pass the bound, so the door cut its context
    as well, and the note gave no way to it. It names recall_context with a smaller max_tokens, whose pack comes
    whole, every memory in its items or its left_out."""
    async with as_person("ctx") as client:
        made = {(await _call(client, "remember", {"content": f"Kiwi note {n}. See " + " and ".join(SHELF) + "."}))[
            "ref"] for n in range(50)}
        cut = await _call(client, "recall_context", {"query": "kiwi", "max_tokens": 100_000})
        assert cut["truncated"] is True and "characters of context" in cut["note"], cut["note"]
        assert "recall_context again with a smaller max_tokens makes a pack that fits whole" in cut["note"]
        pack = await _call(client, "recall_context", {"query": "kiwi", "max_tokens": 1000})
        assert "truncated" not in pack and pack["items"], pack.get("note")
        assert {i["ref"] for i in pack["items"]} | {o["ref"] for o in pack["left_out"]} == made
        for item in pack["items"]:
            assert f"[{item['ref']}]" in pack["context"]  # whole, or ended at a sentence's end (left_out says so)
