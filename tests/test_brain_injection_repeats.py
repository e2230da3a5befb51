"""The injection names a rule once (docs/brain.md, "The injection"): a probe found the rule the brain mined from two
sessions whose tasks named different tickets ("Fix ticket 412 …", "Fix ticket 977 …") listed twice under the two
triggers, using the 1,200-token block for nothing new. Both backends, through MCP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from brain_world import BrainWorld, brain_world_on, call, serve_brain
from mcp_world import connect

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrainWorld]:
    yield from brain_world_on(request, tmp_path_factory.mktemp("repeats"))


@pytest.fixture(scope="module")
def url(world: BrainWorld) -> Iterator[str]:
    with serve_brain(world) as server:
        yield server.url


async def test_a_rule_under_two_triggers_is_injected_once(world: BrainWorld, url: str) -> None:
    rule = "Use orjson instead of the json module for the billing exports"
    async with connect(url, world.tokens["alice"]) as c:
        project = (await call(c, "brain_create_project", {"name": "orjson-billing"}))["projectId"]
        for ticket in (412, 977):
            await call(c, "brain_teach_knowledge", {"trigger": f"working on Fix ticket {ticket} in the billing exports",
                                                    "rule": rule, "projectId": project})
        await call(c, "brain_teach_knowledge", {"trigger": "working on the billing exports",
                                                "rule": "stream the rows, never build the whole file in memory",
                                                "projectId": project})
        started = await call(c, "brain_start_session", {"prompt": "Fix ticket 512 in the billing exports",
                                                        "projectId": project})
    injection = started["relevantKnowledge"]["injection"]
    assert injection.count(rule) == 1, injection
    assert "stream the rows" in injection, injection
    assert len(started["relevantKnowledge"]["knowledgeIds"]) == 2, started


async def test_a_rule_under_two_different_triggers_is_injected_under_both(world: BrainWorld, url: str) -> None:
    """A review: the same words under two triggers that differ by more than numbers say where else the rule holds
    ("run it without --dry-run" for the staging clean-up and for terraform against production, with its why)."""
    async with connect(url, world.tokens["alice"]) as c:
        project = (await call(c, "brain_create_project", {"name": "dry-run"}))["projectId"]
        await call(c, "brain_teach_knowledge", {"trigger": "running the staging cleanup script",
                                                "rule": "run it without --dry-run", "projectId": project})
        await call(c, "brain_teach_knowledge", {"trigger": "running terraform apply against production",
                                                "rule": "run it without --dry-run",
                                                "rationale": "it destroyed the prod database", "projectId": project})
        started = await call(c, "brain_start_session", {"prompt": "run the staging cleanup script and terraform apply",
                                                        "projectId": project})
    injection = started["relevantKnowledge"]["injection"]
    assert injection.count("run it without --dry-run") == 2 and "it destroyed the prod database" in injection, injection
