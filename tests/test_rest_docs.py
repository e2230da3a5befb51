"""The REST API's documents are true: docs/openapi.json is what the code generates (and what the server
serves), every curl example of docs/api.md answers as the page says, and the reference page renders in a
real browser with no way out to the internet."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from notewell.api.docs import openapi_text
from rest_world import RestWorld

DOCS = Path(__file__).resolve().parent.parent / "docs"
FIX = "run `notewell docs` and commit the result"
CHROMIUM = Path("/usr/bin/chromium")
_BLOCK = re.compile(r"```sh\n# (\d{3})\n(.*?)```", re.S)


def test_committed_openapi_document_matches_the_code() -> None:
    committed = DOCS / "openapi.json"
    assert committed.is_file(), f"docs/openapi.json is missing: {FIX}"
    assert committed.read_text("utf-8") == openapi_text(), f"docs/openapi.json differs from the code: {FIX}"


@pytest.mark.parametrize("rest", ["sqlite"], indirect=True)
def test_the_server_serves_the_committed_document(rest: RestWorld) -> None:
    served = httpx.get(f"{rest.base}/openapi.json", timeout=30).json()
    assert served == json.loads((DOCS / "openapi.json").read_text("utf-8"))


@pytest.mark.parametrize("rest", ["sqlite"], indirect=True)
def test_every_curl_example_answers_as_documented(rest: RestWorld) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.fail("curl is not installed: apt-get install curl (.ci/run does it)")
    blocks = _BLOCK.findall((DOCS / "api.md").read_text("utf-8"))
    assert len(blocks) >= 15
    token = rest.call("POST", "/me/tokens", "admin_all", json={"scopes": ["knowledge:read", "memory:read",
                                                                     "memory:write", "sessions"]}).json()["secret"]
    env = {**os.environ, "NOTEWELL": rest.base.removesuffix("/api/v1"), "TOKEN": token,
           "REF": rest.refs["advisory"]}
    wrapper = "curl() { command curl -w '\\n%{http_code}' \"$@\"; }\n"
    for status, script in blocks:
        run = subprocess.run(["bash", "-euo", "pipefail", "-c", wrapper + script], capture_output=True, text=True,
                             env=env, timeout=60, check=False)
        assert run.returncode == 0, (script, run.stderr)
        body, _, answered = run.stdout.rpartition("\n")
        assert answered == status, (script, run.stdout)
        json.loads(body)  # every answer is JSON (a problem for the refusals)


@pytest.mark.parametrize("rest", ["sqlite"], indirect=True)
def test_the_reference_page_renders_offline_in_chromium(rest: RestWorld, tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.fail("chromium is not installed: apt-get install chromium (.ci/run does it)")
    page = httpx.get(f"{rest.base}/docs", timeout=30).text
    assert not re.search(r"""(src|href)=["']?https?://""", page), "the page must load nothing from elsewhere"
    # Any request off this machine goes to a proxy that does not exist; loopback bypasses proxies.
    run = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          f"--user-data-dir={tmp_path / 'profile'}", "--proxy-server=http://127.0.0.1:9",
                          "--virtual-time-budget=15000", "--dump-dom", f"{rest.base}/docs"],
                         capture_output=True, text=True, timeout=120, check=False)
    rendered = run.stdout
    operations = set(re.findall(r'opblock-summary-path" data-path="([^"]+)"', rendered))
    assert {"/me", "/memories", "/search", "/me/tokens"} <= operations, rendered[-2000:]
    assert "Notewell REST API" in rendered


@pytest.mark.parametrize("rest", ["sqlite"], indirect=True)
def test_a_nul_in_any_query_parameter_is_a_documented_400(rest: RestWorld) -> None:
    """Schemathesis found /me/tokens answering an undocumented 400: every operation may refuse a NUL."""
    document = json.loads((DOCS / "openapi.json").read_text("utf-8"))
    lacking = [f"{method.upper()} {path}" for path, operations in document["paths"].items()
               for method, operation in operations.items() if "400" not in operation["responses"]]
    assert not lacking, f"operations that do not document 400: {lacking}"
    answer = rest.get("/me/tokens", "alice_rw", params={"note": "a\x00b"})
    assert answer.status_code == 400 and answer.headers["content-type"].startswith("application/problem+json")
    assert answer.json()["field"] == "note"
