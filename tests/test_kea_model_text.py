"""What KEA's extractors write is checked as an agent's learnings are (brain_learnings.Learning.parse): a text a
model answers, or a rule the deterministic miner takes from an event, holding a lone UTF-16 surrogate, a NUL or a
control character is dropped and counted, and the session's other learnings are kept, the job done at its first
try (no retry re-asking the model). Through the MCP door, on SQLite and PostgreSQL; the model is a local server
speaking OpenAI's wire format (tests/llm_wire.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from brain_world import BrainWorld, brain_world_on, brain_world_with_model, call, serve_brain
from conftest import captured_lines
from llm_wire import WireServer, wire_server
from mcp_world import connect
from test_kea import job_of, knowledge_of, unique

pytestmark = pytest.mark.anyio
MODEL = "qwen2.5-coder:7b"
BAD = {"surrogate": "quote the \udc80 surrogate filenames before passing them to rsync",
       "nul": "quote the \x00 filenames before passing them to rsync",
       "control": "quote the \x1b[31m filenames before passing them to rsync"}


@pytest.fixture(scope="module")
def wire() -> Iterator[WireServer]:
    with wire_server({"learnings": []}) as server:
        yield server


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          wire: WireServer) -> Iterator[BrainWorld]:
    yield from brain_world_with_model(request, tmp_path_factory.mktemp("kea_text"), MODEL, wire.openai_url)


@pytest.fixture(scope="module")
def url(world: BrainWorld) -> Iterator[str]:
    with serve_brain(world, jobs=True) as server:
        yield server.url


def _learning(topic: str, rule: str) -> dict[str, object]:
    return {"trigger": f"when syncing {topic} uploads", "rule": rule, "rationale": "rsync split the names",
            "type": "reflex", "source": "discovery", "confidence": 0.8}


async def test_refine_verdicts_holding_a_surrogate_nul_or_control_character_are_invalid_the_rest_kept(
        world: BrainWorld, url: str, wire: WireServer) -> None:
    topic = unique("uploads")
    given = [_learning(topic, f"sync the {topic} uploads with rsync --protect-args"),
             _learning(topic, f"checksum the {topic} uploads after every sync run"),
             _learning(topic, f"keep the {topic} upload names in NFC before syncing"),
             _learning(topic, f"write the {topic} sync log beside the uploads folder")]
    wire.answers[:] = [{"verdicts": [
        {"learning": 1, "keep": True, "rule": BAD["surrogate"], "confidence": None},
        {"learning": 2, "keep": True, "rule": BAD["nul"], "confidence": None},
        {"learning": 3, "keep": True, "rule": BAD["control"], "confidence": None},
        {"learning": 4, "keep": True, "rule": f"write the {topic} sync log next to the uploads", "confidence": None}]}]
    wire.seen.clear()
    with captured_lines("notewell.kea") as lines:
        async with connect(url, world.tokens["alice"]) as c:
            session = (await call(c, "brain_start_session", {"prompt": f"sync the {topic} uploads",
                                                             "projectId": "shared"}))["sessionId"]
            closed = await call(c, "brain_report_session_outcome", {"sessionId": session, "success": True,
                                                                    "learnings": given})
    report = closed["learnings"]
    assert (report["submitted"], report["kept"], report["rejected"], len(report["captured"])) == (4, 4, 0, 4)
    job = job_of(world, session)
    assert (job.state, job.attempts) == ("done", 1)
    kept = sorted(k.rule for k in knowledge_of(world, "shared", session))
    assert kept == sorted([str(x["rule"]) for x in given[:3]] + [f"write the {topic} sync log next to the uploads"])
    assert any(ln.startswith("op=kea.llm outcome=partial") and " invalid=3 unjudged=3" in ln for ln in lines)
    assert len(wire.seen) == 1


async def test_mined_rules_holding_a_surrogate_nul_or_control_character_are_dropped_the_clean_one_kept(
        world: BrainWorld, url: str, wire: WireServer) -> None:
    topic = unique("archive")
    clean = f"compress the {topic} archives with zstd before uploading them"
    wire.answers[:] = [{"learnings": [_learning(topic, BAD["surrogate"]), _learning(topic, BAD["nul"]),
                                      _learning(topic, BAD["control"]), _learning(topic, clean)]}]
    wire.seen.clear()
    with captured_lines("notewell.kea") as lines:
        async with connect(url, world.tokens["alice"]) as c:
            session = (await call(c, "brain_start_session", {"prompt": f"upload the {topic} archives",
                                                             "projectId": "shared"}))["sessionId"]
            await call(c, "brain_report_session_outcome", {"sessionId": session, "success": True})
            job = job_of(world, session)
    assert (job.state, job.attempts, job.last_error) == ("done", 1, None)
    assert [k.rule for k in knowledge_of(world, "shared", session)] == [clean]
    assert any(ln.startswith("op=kea.llm outcome=ok") and " findings=1 invalid=3 " in f"{ln} " for ln in lines)
    assert len(wire.seen) == 1  # asked once: no retry


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def plain(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrainWorld]:
    yield from brain_world_on(request, tmp_path_factory.mktemp("kea_nul"))


async def test_a_nul_in_an_event_is_mined_as_a_space_and_the_sessions_other_rule_is_kept(
        plain: BrainWorld, tmp_path: Path) -> None:
    """A probe: a NUL an event holds went into a mined rule on SQLite and failed the job on PostgreSQL, losing the
    session's clean rule. The miner makes a control character a space (a review: an ANSI escape in the prompt,
    which every mined rule's trigger quotes, lost them all when they were dropped), so both rules are kept, clean,
    on both backends."""
    topic = unique("billing")
    with serve_brain(plain, jobs=True) as server:
        async with connect(server.url, plain.tokens["bob"]) as c:
            session = (await call(c, "brain_start_session", {"prompt": f"set up the {topic} client tooling",
                                                             "projectId": "shared"}))["sessionId"]
            for text in (f"Use httpx instead of requests for the {topic} client.",
                         f"Use uv instead of pip\x00 for the {topic} tooling."):
                await call(c, "brain_log_event", {"sessionId": session, "eventType": "user_correction",
                                                  "payload": {"text": text}})
            await call(c, "brain_report_session_outcome", {"sessionId": session, "success": True})
            job = job_of(plain, session)
    assert (job.state, job.attempts, job.last_error) == ("done", 1, None)
    rules = [k.rule for k in knowledge_of(plain, "shared", session)]
    assert sorted(rules) == [f"use httpx, not requests for the {topic} client",
                             f"use uv, not pip for the {topic} tooling"]
