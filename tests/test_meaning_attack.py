"""Outside attacks on the tools that find by meaning, through the doors (MCP over HTTP, REST), on both backends.

Each test is a case a hostile tester saw answered wrong; the world is test_meaning_doors' served app (alice and bob,
members with a write grant on apollo, tokens with memory:read, memory:write and sessions).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import run_module
from mcp_world import connect
from test_meaning_doors import DEPLOY, DEPLOY_QUESTION, Served, call, served

pytestmark = pytest.mark.anyio


@pytest.fixture
def world(store_url: str, tmp_path: Path) -> Iterator[Served]:
    with served(tmp_path, store_url) as w:
        yield w


TURNED_AROUND = [  # "A, not B" against "B, not A": 0.84 to 0.95, merged before, the new rule lost
    ("Use pnpm, not npm, for installing packages.", "Use npm, not pnpm, for installing packages."),
    ("Store timestamps in UTC, not local time.", "Store timestamps in local time, not UTC."),
    ("Use Jest and not Vitest for unit tests.", "Use Vitest and not Jest for unit tests."),
    ("Use Postgres, not SQLite.", "Use SQLite, not Postgres.")]


async def test_a_choice_and_the_same_choice_turned_around_are_never_merged(world: Served) -> None:
    alice = world.tokens["alice"]
    first = [await call(world.mcp, alice, "brain_teach_knowledge", {"rule": rule}) for rule, _ in TURNED_AROUND]
    world.embedded()
    for (rule, other), taught in zip(TURNED_AROUND, first, strict=True):
        then = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": other})
        assert then["created"] is True and then["id"] != taught["id"] and "sameMeaning" not in then, (rule, then)
    world.embedded()
    reworded = await call(world.mcp, alice, "brain_teach_knowledge", {  # the same choice said otherwise still merges
        "rule": "Install packages with pnpm rather than npm."})
    assert reworded["id"] == first[0]["id"] and reworded["sameMeaning"] >= 0.80, reworded


async def test_a_server_without_meaning_does_not_describe_recall_as_finding_by_meaning(world: Served) -> None:
    """tools/list on `notewell serve --no-semantic` told agents that recall finds "a memory that says the same thing
    in other words (a local embedding model)", while every answer said it found by words only."""
    async def recall_description() -> str:
        async with connect(world.mcp, world.tokens["alice"]) as client:
            listed = await client.list_tools()
        return next(t.description or "" for t in listed.tools if t.name == "recall")

    assert "by meaning" in await recall_description()
    world.rt.meaning.turn_off("this server runs with --no-semantic")  # as notewell serve --no-semantic does
    described = await recall_description()
    assert "in other words" not in described and "similarity" not in described, described
    assert "finds nothing by meaning" in described
    await call(world.mcp, world.tokens["alice"], "remember", {"content": DEPLOY, "project": "apollo"})
    found = await call(world.mcp, world.tokens["alice"], "recall", {"query": DEPLOY_QUESTION})
    assert found["results"] == [] and "not by meaning" in found["note"]  # the answers said so already


EXCHANGED = [  # two parts exchanged around the words between them: 0.96 to 0.99, merged before, the new rule lost
    ("Copy production data to staging weekly.", "Copy staging data to production weekly."),
    ("Merge main into your branch before opening a PR.", "Merge your branch into main before opening a PR."),
    ("Rebase feature branches on main.", "Rebase main on feature branches."),
    ("Use Redis for sessions and Postgres for orders.", "Use Postgres for sessions and Redis for orders.")]
SAID_IN_ANOTHER_ORDER = [  # the same words in another order that says the same: 0.97 and 0.98, still merged
    ("When memory exceeds 2 GB, restart the worker.", "Restart the worker when memory exceeds 2 GB."),
    ("Encrypt data at rest and in transit.", "Encrypt data in transit and at rest.")]


async def test_a_rule_with_two_parts_exchanged_is_never_merged_with_it(world: Served) -> None:
    alice = world.tokens["alice"]
    first = [await call(world.mcp, alice, "brain_teach_knowledge", {"rule": rule, "type": "reflex"})
             for rule, _ in EXCHANGED + SAID_IN_ANOTHER_ORDER]
    world.embedded()
    for (rule, other), taught in zip(EXCHANGED, first, strict=False):
        then = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": other, "type": "reflex"})
        assert then["created"] is True and then["id"] != taught["id"] and "sameMeaning" not in then, (rule, then)
    for (rule, other), taught in zip(SAID_IN_ANOTHER_ORDER, first[len(EXCHANGED):], strict=True):
        then = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": other, "type": "reflex"})
        assert then["id"] == taught["id"] and then["sameMeaning"] >= 0.80, (rule, then)


async def test_a_rule_for_when_a_build_fails_is_never_merged_with_the_rule_for_when_it_passes(world: Served) -> None:
    """pass and fail are opposites of the guard's list, but "passes" was read as "pass" while "pass" itself lost its
    last s: the trigger "when the build passes" merged into "when the build fails" (0.90), the new rule lost."""
    alice = world.tokens["alice"]
    fails = await call(world.mcp, alice, "brain_teach_knowledge", {
        "trigger": "when the build fails", "rule": "notify the on-call engineer", "type": "reflex"})
    said = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Post in the team channel whenever the nightly build fails", "type": "reflex"})
    world.embedded()
    passes = await call(world.mcp, alice, "brain_teach_knowledge", {
        "trigger": "when the build passes", "rule": "notify the on-call engineer", "type": "reflex"})
    assert passes["created"] is True and passes["id"] != fails["id"] and "sameMeaning" not in passes, passes
    passed = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Post in the team channel whenever the nightly build passes", "type": "reflex"})
    assert passed["created"] is True and passed["id"] != said["id"] and "sameMeaning" not in passed, passed
    world.embedded()
    failed = await call(world.mcp, alice, "brain_teach_knowledge", {  # another form of the same word still merges
        "rule": "Post in the team channel whenever the nightly build has failed", "type": "reflex"})
    assert failed["id"] == said["id"] and failed["sameMeaning"] >= 0.80, failed


async def test_a_period_of_any_length_lists_the_sessions_it_holds(world: Served) -> None:
    """docs/brain.md: "at most 36,525 days (a hundred years) whatever N"; a count of 10 digits or more was read as a
    topic word, and "the last 99999999999 weeks" found no session."""
    alice = world.tokens["alice"]
    started = await call(world.mcp, alice, "brain_start_session", {"prompt": "tune the flaky checkout test",
                                                                    "projectId": "apollo"})
    for query in ("the last 99999999999 weeks", "the last 99999999999999999999 days", "the last 10 days"):
        found = await call(world.mcp, alice, "brain_session_search", {"query": query})
        assert [s["sessionId"] for s in found["sessions"]] == [started["sessionId"]], (query, found)
        rest = httpx.get(f"{world.api}/sessions/search", params={"q": query},
                         headers={"Authorization": f"Bearer {alice}"}, timeout=30).json()
        assert [s["session"]["id"] for s in rest["items"]] == [started["sessionId"]], (query, rest)


def test_a_body_field_rest_does_not_take_is_named_with_the_one_meant(world: Served) -> None:
    """brain_teach_knowledge's `type` is REST's `kind`: POST /knowledge with `type` answered only "type: Extra inputs
    are not permitted", naming neither the field REST takes nor how to find it (a query parameter already did)."""
    alice = {"Authorization": f"Bearer {world.tokens['alice']}"}
    taught = httpx.post(f"{world.api}/knowledge", json={"rule": "Pin base images by digest", "type": "reflex"},
                        headers=alice, timeout=30)
    assert taught.status_code == 422 and taught.json()["field"] == "type", taught.text
    assert taught.json()["detail"] == ("type: is not a field of POST /knowledge's body; it takes kind, projectId, "
                                       "rationale, rule, supersedes, tags, trigger"), taught.text
    started = httpx.post(f"{world.api}/sessions", json={"prompt": "pin images", "project": "apollo"}, headers=alice,
                         timeout=30)
    assert started.status_code == 422 and "did you mean projectId?" in started.json()["detail"], started.text
    right = httpx.post(f"{world.api}/knowledge", json={"rule": "Pin base images by digest", "kind": "reflex"},
                       headers=alice, timeout=30)
    assert right.status_code == 201 and right.json()["knowledge"]["kind"] == "reflex", right.text


def test_a_body_holding_a_vast_number_is_refused_saying_why(world: Served) -> None:
    """A number of 5,000 digits (past Python's 4,300) was refused as "not UTF-8 text, or nested too deeply": neither."""
    vast = httpx.post(f"{world.api}/memories", content=b'{"content": "x", "title": ' + b"9" * 5000 + b"}",
                      headers={"Authorization": f"Bearer {world.tokens['alice']}", "Content-Type": "application/json"},
                      timeout=30)
    assert vast.status_code == 400 and vast.json()["field"] == "body", vast.text
    assert "a number of more than 4,300 digits" in vast.json()["detail"], vast.text


NOT_UTF8 = [  # (arguments, the field named): bytes that are not UTF-8 typed on a command line
    (["memory", "recall", "dep\udcffloy"], "query"),
    (["memory", "context", "deploy", "--path-filter", "apollo/\udcff"], "path_filter"),
    (["memory", "add", "caf\udce9"], "CONTENT"), (["brain", "teach", "rule", "--trigger", "t\udcff"], "trigger"),
    (["brain", "sessions", "--query", "x\udcff"], "query")]


def test_a_command_line_text_that_is_not_utf8_is_refused_naming_it(store_url: str, tmp_path: Path) -> None:
    """`notewell memory recall $'dep\\xffloy'` ended as "TypeError: TextInputSequence must be str; Notewell did not
    expect this" (exit 70: the model's tokenizer met the byte), `memory add $'caf\\xe9'` as a UnicodeEncodeError."""
    vault = tmp_path / "vault"
    (vault / "apollo").mkdir(parents=True)
    (vault / "apollo" / "readme.md").write_text("# Apollo\n", encoding="utf-8")
    where = ["--vault", str(vault), "--db", store_url]
    assert run_module("index", *where).returncode == 0
    assert run_module("user", "add", "ada@example.com", "--role", "member", *where).returncode == 0
    for args, field in NOT_UTF8:
        done = run_module(*args, "--as", "ada@example.com", *where)
        assert done.returncode == 1, (args, done.stderr)
        assert done.stderr.startswith(f"error: {field}: is not UTF-8 text (byte 0x"), (args, done.stderr)
