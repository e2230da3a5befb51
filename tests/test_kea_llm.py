"""KEA's language-model extractor through the real SDKs against a local server in the test process that speaks
each provider's wire format (tests/llm_wire.py; no provider is reached): routing by KEA_MODEL's prefix, the three
missing-key errors, an answer that is not the schema's JSON, and the daily budget (in the store, both backends)
falling back to the deterministic extractor."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest

from llm_wire import WireServer, wire_server
from notewell.config import kea_settings
from notewell.records.brain import EventRecord, SessionRecord
from notewell.services.kea_extractor import SessionMaterial
from notewell.services.kea_llm import LlmExtractor
from notewell.services.kea_prompt import InvalidOutput
from notewell.services.kea_providers import connect
from notewell.services.kea_routing import KeaKeyMissing, route
from notewell.store import open_store

KEYS = {"DASHSCOPE_API_KEY": "sk-dashscope", "ANTHROPIC_API_KEY": "sk-anthropic", "OPENAI_API_KEY": "sk-openai"}
RULE = {"trigger": "when migrating the billing schema", "rule": "use alembic revisions, not hand-written SQL files",
        "rationale": "the person corrected it", "type": "reflex", "source": "user_correction", "confidence": 0.9}


def material() -> SessionMaterial:
    s = SessionRecord(id="ses_local", user_id="u", token_id=None, brain_project="p", client_type="test",
                      prompt="migrate the billing schema", framework=None, started_at="2026-01-01T00:00:00Z",
                      ended_at="2026-01-01T01:00:00Z", success=False, user_feedback="down", summary="rejected")
    return SessionMaterial(s, [EventRecord("evt_1", s.id, "user_correction",
                                           {"text": "Use alembic revisions, not hand-written SQL files."}, s.ended_at
                                           or "")])


def env_for(model: str, server: WireServer, **more: str) -> dict[str, str]:
    return {"KEA_MODEL": model, **KEYS, "DASHSCOPE_BASE_URL": server.openai_url,
            "OPENAI_BASE_URL": server.openai_url, "ANTHROPIC_BASE_URL": server.url, **more}


@pytest.mark.parametrize(("model", "provider", "key"), [
    ("qwen3-coder", "DashScope", "sk-dashscope"), ("glm-4.5", "DashScope", "sk-dashscope"),
    ("gpt-4o-mini", "OpenAI", "sk-openai"), ("llama3", "OpenAI", "sk-openai")])
def test_openai_wire_format_local_server_routes_by_prefix(model: str, provider: str, key: str) -> None:
    with wire_server({"learnings": [RULE]}) as server:
        to = route(kea_settings(env_for(model, server)))
        assert to is not None and to.provider.name == provider
        reply = connect(to)("system", "<session>{}</session>", {"type": "object"})
    seen = server.seen[-1]
    assert (seen.path, seen.authorization, seen.body["model"]) == ("/v1/chat/completions", f"Bearer {key}", model)
    assert seen.body["response_format"]["type"] == ("json_schema" if provider == "OpenAI" else "json_object")
    assert '"learnings"' in reply.text and reply.tokens == 150


def test_anthropic_messages_wire_format_local_server_routes_claude() -> None:
    with wire_server({"learnings": [RULE]}) as server:
        to = route(kea_settings(env_for("claude-haiku-4-5", server)))
        assert to is not None and to.provider.name == "Anthropic"
        reply = connect(to)("system", "<session>{}</session>", {"type": "object"})
    seen = server.seen[-1]
    assert seen.path == "/v1/messages" and "sk-anthropic" in f"{seen.authorization} {seen.api_key}"
    assert seen.body["tool_choice"] == {"type": "tool", "name": "record_learnings"}
    assert '"learnings"' in reply.text and reply.tokens == 150


def test_openai_wire_format_local_server_at_kea_base_url_whatever_the_model() -> None:
    with wire_server({"learnings": []}) as server:
        to = route(kea_settings({"KEA_MODEL": "qwen2.5-coder:7b", "KEA_BASE_URL": server.openai_url}))
        assert to is not None and to.provider.name == "local OpenAI-compatible server"
        connect(to)("system", "user", {"type": "object"})
    assert server.seen[-1].authorization == "Bearer no-key"
    assert route(kea_settings({})) is None  # KEA_MODEL unset: the deterministic extractor


@pytest.mark.parametrize(("model", "variable", "others"), [
    ("qwen3-coder", "DASHSCOPE_API_KEY", ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")),
    ("claude-sonnet-4", "ANTHROPIC_API_KEY", ("DASHSCOPE_API_KEY", "OPENAI_API_KEY")),
    ("gpt-4o-mini", "OPENAI_API_KEY", ("DASHSCOPE_API_KEY", "ANTHROPIC_API_KEY"))])
def test_a_missing_key_names_its_variable_and_the_two_other_providers(model: str, variable: str,
                                                                      others: tuple[str, str]) -> None:
    to = route(kea_settings({"KEA_MODEL": model, **{k: v for k, v in KEYS.items() if k != variable}}))
    assert to is not None
    with pytest.raises(KeaKeyMissing) as err:
        connect(to)
    text = str(err.value)
    assert text.startswith(f"KEA_MODEL={model} routes to ") and f"needs {variable}: set {variable}" in text
    assert all(other in text for other in others)


def test_openai_wire_format_local_server_invalid_json_and_the_budget_in_the_store(
        store_url: str, caplog: pytest.LogCaptureFixture) -> None:
    store = open_store(store_url)
    day = datetime(2026, 3, 1, 23, 0, tzinfo=UTC)
    clock = [day]
    try:
        with wire_server("not json", {"learnings": [RULE] * 7}) as server, \
                caplog.at_level(logging.INFO, logger="notewell.kea"):
            kea = kea_settings(env_for("gpt-4o-mini", server, KEA_DAILY_CALLS="2"))
            to = route(kea)
            assert to is not None
            llm = LlmExtractor(to, kea, store.kea_budget, lambda: clock[0])
            with pytest.raises(InvalidOutput):
                llm.mine(material())
            assert any(m.startswith("op=kea.llm outcome=error provider=OpenAI") and "InvalidOutput" in m
                       for m in caplog.messages)
            found = llm.mine(material())  # 7 items: the first 5 read, each clamped below close-capture's
            assert [x.confidence for x in found] == [0.7] * 5
            assert store.kea_budget.used(day.date()) == (2, 300)
            fallback = llm.mine(material())  # the day's 2 calls spent: the deterministic extractor, no call
            assert len(server.seen) == 2
            assert {x.rule for x in fallback} == {"use alembic revisions, not hand-written SQL files"}
            assert any(m.startswith("op=kea.budget outcome=exhausted day=2026-03-01 calls=2 callsBudget=2")
                       and "fallback=deterministic" in m for m in caplog.messages)
            store.close()
            store = open_store(store_url)  # a restart keeps the day's spend
            llm = LlmExtractor(to, kea, store.kea_budget, lambda: clock[0])
            llm.mine(material())
            assert len(server.seen) == 2
            clock[0] = day + timedelta(hours=2)  # the next day (UTC): the budget is whole again
            assert len(llm.mine(material())) == 5 and len(server.seen) == 3
    finally:
        store.close()
