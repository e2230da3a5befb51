"""The learning loop with the language-model extractor, end to end through the MCP door, on SQLite and
PostgreSQL: the server runs with KEA_MODEL set and KEA_BASE_URL pointing at a local server in the test process
speaking OpenAI's wire format (tests/llm_wire.py, through the real openai SDK; no provider is reached). A
session closed without learnings is mined by the model (its structured-JSON answer is the rule), the served
job runner runs the job, and the next brain_start_session for the same task lists that rule in its
relevantKnowledge. The session itself states no rule in words the deterministic miner reads, so the rule can
only have come from the model."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from brain_world import BrainWorld, brain_world_with_model, call, serve_brain
from llm_wire import WireServer, wire_server
from mcp_world import connect
from notewell.services.kea_extractor import RuleMiner, SessionMaterial
from notewell.services.kea_llm import LlmExtractor
from test_kea import job_of, knowledge_of, unique

pytestmark = pytest.mark.anyio
MODEL = "qwen2.5-coder:7b"  # any name: KEA_BASE_URL routes it to the local OpenAI-compatible server


@pytest.fixture(scope="module")
def wire() -> Iterator[WireServer]:
    with wire_server({"learnings": []}) as server:
        yield server


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          wire: WireServer) -> Iterator[BrainWorld]:
    yield from brain_world_with_model(request, tmp_path_factory.mktemp("kea_llm"), MODEL, wire.openai_url)


@pytest.fixture(scope="module")
def url(world: BrainWorld) -> Iterator[str]:
    with serve_brain(world, jobs=True) as server:  # as notewell serve: the job runner runs beside the doors
        yield server.url


async def test_local_server_speaking_openais_wire_format_mines_a_rule_injected_at_the_next_session(
        world: BrainWorld, url: str, wire: WireServer) -> None:
    assert isinstance(world.runtime.brain.extractor, LlmExtractor)  # KEA_MODEL chose the model's extractor
    topic = unique("ledger")
    prompt = f"migrate the {topic} schema to the new billing tables"
    rule = f"generate {topic} migrations with alembic revision --autogenerate and review them before applying"
    wire.answers[:] = [{"learnings": [
        {"trigger": f"when migrating the {topic} schema", "rule": rule,
         "rationale": "the hand-written SQL dropped the index", "type": "recipe", "source": "discovery",
         "confidence": 0.9}]}]
    wire.seen.clear()  # the answers are given in order from the first request on
    async with connect(url, world.tokens["alice"]) as c:
        project = (await call(c, "brain_create_project", {"name": topic}))["projectId"]
        first = await call(c, "brain_start_session", {"prompt": prompt, "projectId": project})
        assert "relevantKnowledge" not in first
        await call(c, "brain_log_event", {"sessionId": first["sessionId"], "eventType": "command",
                                          "payload": {"text": f"psql -f {topic}_v2.sql dropped the ledger index"}})
        closed = await call(c, "brain_report_session_outcome", {
            "sessionId": first["sessionId"], "success": False, "summary": "The migration lost an index."})
        assert closed["queued"] is True and closed["learnings"]["captured"] == []
        job = job_of(world, first["sessionId"])
        assert (job.state, job.result, job.attempts) == ("done", "ok", 1)
        mined = knowledge_of(world, project, first["sessionId"])
        assert [(k.rule, k.kind, k.source, k.confidence) for k in mined] == [(rule, "recipe", "discovery", 0.7)]
        assert {"mined", f"session:{first['sessionId']}"} <= set(mined[0].tags)
        again = await call(c, "brain_start_session", {"prompt": prompt, "projectId": project})
        assert again["relevantKnowledge"]["knowledgeIds"] == [mined[0].ref]
        assert rule in again["relevantKnowledge"]["injection"]
    asked = wire.seen
    assert [(s.path, s.body["model"]) for s in asked] == [("/v1/chat/completions", MODEL)]
    assert topic in json.dumps(asked[0].body["messages"])  # the session was what the model read
    session = world.runtime.store.brain.session(first["sessionId"])
    assert session is not None
    assert RuleMiner().mine(SessionMaterial(session, world.runtime.store.brain.events(session.id, 50))) == []

