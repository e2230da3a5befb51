"""A provider's failure as Notewell keeps and shows it, on SQLite and PostgreSQL: a provider (or proxy) that echoes
the bearer key in its error text leaves no key in the job's last error (`notewell jobs`), nor in the log; `notewell
doctor` shows the provider's URL without its user and password, and warns of KEA's failing jobs with the last
error, redacted. And a KEA_MODEL doctor cannot use is its own fix, with no port check. The provider is a local
server speaking OpenAI's wire format (tests/llm_wire.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from brain_world import BrainWorld, brain_world_with_env, call, serve_brain
from conftest import captured_lines, run_cli
from llm_wire import Failure, WireServer, wire_server
from mcp_world import connect
from notewell.config import kea_settings
from notewell.doctor import shown_url
from notewell.services.kea_providers import held_secrets, redact
from test_kea import unique

KEY = "sk-test-0123456789abcdefSECRET"
PASSWORD = "pw-SECRET"
MODEL = "gpt-4o-mini"


@pytest.fixture(scope="module")
def wire() -> Iterator[WireServer]:
    with wire_server(Failure(401, "Incorrect API key provided: {authorization}. You can find your API key at "
                                  "https://platform.openai.com/account/api-keys.")) as server:
        yield server


@pytest.fixture(scope="module")
def env(wire: WireServer) -> dict[str, str]:
    """OpenAI (the model's prefix), moved to the local server by OPENAI_BASE_URL."""
    return {"KEA_MODEL": MODEL, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": wire.openai_url}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          env: dict[str, str]) -> Iterator[BrainWorld]:
    yield from brain_world_with_env(request, tmp_path_factory.mktemp("kea_errors"), env)


@pytest.mark.anyio
async def test_a_provider_echoing_the_key_leaves_it_in_no_job_error_log_line_or_doctor_report(
        world: BrainWorld, wire: WireServer, env: dict[str, str]) -> None:
    rt = world.runtime
    with serve_brain(world) as server, captured_lines("notewell") as lines:
        async with connect(server.url, world.tokens["alice"]) as c:
            session = (await call(c, "brain_start_session", {"prompt": f"tune the {unique('cache')} eviction",
                                                             "projectId": "shared"}))["sessionId"]
            await call(c, "brain_report_session_outcome", {"sessionId": session, "success": True})
        runner = rt.job_runner()
        assert runner._lead() and runner.run_due() == 1  # the mine job: the provider refuses it
        runner.leadership.release()
    assert wire.seen and wire.seen[-1].authorization == f"Bearer {KEY}"  # the key was sent, and echoed
    args = ("--vault", str(rt.settings.vault), "--db", rt.settings.db)
    listed = run_cli("jobs", "--state", "pending", "--json", *args, env=env)
    assert listed.exit_code == 0, listed.stderr
    job = next(j for j in json.loads(listed.stdout)["jobs"] if j["kind"] == "kea.extract")
    error = job["lastError"]
    assert error.startswith("ProviderError: AuthenticationError: Error code: 401") and "Bearer [redacted]" in error
    assert KEY not in listed.stdout and KEY not in run_cli("jobs", *args, env=env).stdout
    assert lines and not any(KEY in ln for ln in lines)
    behind = wire.openai_url.replace("http://", f"http://kea:{PASSWORD}@") + "?key=" + KEY  # a proxy's URL
    doctor = run_cli("doctor", "--json", *args, env={**env, "OPENAI_BASE_URL": behind})
    checks = {c["check"]: c for c in json.loads(doctor.stdout)}
    kea = checks["kea"]
    assert kea["status"] == "warn" and "failed their last try" in kea["found"], kea
    assert "notewell jobs --state failed" in kea["fix"] and "Bearer [redacted]" in kea["found"]
    assert f"via OpenAI at {wire.openai_url} " in kea["found"].replace(",", " ")
    assert KEY not in doctor.stdout and PASSWORD not in doctor.stdout


def test_doctor_says_the_fix_of_a_kea_model_with_a_space_and_checks_no_port() -> None:
    result = run_cli("doctor", "--json", env={"KEA_MODEL": "gpt 4"})
    checks = json.loads(result.stdout)
    assert result.exit_code == 1 and [c["check"] for c in checks] == ["settings"]
    assert checks[0]["found"].startswith("KEA_MODEL: must be a model name without spaces")
    assert checks[0]["fix"].startswith("set KEA_MODEL to a model name") and "unset it" in checks[0]["fix"]
    assert "NOTEWELL_VAULT" not in checks[0]["fix"]


@pytest.mark.parametrize("url", ["http://localhost:99999/v1", "http://localhost:abc/v1", "http://localhost:0/v1"])
def test_doctor_says_the_fix_of_a_kea_base_url_whose_port_is_no_port(url: str) -> None:
    """urlsplit raises ValueError reading such a port: doctor stopped with 'did not expect this' (exit 70)."""
    result = run_cli("doctor", "--json", env={"KEA_MODEL": "llama3", "KEA_BASE_URL": url})
    checks = json.loads(result.stdout)
    assert result.exit_code == 1 and [c["check"] for c in checks] == ["settings"], result.stdout
    assert checks[0]["found"].startswith("KEA_BASE_URL: the port must be a number from 1 to 65535")
    assert checks[0]["fix"].startswith("set KEA_BASE_URL to a URL whose port is a number from 1 to 65535")


def test_doctor_shows_a_url_whose_port_is_no_port_as_written_without_its_password() -> None:
    assert shown_url("http://kea:pw@localhost:abc/v1?key=k") == "http://localhost:abc/v1"
    assert shown_url("http://[::1]:99999/v1") == "http://[::1]:99999/v1"


GATEWAY_KEY = "gw-Zk3/q9+Xw=="  # a base64 key, which URL-encoding and JSON escaping write otherwise


@pytest.mark.parametrize(("text", "secrets", "expected"), [
    (f"401 for url 'https://gw.example/v1?api_key={quote(GATEWAY_KEY, safe='')}'", [GATEWAY_KEY],
     "401 for url 'https://gw.example/v1?api_key=[redacted]'"),
    ('{"error":"bad key gw-Zk3\\/q9+Xw=="}', [GATEWAY_KEY], '{"error":"bad key [redacted]"}'),
    (json.dumps({"error": f"bad key {GATEWAY_KEY}"}), [GATEWAY_KEY], '{"error": "bad key [redacted]"}'),
    ("Error code: 400 - your organisation is on the Basic tier, upgrade", ["sk-0123456789"],
     "Error code: 400 - your organisation is on the Basic tier, upgrade"),
    ("Error code: 404 - model gpt-4o-mini not found", ["4"], "Error code: 404 - model gpt-4o-mini not found"),
    ("echoed: Authorization: Basic a2VhOnB3LVNFQ1JFVA==", [], "echoed: Authorization: Basic [redacted]"),
    # a key Notewell does not hold (a proxy's own, another client's), echoed under a header's name
    ("echoed: Authorization: Token 0123456789abcdef", [], "echoed: Authorization: Token [redacted]"),
    ('headers: {"x-goog-api-key": "AIzaSyD-0123456789abcdef"}', [], 'headers: {"x-goog-api-key": "[redacted]"}'),
    ("x-api-key: sk-ant-api03-abcdefgh", [], "x-api-key: [redacted]"),
    ("the token limit was 4096; your api key is invalid; the x-api-key header is required", [],
     "the token limit was 4096; your api key is invalid; the x-api-key header is required"),
])
def test_redact_writes_each_form_of_a_secret_and_only_credentials(text: str, secrets: list[str],
                                                                  expected: str) -> None:
    assert redact(text, secrets) == expected


def test_the_secrets_held_include_a_base_urls_password_and_query_values() -> None:
    kea = kea_settings({"KEA_MODEL": "llama3", "KEA_API_KEY": "sk-local-KEYSECRET",
                        "KEA_BASE_URL": "http://gw:PWSECRET@gw.example/v1?key=QUERYSECRET&v=1"})
    echoed = "404 - no route http://gw:PWSECRET@gw.example/v1?key=QUERYSECRET&v=1 (key sk-local-KEYSECRET)"
    shown = "404 - no route http://gw:[redacted]@gw.example/v1?key=[redacted]&v=1 (key [redacted])"
    assert redact(echoed, held_secrets(kea)) == shown
