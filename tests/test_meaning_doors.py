"""Meaning through the doors a user has: MCP over HTTP, REST, the CLI (notewell embed, doctor), on both backends.

A served app runs the embedding runner as `notewell serve` does; a test waits for the queue to empty (a
condition, not a clock) before it asks.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import run_cli, run_module
from mcp_world import ServerThread, connect, embedded
from notewell.access.principal import LOCAL_OWNER
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import Runtime, open_runtime

pytestmark = pytest.mark.anyio

DEPLOY = "We deploy on Tuesdays and Thursdays only, never on Fridays."
DEPLOY_QUESTION = "which weekdays are releases allowed"
ACQUISITION = "Our acquisition target is Kestrel Logistics; the deal closes in March."
SCOPES = ["memory:read", "memory:write", "sessions"]


@dataclass
class Served:
    rt: Runtime
    mcp: str  # the MCP URL
    api: str  # the REST base URL
    tokens: dict[str, str]

    def embedded(self) -> None:
        """Wait until the runner has emptied the queue (at most 60 s)."""
        embedded(self.rt)


@contextmanager
def served(tmp: Path, db: str) -> Iterator[Served]:
    vault = tmp / "vault"
    (vault / "apollo").mkdir(parents=True, exist_ok=True)
    (vault / "apollo" / "readme.md").write_text("# Apollo\n", encoding="utf-8")
    rt = open_runtime(str(vault), db)
    rt.indexing.sync()
    tokens = {}
    for handle in ("alice", "bob"):
        rt.administration.add_user(LOCAL_OWNER, f"{handle}@example.com", "member", handle=handle)
        rt.administration.grant(LOCAL_OWNER, f"{handle}@example.com", "apollo", "write")
        tokens[handle] = rt.administration.mint_token(LOCAL_OWNER, f"{handle}@example.com", SCOPES).secret
    try:
        with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False))) as server:
            yield Served(rt, server.url, server.url.removesuffix("/mcp") + "/api/v1", tokens)
    finally:
        rt.close()


@pytest.fixture
def world(store_url: str, tmp_path: Path) -> Iterator[Served]:
    with served(tmp_path, store_url) as w:
        yield w


async def call(url: str, token: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    async with connect(url, token) as client:
        result = await client.call_tool(name, args)
    assert not result.is_error, result.content
    return result.structured_content  # type: ignore[return-value]


async def test_mcp_and_rest_recall_find_a_paraphrase_by_meaning(world: Served) -> None:
    alice = world.tokens["alice"]
    deploy = (await call(world.mcp, alice, "remember", {"content": DEPLOY, "project": "apollo"}))["ref"]
    await call(world.mcp, alice, "remember", {"content": ACQUISITION, "project": "apollo"})
    world.embedded()
    found = await call(world.mcp, alice, "recall", {"query": DEPLOY_QUESTION})
    top = found["results"][0]
    assert top["ref"] == deploy and top["matched"] == ["meaning"] and top["similarity"] > 0.45
    assert "note" not in found
    strict = await call(world.mcp, alice, "search_memory", {"query": DEPLOY_QUESTION})
    assert strict["results"] == []  # XMemo's strict search stays strict
    rest = httpx.get(f"{world.api}/memories/recall", params={"q": DEPLOY_QUESTION},
                     headers={"Authorization": f"Bearer {alice}"}, timeout=30).json()
    assert rest["results"][0]["memory"]["ref"] == deploy
    assert rest["results"][0]["foundBy"] == ["meaning"] and rest["results"][0]["similarity"] > 0.45
    assert rest["wordsOnly"] is None


async def test_a_paraphrase_outranks_one_shared_word_and_a_query_of_nothing_finds_nothing(world: Served) -> None:
    """An outside probe: "which days can we ship to prod" put the memory about shipping labels (its one shared
    word "ship", similarity 0.31) above the one that answers it by meaning (0.52); and "zzz" or "hmm" found the
    memory "ok" by meaning (0.39, 0.44), as near to it as to any text that says nothing."""
    alice = world.tokens["alice"]
    release = (await call(world.mcp, alice, "remember", {"content": "We release on Tuesdays and Thursdays only.",
                                                          "project": "apollo"}))["ref"]
    labels = (await call(world.mcp, alice, "remember", {
        "content": "Shipping labels are printed by the warehouse team in Lyon.", "project": "apollo"}))["ref"]
    for filler in ("ok", "yes", "todo"):
        await call(world.mcp, alice, "remember", {"content": filler, "project": "apollo"})
    world.embedded()
    found = await call(world.mcp, alice, "recall", {"query": "which days can we ship to prod"})
    assert [r["ref"] for r in found["results"][:2]] == [release, labels], found
    assert found["results"][0]["matched"] == ["meaning"] and found["results"][1]["matched"] == ["words"]
    for junk in ("zzz", "hmm", "xyzzy"):
        assert (await call(world.mcp, alice, "recall", {"query": junk}))["results"] == [], junk
        rest = httpx.get(f"{world.api}/memories/recall", params={"q": junk},
                         headers={"Authorization": f"Bearer {alice}"}, timeout=30).json()
        assert rest["results"] == [], (junk, rest)
    assert [r["ref"] for r in (await call(world.mcp, alice, "recall", {"query": "ok"}))["results"]][:1] != []


async def test_a_rule_whose_memory_is_superseded_or_forgotten_leaves_the_knowledge_listing(world: Served) -> None:
    alice = world.tokens["alice"]
    headers = {"Authorization": f"Bearer {alice}"}
    rule = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": "Prefer structured logging in services",
                                                                  "projectId": "apollo"})
    other = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": "Tag every release in git",
                                                                   "projectId": "apollo"})

    def listed() -> set[str]:
        return {k["ref"] for k in httpx.get(f"{world.api}/knowledge", headers=headers, timeout=30).json()["items"]}

    assert {rule["id"], other["id"]} <= listed()
    await call(world.mcp, alice, "remember", {"content": "A plain memory replacing the logging rule",
                                              "project": "apollo", "supersedes": rule["id"]})
    await call(world.mcp, alice, "forget", {"ref": other["id"], "reason": "we stopped tagging"})
    assert not {rule["id"], other["id"]} & listed()
    found = await call(world.mcp, alice, "brain_retrieve_knowledge", {"prompt": "structured logging services"})
    assert rule["id"] not in [i["id"] for i in found["bundle"]["items"]]
    again = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": "Tag every release in git",
                                                                   "projectId": "apollo"})
    assert again["created"] is True and again["id"] != other["id"]  # the forgotten rule is retired: no dedup

async def test_an_identifier_finds_itself_or_nothing(world: Served) -> None:
    """An error code asked alone never brings a neighbour in meaning (another code): E4013 is at 0.38 from
    the memory about E4012, above the bar a paraphrase needs."""
    alice = world.tokens["alice"]
    code = (await call(world.mcp, alice, "remember", {
        "content": "Error code E4012 means the card issuer declined the charge; ask for another card.",
        "project": "apollo"}))["ref"]
    world.embedded()
    assert [r["ref"] for r in (await call(world.mcp, alice, "recall", {"query": "E4012"}))["results"]] == [code]
    assert (await call(world.mcp, alice, "recall", {"query": "E4013"}))["results"] == []
    found = await call(world.mcp, alice, "recall", {"query": "what does a declined card error mean"})
    assert found["results"][0]["ref"] == code  # a question in words still finds it by meaning

async def test_another_persons_private_memory_never_comes_back_by_meaning(world: Served) -> None:
    alice, bob = world.tokens["alice"], world.tokens["bob"]
    private = (await call(world.mcp, alice, "remember", {"content": DEPLOY, "project": "apollo",
                                                          "private": True}))["ref"]
    home = (await call(world.mcp, alice, "remember", {"content": ACQUISITION}))["ref"]  # alice's home
    world.embedded()
    for query in (DEPLOY_QUESTION, "which company are we buying", DEPLOY, ACQUISITION):
        refs = [r["ref"] for r in (await call(world.mcp, bob, "recall", {"query": query}))["results"]]
        assert private not in refs and home not in refs
        pack = await call(world.mcp, bob, "recall_context", {"query": query})
        assert private not in [i["ref"] for i in pack["items"]] and home not in [i["ref"] for i in pack["items"]]
    mine = [r["ref"] for r in (await call(world.mcp, alice, "recall", {"query": DEPLOY_QUESTION}))["results"]]
    assert mine[0] == private


async def test_a_reworded_rule_reinforces_the_one_taught_before(world: Served) -> None:
    alice = world.tokens["alice"]
    first = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Use react-hook-form with zod for forms, not Formik", "type": "reflex"})
    world.embedded()
    again = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Build forms with react-hook-form and zod rather than Formik", "type": "reflex"})
    assert again["id"] == first["id"] and again["created"] is False and again["sameMeaning"] >= 0.80
    same = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Use react-hook-form with zod for forms, not Formik", "type": "reflex"})
    assert same["id"] == first["id"] and same["created"] is False and "sameMeaning" not in same  # as without a model
    assert same["confidence"] == again["confidence"]  # the very same text again reinforces nothing
    other = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Use TanStack Query for data fetching, not SWR", "type": "reflex"})
    assert other["created"] is True and "sameMeaning" not in other
    world.embedded()
    started = await call(world.mcp, alice, "brain_start_session", {"prompt": "set up the signup form"})
    closed = await call(world.mcp, alice, "brain_report_session_outcome", {
        "sessionId": started["sessionId"], "success": True,
        "learnings": [{"trigger": "when building a form", "rule": "Forms use react-hook-form plus zod, never Formik",
                       "rationale": "team standard", "type": "reflex", "source": "decision"},
                      {"trigger": "when naming branches", "rule": "Prefix branches with the ticket number",
                       "rationale": "links in Jira", "type": "reflex", "source": "decision"}]})
    learnings = closed["learnings"]
    assert learnings["deduplicated"] == 1 and learnings["reinforced"] == [first["id"]]
    assert len(learnings["captured"]) == 1


async def test_a_rule_and_its_opposite_or_another_type_are_never_merged(world: Served) -> None:
    """A correction close in meaning to the rule it corrects (cosine 0.9 and more: the same words but one) is
    kept as a rule of its own, taught or captured at a close, and so is the same rule of another type."""
    alice = world.tokens["alice"]
    freeze = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Freeze the clock in pricing tests", "trigger": "flaky pricing test", "type": "recipe"})
    tabs = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": "Indent Python with tabs",
                                                                  "type": "principle"})
    world.embedded()
    never = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Never freeze the clock in pricing tests", "trigger": "flaky pricing test", "type": "recipe"})
    assert never["created"] is True and never["id"] != freeze["id"] and "sameMeaning" not in never
    anti = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": "Indent Python with tabs",
                                                                  "type": "anti_principle"})
    assert anti["created"] is True and anti["id"] != tabs["id"]
    reworded = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "In pricing tests, freeze the clock", "trigger": "flaky pricing test", "type": "recipe"})
    assert reworded["id"] == freeze["id"] and reworded["created"] is False  # the guard keeps real rewordings
    world.embedded()
    started = await call(world.mcp, alice, "brain_start_session", {"prompt": "fix the flaky pricing test"})
    closed = await call(world.mcp, alice, "brain_report_session_outcome", {
        "sessionId": started["sessionId"], "success": True,
        "learnings": [{"trigger": "when a pricing test is flaky", "type": "recipe", "source": "user_correction",
                       "rule": "Do not freeze the clock in pricing tests; inject a clock instead",
                       "rationale": "a frozen clock hid the daylight-saving bug"}]})
    learnings = closed["learnings"]
    assert freeze["id"] not in learnings["reinforced"] and set(learnings["reinforced"]) <= {never["id"]}
    assert len(learnings["captured"]) + learnings["deduplicated"] == 1

async def test_a_rule_one_common_word_finds_but_unrelated_in_meaning_is_not_injected(world: Served) -> None:
    """An outside probe: "set up the package manager for the frontend" injected two SQL-migration rules, found by
    their "up" alone (similarity -0.07 and 0.00) and ranked first among nothing better."""
    alice = world.tokens["alice"]
    migrations = [await call(world.mcp, alice, "brain_teach_knowledge", {"rule": rule, "type": "reflex"}) for rule in (
        "Every up migration needs a matching down migration", "Write SQL migrations as plain files, one per change")]
    pnpm = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Use pnpm, not npm or yarn, for frontend dependencies", "type": "reflex"})
    world.embedded()
    started = await call(world.mcp, alice, "brain_start_session",
                         {"prompt": "set up the package manager for the frontend"})
    injected = started["relevantKnowledge"]["knowledgeIds"]
    assert pnpm["id"] in injected and not {m["id"] for m in migrations} & set(injected), started["relevantKnowledge"]
    asked = await call(world.mcp, alice, "brain_start_session", {"prompt": "add a down migration for the up one"})
    assert {m["id"] for m in migrations} <= set(asked["relevantKnowledge"]["knowledgeIds"]), asked
    retrieved = await call(world.mcp, alice, "brain_retrieve_knowledge", {"prompt": "up"})  # one word: words decide
    assert migrations[0]["id"] in retrieved["bundle"]["injectedIds"], retrieved
    # a review: with more rules in scope than the nearest in meaning (30), closer in meaning and each sharing one
    # common word ("frontend": "up" is then the rarer, the better by words), a rule words found beyond the nearest
    # had no similarity and passed, and came first; its stored vector says now how far it is
    for package in ("react", "vue", "vite", "eslint", "prettier", "jest", "vitest", "playwright", "storybook",
                    "tailwind", "zod", "axios", "redux", "zustand", "swr", "lodash", "dayjs", "i18next", "sentry",
                    "msw", "webpack", "rollup", "esbuild", "babel", "postcss", "sass", "husky", "commitlint", "turbo",
                    "nx", "pnpm-lock", "typescript", "tsx", "next", "remix", "astro", "svelte", "solid", "preact",
                    "lit"):
        await call(world.mcp, alice, "brain_teach_knowledge", {
            "rule": f"Keep {package} consistent across the frontend app", "type": "reflex"})
    world.embedded()
    crowded = await call(world.mcp, alice, "brain_retrieve_knowledge",
                         {"prompt": "set up the package manager for the frontend"})
    assert not {m["id"] for m in migrations} & set(crowded["bundle"]["injectedIds"]), crowded["bundle"]


async def test_a_prompt_sharing_one_common_word_with_a_rule_injects_nothing_at_the_opening(world: Served) -> None:
    """A prompt unrelated in meaning, found by one shared common word ("clock", similarity 0.08; "Thursday",
    0.27), was given the rule as relevantKnowledge: weak matches (below 0.30) are not injected at the opening,
    while a prompt the rule is about still injects it, and brain_retrieve_knowledge still ranks a weak one."""
    alice = world.tokens["alice"]
    clock = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Freeze the clock in pricing tests", "type": "reflex"})
    days = [await call(world.mcp, alice, "brain_teach_knowledge", {"rule": rule, "type": "reflex"}) for rule in (
        "Deploy on Tuesdays and Thursdays, never on Fridays", "Rotate the staging credentials every Thursday")]
    world.embedded()
    for prompt in ("write a poem about the sea and the clock tower", "book a table for dinner on Thursday"):
        started = await call(world.mcp, alice, "brain_start_session", {"prompt": prompt})
        assert "relevantKnowledge" not in started, (prompt, started["relevantKnowledge"])
    relevant = await call(world.mcp, alice, "brain_start_session", {"prompt": "fix the flaky pricing test"})
    assert relevant["relevantKnowledge"]["knowledgeIds"] == [clock["id"]], relevant["relevantKnowledge"]
    when = await call(world.mcp, alice, "brain_start_session", {"prompt": "which weekdays may we deploy on"})
    assert days[0]["id"] in when["relevantKnowledge"]["knowledgeIds"], when["relevantKnowledge"]
    asked = await call(world.mcp, alice, "brain_retrieve_knowledge", {"prompt": "book a table for dinner on Thursday"})
    assert {d["id"] for d in days} <= set(asked["bundle"]["injectedIds"]), asked["bundle"]


OPPOSITES_ELSEWHERE = [  # seen merged by an outside probe (cosine 0.84 to 0.88): the second rule was lost
    ("Activer le cache en production", "Désactiver le cache en production"),
    ("Aktiviere den Cache in der Produktion", "Deaktiviere den Cache in der Produktion"),
    ("本番環境ではキャッシュを有効にする", "本番環境ではキャッシュを無効にする"),
    ("השתמש ב-UTC לכל חותמות הזמן", "אל תשתמש ב-UTC לחותמות הזמן"),
    ("Usar UTC para todas las marcas de tiempo", "Desactivar UTC para todas las marcas de tiempo")]


async def _never_merged(world: Served, pairs: list[tuple[str, str]], kind: str) -> list[dict[str, Any]]:
    """Each pair's first rule taught and embedded, then its second: a rule of its own each time (never the first
    reinforced); the first rules' answers."""
    alice = world.tokens["alice"]
    first = [await call(world.mcp, alice, "brain_teach_knowledge", {"rule": rule, "type": kind}) for rule, _ in pairs]
    world.embedded()
    for (rule, other), taught in zip(pairs, first, strict=True):
        then = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": other, "type": kind})
        assert then["created"] is True and then["id"] != taught["id"] and "sameMeaning" not in then, (rule, then)
    return first


async def test_a_rule_and_its_opposite_in_another_language_are_never_merged(world: Served) -> None:
    alice = world.tokens["alice"]
    first = await _never_merged(world, OPPOSITES_ELSEWHERE, "reflex")
    reworded = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "En production, activer le cache", "type": "reflex"})
    assert reworded["id"] == first[0]["id"] and reworded["sameMeaning"] >= 0.80  # a rewording still merges


CONDITIONED_OPPOSITES = [  # a negation after a leading condition was not read as one: both "did not forbid"
    ("When deploying, run the smoke tests", "When deploying, never run the smoke tests"),
    ("If a migration fails, retry it", "If a migration fails, do not retry it"),
    ("For payroll exports, write a byte order mark", "For payroll exports, avoid a byte order mark")]


async def test_a_rule_and_its_opposite_after_a_condition_are_never_merged(world: Served) -> None:
    await _never_merged(world, CONDITIONED_OPPOSITES, "reflex")


# both read as forbidding (a stop, and a negation): the first three merged (created false), though "never skip"
# insists on the thing; the model puts the French and German pairs below 0.80, they are kept as the guard's checks
NEGATED_STOPS = [
    ("Skip the smoke tests on staging deploys", "Never skip the smoke tests on staging deploys"),
    ("Avoid running the load tests on a laptop", "Avoid skipping the load tests on a laptop"),
    ("Stop the queue workers before a migration", "Don't stop the queue workers before a migration"),
    ("Évite de lancer la revue de code des fautes de frappe", "Évite de sauter la revue de code des fautes de frappe"),
    ("Die Lint-Prüfung für generierten Code nicht ausführen",
     "Die Lint-Prüfung für generierten Code nicht überspringen")]


# a negation right before the main verb, after the subject, was not read as one: both "did not forbid", merged
MID_SENTENCE_NEGATIONS = [
    ("We push hotfix branches straight to main after the review passes",
     "We never push hotfix branches straight to main after the review passes"),
    ("Our team merges dependency updates on Fridays without a second review",
     "Our team never merges dependency updates on Fridays without a second review"),
    ("The on-call engineer restarts the payment workers by hand after a deploy",
     "The on-call engineer never restarts the payment workers by hand after a deploy"),
    ("Make sure to squash commits before merging a pull request",
     "Make sure to not squash commits before merging a pull request")]


@pytest.mark.parametrize(("pairs", "rewording"), [
    (NEGATED_STOPS, "On staging deploys, skip the smoke tests"),
    (MID_SENTENCE_NEGATIONS, "Push hotfix branches straight to main after the review passes")],
    ids=["a stop negated", "a negation before the verb"])
async def test_a_rule_and_its_opposite_negated_are_never_merged(world: Served, pairs: list[tuple[str, str]],
                                                                  rewording: str) -> None:
    first = await _never_merged(world, pairs, "reflex")
    reworded = await call(world.mcp, world.tokens["alice"], "brain_teach_knowledge", {
        "rule": rewording, "type": "reflex"})
    assert reworded["id"] == first[0]["id"] and reworded["sameMeaning"] >= 0.80  # a rewording of the first still merges


# "no longer" read as forbidding wherever it stood: a rule explained by a thing no longer needed merged with its
# opposite (both "forbade"), and a bound ("no longer than") was kept apart from its rewording
NO_LONGER_OPPOSITES = [
    ("Moment.js is no longer maintained, use date-fns for dates",
     "Moment.js is no longer maintained, do not use date-fns for dates"),
    ("Keep each standup no longer than 15 minutes", "Keep each standup longer than 15 minutes"),
    ("We deploy the web app on Fridays", "We no longer deploy the web app on Fridays"),
    ("The jQuery shim isn't needed anymore, use the fetch API for requests",
     "The jQuery shim isn't needed anymore, do not use the fetch API for requests")]


async def test_no_longer_as_a_bound_or_beside_the_rule_does_not_turn_it_around(world: Served) -> None:
    first = await _never_merged(world, NO_LONGER_OPPOSITES, "reflex")
    for taught, rewording in zip(first, ("Use date-fns for dates since Moment.js is no longer maintained",
                                         "Keep each standup under 15 minutes"), strict=False):
        reworded = await call(world.mcp, world.tokens["alice"], "brain_teach_knowledge", {
            "rule": rewording, "type": "reflex"})
        assert reworded["id"] == taught["id"] and reworded["sameMeaning"] >= 0.80, (rewording, reworded)


QUALIFIED_OTHERWISE = [  # seen merged by an outside probe on both backends (0.85 to 0.89): the second rule was lost
    ("Always run the smoke tests after every deploy", "Seldom run the smoke tests after a deploy"),
    ("Deploy the web app only from a clean working tree", "Deploy the web app from any working tree, clean or dirty"),
    ("Always wrap each migration in a transaction", "Always wrap each migration in a transaction except on MySQL")]


async def test_a_rule_qualified_otherwise_is_never_merged_with_it(world: Served) -> None:
    alice = world.tokens["alice"]
    first = await _never_merged(world, QUALIFIED_OTHERWISE, "heuristic")
    reworded = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "After every deploy, always run the smoke tests", "type": "heuristic"})
    assert reworded["id"] == first[0]["id"] and reworded["sameMeaning"] >= 0.80  # a rewording still merges


SWAPPED_THINGS = [  # one thing swapped for another in a long rule: 0.81 to 0.91, above the dedup threshold
    ("Wrap each integration test in a savepoint and roll it back at the end so the database stays clean",
     "Wrap each integration test in a transaction and roll it back at the end so the database stays clean"),
    ("Cache user sessions in Redis with a one hour expiry so the API servers stay stateless",
     "Cache user sessions in Memcached with a one hour expiry so the API servers stay stateless"),
    ("Run the type checker mypy in strict mode on every pull request before it can be merged",
     "Run the type checker pyright in strict mode on every pull request before it can be merged")]


async def test_a_rule_with_one_thing_swapped_for_another_is_never_merged_with_it(world: Served) -> None:
    alice = world.tokens["alice"]
    first = await _never_merged(world, SWAPPED_THINGS, "heuristic")
    world.embedded()
    for reworded, taught in [  # two names of one thing, or other words of one meaning, still merge
            ("Wrap each integration test in a savepoint and roll it back at the end so the DB stays clean", first[0]),
            ("Cache user sessions in Redis with a one hour expiry so the API hosts stay stateless", first[1])]:
        then = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": reworded, "type": "heuristic"})
        assert then["id"] == taught["id"] and then["sameMeaning"] >= 0.80, (reworded, then)
    for rule, reworded in REWORDED_BY_A_WORD:
        taught = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": rule, "type": "reflex"})
        world.embedded()
        then = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": reworded, "type": "reflex"})
        assert then["id"] == taught["id"] and then["sameMeaning"] >= 0.80, (reworded, then)


REWORDED_BY_A_WORD = [  # a review saw these kept apart by a first version of the swapped-words test (0.84 to 0.95)
    ("Retry failed webhooks after 30 s", "Retry failed webhooks after 30 seconds"),
    ("Time out slow queries after 500 ms", "Time out slow queries after 500 milliseconds"),
    ("Write unit tests for every new endpoint before merging it", "Add unit tests for every new endpoint before "
                                                                 "merging it")]


FORM_RULE = "Use react-hook-form with zod for forms, not Formik"
FORM_QUESTION = "which React library handles form state and validation"
SIGNUP_QUESTION = "creating the registration screen with input validation"


async def test_every_tolerant_tool_says_how_it_found_each_result(world: Served) -> None:
    """recall_context, the brain's retrieval, skills, session search, oracle and start_session, and REST: each
    result names how it was found (words, meaning) and its similarity, as recall does."""
    alice = world.tokens["alice"]
    taught = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": FORM_RULE, "type": "recipe"})
    await call(world.mcp, alice, "remember", {"content": DEPLOY, "project": "apollo"})
    opened = await call(world.mcp, alice, "brain_start_session", {"prompt": "Build the signup form"})
    await call(world.mcp, alice, "brain_report_session_outcome", {
        "sessionId": opened["sessionId"], "success": True, "summary": "Signup form validated with zod schemas"})
    world.embedded()

    def by_meaning(found: dict[str, Any]) -> None:
        assert "meaning" in found["matched"] and found["similarity"] > 0.3, found

    retrieved = await call(world.mcp, alice, "brain_retrieve_knowledge", {"prompt": FORM_QUESTION})
    by_meaning(next(i for i in retrieved["bundle"]["items"] if i["id"] == taught["id"]))
    assert "note" not in retrieved
    late = await call(world.mcp, alice, "brain_retrieve_knowledge", {
        "prompt": FORM_QUESTION, "context": {"sessionId": opened["sessionId"]}})  # closed: nothing recorded
    assert f"session {opened['sessionId']} is closed" in late["note"]
    started = await call(world.mcp, alice, "brain_start_session", {"prompt": FORM_QUESTION})
    found = started["relevantKnowledge"]["found"]
    assert [f["id"] for f in found] == started["relevantKnowledge"]["knowledgeIds"]
    by_meaning(next(f for f in found if f["id"] == taught["id"]))
    sessions = await call(world.mcp, alice, "brain_session_search", {"query": SIGNUP_QUESTION})
    by_meaning(next(s for s in sessions["sessions"] if s["sessionId"] == opened["sessionId"]))
    oracle = await call(world.mcp, alice, "brain_ask_oracle", {"question": FORM_QUESTION})
    by_meaning(next(c for c in oracle["citations"] if c["id"] == taught["id"]))
    pack = await call(world.mcp, alice, "recall_context", {"query": DEPLOY_QUESTION})
    by_meaning(pack["items"][0])
    words = await call(world.mcp, alice, "recall_context", {"query": "Tuesdays"})
    assert words["items"][0]["matched"][0] == "words"
    headers = {"Authorization": f"Bearer {alice}"}
    rest = httpx.get(f"{world.api}/knowledge/retrieve", params={"prompt": FORM_QUESTION}, headers=headers,
                     timeout=30).json()
    item = next(i for i in rest["items"] if i["item"]["ref"] == taught["id"])
    assert "meaning" in item["foundBy"] and item["similarity"] > 0.3 and rest["wordsOnly"] is None
    mcp_item = next(i for i in retrieved["bundle"]["items"] if i["id"] == taught["id"])
    assert mcp_item["similarity"] == item["similarity"]  # one figure through both doors (MCP rounded it to 4)
    rest_sessions = httpx.get(f"{world.api}/sessions/search", params={"q": SIGNUP_QUESTION},
                              headers=headers, timeout=30).json()
    assert rest_sessions["wordsOnly"] is None and "meaning" in rest_sessions["items"][0]["foundBy"]
    rest_pack = httpx.get(f"{world.api}/memories/context", params={"q": DEPLOY_QUESTION}, headers=headers,
                          timeout=30).json()
    assert "meaning" in rest_pack["items"][0]["foundBy"] and rest_pack["wordsOnly"] is None

async def test_without_the_model_recall_answers_by_words_and_says_so(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("NOTEWELL_EMBEDDING_MODEL", str(tmp_path / "gone" / "model.onnx"))
    with served(tmp_path, str(tmp_path / "index.db")) as world:
        alice = world.tokens["alice"]
        deploy = (await call(world.mcp, alice, "remember", {"content": DEPLOY, "project": "apollo"}))["ref"]
        words = await call(world.mcp, alice, "recall", {"query": "deploy Tuesdays"})
        assert [r["ref"] for r in words["results"]] == [deploy] and words["results"][0]["matched"] == ["words"]
        assert "by words only" in words["note"] and "notewell doctor" in words["note"]
        assert "model.onnx" not in words["note"]  # the server's files are the operator's, not the agent's
        missed = await call(world.mcp, alice, "recall", {"query": DEPLOY_QUESTION})
        assert missed["results"] == [] and "by words only" in missed["note"]
        assert "close to it in meaning" not in missed["note"]  # no meaning was looked for: never said it was
        await call(world.mcp, alice, "brain_teach_knowledge", {"rule": FORM_RULE, "type": "recipe"})
        asked = [("recall_context", {"query": DEPLOY_QUESTION}), ("brain_retrieve_knowledge", {"prompt": "forms"}),
                 ("brain_find_skill", {"query": "forms"}), ("brain_session_search", {"query": "forms"}),
                 ("brain_ask_oracle", {"question": "forms"}), ("brain_start_session", {"prompt": "forms"})]
        for tool, args in asked:
            answer = await call(world.mcp, alice, tool, args)
            assert "by words only" in answer.get("note", "") and "notewell doctor" in answer["note"], tool
        headers = {"Authorization": f"Bearer {alice}"}
        for path, params in (("knowledge/retrieve", {"prompt": "forms"}), ("sessions/search", {"q": "forms"}),
                             ("memories/context", {"q": "deploy"})):
            rest = httpx.get(f"{world.api}/{path}", params=params, headers=headers, timeout=30).json()
            assert "not available on this server" in rest["wordsOnly"], path
    gone = {"NOTEWELL_EMBEDDING_MODEL": str(tmp_path / "gone" / "model.onnx")}
    status = run_cli("embed", "--status", "--json", "--vault", str(tmp_path / "vault"), "--db",
                     str(tmp_path / "index.db"), env=gone)
    waiting = json.loads(status.stdout)
    assert waiting["queued"] >= 1 and waiting["failing"] == 0 and "model.onnx" in waiting["unavailable"]
    doctor = run_cli("doctor", "--vault", str(tmp_path / "vault"), "--db", str(tmp_path / "index.db"), env=gone)
    line = next(ln for ln in doctor.stdout.splitlines() if "meaning" in ln)
    assert "the embedding model does not load" in line and "model.onnx" in doctor.stdout
    assert "fix or unset NOTEWELL_EMBEDDING_MODEL" in doctor.stdout  # the variable chose the file: it is the fix
    assert "op=meaning.load" not in doctor.stdout + doctor.stderr  # said once, by the check


def test_a_kill_9_with_1000_queued_embeddings_loses_none(store_url: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    rt = open_runtime(str(vault), store_url)
    try:
        rt.administration.add_project(LOCAL_OWNER, "apollo")
        for n in range(1000):
            rt.memory.remember(LOCAL_OWNER, f"Release note {n}: {DEPLOY}", project="apollo", path=f"notes/{n % 7}")
        assert rt.meaning.state().queued == 1000
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        runner = subprocess.Popen([sys.executable, "-m", "notewell", "embed", "--vault", str(vault), "--db", store_url],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            for _ in range(2400):  # until some are embedded, at most 120 s
                if rt.meaning.state().vectors >= 64:
                    break
                time.sleep(0.05)
            runner.send_signal(signal.SIGKILL)
        finally:
            runner.wait(timeout=30)
        state = rt.meaning.state()
        assert 64 <= state.vectors < 1000 and state.vectors + state.queued == 1000  # each embedded or still queued
        again = run_module("embed", "--vault", str(vault), "--db", store_url, "--json")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout) == {"vectors": 1000, "items": 1000, "queued": 0, "failing": 0,
                                            "lastError": None, "unavailable": None}
    finally:
        rt.close()


def test_embed_status_says_how_far_the_queue_has_come(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    rt = open_runtime(str(vault), str(tmp_path / "index.db"))
    rt.administration.add_project(LOCAL_OWNER, "apollo")
    rt.memory.remember(LOCAL_OWNER, DEPLOY, project="apollo")
    rt.administration.add_user(LOCAL_OWNER, "erin@example.test", "member", handle="erin")
    erin = rt.authentication.authenticate(
        rt.administration.mint_token(LOCAL_OWNER, "erin@example.test", ["sessions"]).secret)
    rt.brain.start_session(erin, prompt="")  # no text, nothing to embed: not counted (it was, "0 of 2" for good)
    rt.close()
    args = ("--vault", str(vault), "--db", str(tmp_path / "index.db"))
    assert run_cli("embed", "--status", *args).stdout.strip() == "0 of 1 memories and sessions embedded; 1 queued"
    done = run_cli("embed", *args)
    assert done.exit_code == 0 and done.stdout.splitlines()[-1] == "1 of 1 memories and sessions embedded; 0 queued"
    off = tmp_path / "off"
    off.mkdir()
    (off / "notewell.toml").write_text("semantic = false\n", encoding="utf-8")
    refused = run_cli("embed", "--vault", str(off), "--db", str(tmp_path / "index.db"))
    assert refused.exit_code == 1 and "semantic = false in notewell.toml" in refused.stderr


def test_embed_status_counts_no_session_without_text_as_queued_after_a_close_or_an_import(
        store_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A session with no text (none at its start, none at its close) is no item to embed, yet its close queued it,
    and an import queued every session: `embed --status` said "0 of 2 ...; 3 queued", and after the import "0 of 2
    ...; 4 queued". The store is on each backend, and the import goes to the other one."""
    vault = tmp_path / "vault"
    vault.mkdir()
    rt = open_runtime(str(vault), store_url)
    try:
        rt.administration.add_project(LOCAL_OWNER, "apollo")
        rt.memory.remember(LOCAL_OWNER, DEPLOY, project="apollo")
        rt.administration.add_user(LOCAL_OWNER, "erin@example.test", "member", handle="erin")
        erin = rt.authentication.authenticate(
            rt.administration.mint_token(LOCAL_OWNER, "erin@example.test", ["sessions"]).secret)
        silent = rt.brain.start_session(erin, prompt="").session.id
        rt.brain.report_outcome(erin, silent, success=True)
        rt.brain.start_session(erin, prompt="")  # open, no text yet
        rt.brain.start_session(erin, prompt="tune the gripper")
    finally:
        rt.close()
    expected = {"vectors": 0, "items": 2, "queued": 2, "failing": 0, "lastError": None, "unavailable": None}
    status = run_cli("embed", "--status", "--json", "--vault", str(vault), "--db", store_url)
    assert json.loads(status.stdout) == expected
    assert run_cli("export", str(tmp_path / "e"), "--db", store_url).exit_code == 0
    target = str(request.getfixturevalue("pg_url")) if "://" not in store_url else str(tmp_path / "target.db")
    imported = run_cli("import", str(tmp_path / "e"), "--db", target)
    assert imported.exit_code == 0, imported.output
    status = run_cli("embed", "--status", "--json", "--vault", str(vault), "--db", target)
    assert json.loads(status.stdout) == expected
    done = run_cli("embed", "--json", "--vault", str(vault), "--db", target)
    assert json.loads(done.stdout) == expected | {"vectors": 2, "queued": 0}


CHINESE = "我们的生产数据库是PostgreSQL，部署在法兰克福。"  # "our production database is PostgreSQL, in Frankfurt"
JAPANESE = "本番環境のデータベースはPostgreSQLです。"


async def test_a_word_inside_a_chinese_or_japanese_sentence_finds_it_by_words(world: Served) -> None:
    """A sentence written without spaces is not one word (word_breaks.py): a word inside it, or a Latin word
    written against it, finds it strictly and tolerantly, by MCP and REST; a session too."""
    alice = world.tokens["alice"]
    headers = {"Authorization": f"Bearer {alice}"}
    chinese = (await call(world.mcp, alice, "remember", {"content": CHINESE, "project": "apollo"}))["ref"]
    japanese = (await call(world.mcp, alice, "remember", {"content": JAPANESE, "project": "apollo"}))["ref"]
    opened = await call(world.mcp, alice, "brain_start_session", {"prompt": "データベースの移行を準備する"})
    await call(world.mcp, alice, "brain_report_session_outcome", {
        "sessionId": opened["sessionId"], "success": True, "summary": "移行手順を書いた"})

    async def strict(query: str) -> list[str]:
        return [r["ref"] for r in (await call(world.mcp, alice, "search_memory", {"query": query}))["results"]]

    assert await strict("数据库") == [chinese]
    assert await strict("法兰克福 postgresql") == [chinese]
    assert set(await strict("PostgreSQL")) == {chinese, japanese}
    assert await strict("データベース") == [japanese]
    assert await strict("数据 法兰") == [chinese]
    assert await strict("据数") == []  # the characters in their order
    found = (await call(world.mcp, alice, "recall", {"query": "数据库"}))["results"]
    assert found[0]["ref"] == chinese and "words" in found[0]["matched"]
    question = (await call(world.mcp, alice, "recall", {"query": "生产数据库在哪里"}))["results"]  # where is it
    assert question[0]["ref"] == chinese and "words" in question[0]["matched"]
    rest = httpx.get(f"{world.api}/memories/search", params={"q": "データベース"}, headers=headers, timeout=30).json()
    assert [r["memory"]["ref"] for r in rest["results"]] == [japanese]
    sessions = await call(world.mcp, alice, "brain_session_search", {"query": "移行"})
    assert [s["sessionId"] for s in sessions["sessions"]] == [opened["sessionId"]]


async def test_a_text_the_model_cannot_read_is_found_by_words_alone_and_said_so(world: Served) -> None:
    """Most Chinese characters are [UNK] to the model (meaning/reading.py): such a query is answered by words
    alone with a note saying why, by every tolerant tool, MCP and REST; such a stored memory or session is never
    a match by meaning (their similarities are noise: 泄漏 was at 0.90 from 配置缓存)."""
    alice = world.tokens["alice"]
    headers = {"Authorization": f"Bearer {alice}"}
    cache = (await call(world.mcp, alice, "remember", {"content": "配置缓存", "project": "apollo"}))["ref"]
    leak = (await call(world.mcp, alice, "remember", {"content": "修复内存泄漏", "project": "apollo"}))["ref"]
    opened = await call(world.mcp, alice, "brain_start_session", {"prompt": "配置缓存"})
    await call(world.mcp, alice, "brain_report_session_outcome", {"sessionId": opened["sessionId"], "success": True})
    rule = (await call(world.mcp, alice, "brain_teach_knowledge", {"rule": "配置缓存前先备份", "type": "recipe"}))["id"]
    world.embedded()
    for query in ("迁移", "缓存"):
        found = await call(world.mcp, alice, "recall", {"query": query})
        assert all("meaning" not in r["matched"] for r in found["results"]), found
        assert "cannot read most of this query" in found["note"], found
    assert {r["ref"] for r in (await call(world.mcp, alice, "recall", {"query": "缓存"}))["results"]} == {cache, rule}
    sessions = await call(world.mcp, alice, "brain_session_search", {"query": "泄漏"})
    assert sessions["sessions"] == [] and "cannot read most of this query" in sessions["note"]
    oracle = await call(world.mcp, alice, "brain_ask_oracle", {"question": "泄漏"})
    assert opened["sessionId"] not in json.dumps(oracle["citations"]) and "cannot read" in oracle["note"]
    for tool, args in [("recall_context", {"query": "迁移"}), ("brain_retrieve_knowledge", {"prompt": "迁移"}),
                       ("brain_find_skill", {"query": "迁移"}), ("brain_start_session", {"prompt": "迁移"})]:
        assert "cannot read most of this query" in (await call(world.mcp, alice, tool, args)).get("note", ""), tool
    for path, params in (("knowledge/retrieve", {"prompt": "迁移"}), ("sessions/search", {"q": "泄漏"}),
                         ("memories/context", {"q": "迁移"}), ("memories/recall", {"q": "迁移"})):
        rest = httpx.get(f"{world.api}/{path}", params=params, headers=headers, timeout=30).json()
        assert "cannot read most of this query" in rest["wordsOnly"], path
    readable = await call(world.mcp, alice, "recall", {"query": "キャッシュの設定"})  # kana: read (share 0.12)
    assert leak not in [r["ref"] for r in readable["results"]]  # 修复内存泄漏 was found at 0.49 by meaning
    assert readable["results"] == [] and "cannot read" not in readable["note"]
    rocket = await call(world.mcp, alice, "brain_start_session", {"prompt": "🚀"})  # the note said Chinese
    assert "cannot read most of this query" in rocket["note"] and "emoji" in rocket["note"], rocket


async def test_two_rules_the_model_cannot_read_are_never_merged_by_meaning(world: Served) -> None:
    """部署前必须运行数据库迁移 and 部署前必须运行单元测试 were at 0.836 (集成测试: 0.859) and merged: the second rule
    was lost. Mostly unreadable, they are kept apart; the very same rule taught again is still not added."""
    alice = world.tokens["alice"]
    first = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "部署前必须运行数据库迁移", "trigger": "部署时", "type": "reflex"})
    world.embedded()
    for rule in ("部署前必须运行单元测试", "部署前必须运行集成测试"):
        then = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": rule, "trigger": "部署时",
                                                                      "type": "reflex"})
        assert then["created"] is True and then["id"] != first["id"] and "sameMeaning" not in then, (rule, then)
    again = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "部署前必须运行数据库迁移", "trigger": "部署时", "type": "reflex"})
    assert again["id"] == first["id"] and again["created"] is False


async def test_semantic_dedup_finds_the_persons_own_rule_behind_nearer_rules_of_others_and_other_kinds(
        world: Served) -> None:
    """Dedup looked at the 5 rules of the project nearest in meaning, then kept the person's own of the same kind:
    in a shared project, teammates' rules and the person's rules of other kinds saying the same took those 5
    places, and a rewording of the person's own rule (0.93) was added as a copy beside it."""
    alice, bob = world.tokens["alice"], world.tokens["bob"]
    reworded = "Redis cache tests should always be run against a local server"
    first = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Always run the Redis cache tests against a local server", "projectId": "apollo"})
    for who, kinds in ((bob, ("heuristic", "recipe", "principle", "reflex", "anti_principle")),
                       (alice, ("recipe", "principle", "reflex", "anti_principle"))):
        for kind in kinds:
            other = await call(world.mcp, who, "brain_teach_knowledge", {"rule": reworded, "type": kind,
                                                                         "projectId": "apollo"})
            assert other["created"] is True, (kind, other)
    world.embedded()
    again = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": reworded, "projectId": "apollo"})
    assert again["id"] == first["id"] and again["created"] is False and again["sameMeaning"] >= 0.8, again


async def test_find_skill_finds_a_recipe_behind_more_rules_of_other_kinds_than_it_looks_at(world: Served) -> None:
    """brain_find_skill took the 200 rules nearest in words and the 200 nearest in meaning, of every kind, and
    then kept the matured recipes: with more heuristics nearer to the query (a team's, 0.92), the recipe that
    answers it in other words (0.63) was gone."""
    alice, bob = world.tokens["alice"], world.tokens["bob"]
    recipe = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Zero the manipulator's grip sensors ahead of every trial", "type": "recipe", "projectId": "apollo"})
    for n in range(2):  # two successful uses mature it (a seed is no skill yet)
        opened = await call(world.mcp, alice, "brain_start_session", {"prompt": f"robot run {n}",
                                                                      "projectId": "apollo"})
        await call(world.mcp, alice, "brain_report_session_outcome", {
            "sessionId": opened["sessionId"], "success": True, "knowledgeUsed": [recipe["id"]]})
    async with connect(world.mcp, bob) as client:  # numbered rules: never merged as rewordings of one another
        for n in range(205):
            taught = await client.call_tool("brain_teach_knowledge", {
                "rule": f"Calibrate the robot gripper before test run {n}", "projectId": "apollo"})
            assert not taught.is_error and taught.structured_content["created"] is True, (n, taught.content)
    world.embedded()
    skills = await call(world.mcp, alice, "brain_find_skill", {"query": "calibrate the robot gripper before test run"})
    assert [(k["id"], k["stage"], k["matched"]) for k in skills["skills"]] == [
        (recipe["id"], "knowledge", ["meaning"])], skills


async def test_semantic_dedup_of_a_rule_for_everyone_finds_it_behind_the_persons_nearer_private_rules(
        world: Served) -> None:
    """A rule taught for everyone merges only into the person's rules every reader has: dedup looked at the 5
    nearest of their rules, the private ones the brain mined among them, and dropped those afterwards, so with 5
    mined rules nearer in meaning a rewording of their own rule for everyone (0.93) was added as a copy."""
    alice = world.tokens["alice"]
    reworded = "Redis cache tests should always be run against a local server"
    first = await call(world.mcp, alice, "brain_teach_knowledge", {
        "rule": "Always run the Redis cache tests against a local server", "projectId": "apollo"})
    p = world.rt.authentication.authenticate(alice)
    bp = world.rt.brain.resolve(p, "apollo")
    for ending in (".", "!", " first", " only", " again"):
        mined, _ = world.rt.brain._write(p, bp, kind="heuristic", trigger="", rule=reworded + ending, rationale="",
                                         source="discovery", confidence=0.7, tags=["mined"], private=True)
        assert mined.private_to == p.user_id
    world.embedded()
    again = await call(world.mcp, alice, "brain_teach_knowledge", {"rule": reworded, "projectId": "apollo"})
    assert again["id"] == first["id"] and again["created"] is False and again["sameMeaning"] >= 0.8, again
