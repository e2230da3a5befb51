"""A KEA provider that accepts connections and never answers, on SQLite and PostgreSQL: a real socket server in the
test process (no HTTP client mocked; the real openai SDK calls it), with KEA_TIMEOUT_SECONDS and
KEA_BREAKER_SECONDS set short and long through the environment. Through the MCP door: the first close that
carries learnings waits one timeout and the deterministic judge judges; the next makes no call (the breaker).
Through `notewell worker --drain`: one call for the whole queue, the other mining jobs (and the day's cross
extraction) deferred to the breaker's end without a try counted, the job that calls no model (evolution) done,
and the drain over in seconds, not 120 s per call."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from brain_world import BrainWorld, brain_world_with_env, call, serve_brain
from conftest import run_cli
from loop_world import Clock
from mcp_world import connect
from notewell.config import kea_settings
from notewell.services.jobs import Deferred
from notewell.services.kea_extractor import RuleMiner
from notewell.services.kea_llm import LlmExtractor
from notewell.services.kea_providers import ProviderError
from notewell.services.kea_routing import route
from notewell.store import open_store
from notewell.timestamps import parse_iso
from test_kea import unique
from test_kea_llm_refine import _given, _material, learnings_for

TIMEOUT = 1.0
TIMED_OUT = "APITimeoutError|CallTimedOut"  # the SDK's read timeout, or KEA's bound on the whole call: both at TIMEOUT
BREAKER = 3600.0  # longer than any test here: a held call is never tried again during it
DRAIN_MAX = 90.0  # the worker's drain: seconds with the breaker; 120 s per job without (it is then killed)


_REFUSAL = b'{"error": {"message": "no such model", "type": "not_found"}}'
NOT_FOUND = (b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\nconnection: close\r\n"
             b"content-length: " + str(len(_REFUSAL)).encode() + b"\r\n\r\n" + _REFUSAL)


class Silent:
    """A TCP server that accepts every connection and never answers it (until a test sets ``reply``: then it
    answers each request so); ``accepted`` counts the connections."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"
        self.held: list[socket.socket] = []
        self.reply: bytes | None = None
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def accepted(self) -> int:
        return len(self.held)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.held.append(conn)
            if self.reply is not None:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(65536)
                head, _, body = request.partition(b"\r\n\r\n")
                length = next(int(h.split(b":")[1]) for h in head.split(b"\r\n")
                              if h.lower().startswith(b"content-length:"))
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(self.reply)

    def close(self) -> None:
        self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (closing alone would not)
        self.listener.close()
        self.thread.join()
        for conn in self.held:
            conn.close()


@pytest.fixture(scope="module")
def silent() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.close()


@pytest.fixture(scope="module")
def env(silent: Silent) -> dict[str, str]:
    return {"KEA_MODEL": "llama3-local", "KEA_BASE_URL": silent.url, "KEA_TIMEOUT_SECONDS": str(TIMEOUT),
            "KEA_BREAKER_SECONDS": str(BREAKER)}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          env: dict[str, str]) -> Iterator[BrainWorld]:
    yield from brain_world_with_env(request, tmp_path_factory.mktemp("kea_silent"), env)


@pytest.mark.anyio
async def test_after_a_call_left_unanswered_a_close_judges_its_learnings_without_calling_again(
        world: BrainWorld, silent: Silent) -> None:
    assert isinstance(world.runtime.brain.extractor, LlmExtractor)
    before = silent.accepted
    with serve_brain(world) as server:
        async with connect(server.url, world.tokens["alice"]) as c:
            for _ in range(2):
                topic = unique("payroll")
                session = (await call(c, "brain_start_session", {"prompt": f"export the {topic} report",
                                                                 "projectId": "shared"}))["sessionId"]
                closed = await call(c, "brain_report_session_outcome", {
                    "sessionId": session, "success": True, "learnings": learnings_for(topic)})
                # the deterministic judge kept the durable ones: new, or (the second close's, the same rule under
                # another topic) deduplicated into the first's once its vector has landed
                judged = closed["learnings"]
                assert judged.get("captured") or judged.get("deduplicated"), closed
    assert silent.accepted - before == 1  # the first close's call; the second's was held by the breaker


@pytest.mark.anyio
async def test_a_worker_drains_past_a_silent_provider_in_one_call_deferring_the_other_mining_jobs(
        world: BrainWorld, silent: Silent, env: dict[str, str]) -> None:
    rt = world.runtime
    args = ("--vault", str(rt.settings.vault), "--db", rt.settings.db)
    sessions = []
    with serve_brain(world) as server:  # no job runner: the worker runs the queue
        async with connect(server.url, world.tokens["alice"]) as c:
            for _ in range(3):  # closed without learnings: each queues a mining job
                session = (await call(c, "brain_start_session", {"prompt": f"tune the {unique('cache')} eviction",
                                                                 "projectId": "shared"}))["sessionId"]
                await call(c, "brain_report_session_outcome", {"sessionId": session, "success": False})
                sessions.append(session)
    before, started = silent.accepted, datetime.now(UTC)
    drained = subprocess.run([sys.executable, "-m", "notewell", "worker", "--drain", *args],
                             env={**os.environ, **env}, capture_output=True, text=True, timeout=DRAIN_MAX, check=False)
    assert drained.returncode == 0, drained.stderr
    assert silent.accepted - before == 1, drained.stderr  # one call for the whole queue
    assert "op=kea.breaker state=open" in drained.stderr and "op=jobs.deferred" in drained.stderr
    listed = run_cli("jobs", "--json", "--limit", "500", *args, env=env)
    assert listed.exit_code == 0, listed.stderr
    jobs = json.loads(listed.stdout)["jobs"]
    mining = sorted((j for j in jobs if j["kind"] == "kea.extract" and j["payload"]["sessionId"] in sessions),
                    key=lambda j: -j["attempts"])
    assert [(j["state"], j["attempts"]) for j in mining] == [("pending", 1), ("pending", 0), ("pending", 0)]
    assert re.search(TIMED_OUT, mining[0]["lastError"])  # the call that timed out: a try, retried with the backoff
    for job in [*mining[1:], *(j for j in jobs if j["kind"] == "kea.cross_extract")]:
        assert job["state"] == "pending" and job["attempts"] == 0, job
        assert "left a call unanswered: its calls are held until" in job["lastError"], job
        assert parse_iso(job["nextAt"]) >= started + timedelta(seconds=BREAKER / 2), job  # no tight loop
    assert [j["state"] for j in jobs if j["kind"] == "evolution.run"] == ["done"]  # no model: not held


def test_the_breaker_holds_calls_for_its_time_then_tries_again_and_an_answer_closes_it(store_url: str) -> None:
    """Through the extractor, on the runner's clock (a test's): held calls make no connection."""
    store, server = open_store(store_url), Silent()
    clock = Clock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    period = timedelta(seconds=600)
    try:
        kea = kea_settings({"KEA_MODEL": "llama3-local", "KEA_BASE_URL": server.url, "KEA_TIMEOUT_SECONDS": "0.5",
                            "KEA_BREAKER_SECONDS": "600"})
        to = route(kea)
        assert to is not None
        llm = LlmExtractor(to, kea, store.kea_budget, clock)
        for tried in (1, 2):  # unanswered; held for the period (a close judges alone); then tried again
            with pytest.raises(ProviderError, match=TIMED_OUT):
                llm.mine(_material())
            with pytest.raises(Deferred) as held:
                llm.mine(_material())
            assert held.value.until == clock.now + period and server.accepted == tried
            assert llm.refine(_given(), _material()) == RuleMiner().refine(_given(), _material())
            clock.now += period
        server.reply = NOT_FOUND  # the provider answers again, refusing: an answer closes the breaker
        for tried in (3, 4):
            with pytest.raises(ProviderError, match="NotFoundError"):
                llm.mine(_material())
            assert server.accepted == tried
    finally:
        server.close()
        store.close()


@pytest.mark.parametrize(("name", "value", "bounds"), [("KEA_TIMEOUT_SECONDS", "0", "from 0.1 to 240"),
                                                       ("KEA_TIMEOUT_SECONDS", "600", "from 0.1 to 240"),
                                                       ("KEA_BREAKER_SECONDS", "soon", "from 1 to 86400"),
                                                       ("KEA_BREAKER_SECONDS", "nan", "from 1 to 86400")])
def test_a_timeout_or_breaker_setting_out_of_bounds_is_refused_naming_it(name: str, value: str, bounds: str) -> None:
    result = run_cli("doctor", "--json", env={"KEA_MODEL": "llama3", name: value})
    checks = json.loads(result.stdout)
    assert result.exit_code == 1 and [c["check"] for c in checks] == ["settings"], result.stdout
    assert checks[0]["found"].startswith(f"{name}: '{value}' is not a number of seconds {bounds}"), checks
    assert checks[0]["fix"].startswith(f"fix {name} as the message says, or unset it"), checks
    worker = run_cli("worker", "--drain", env={"KEA_MODEL": "llama3", name: value})
    assert worker.exit_code == 1 and f"{name}: '{value}' is not a number of seconds" in worker.stderr


class Trickling:
    """A provider that answers its headers at once, then its body one byte every ``gap`` seconds: each read
    comes within any read timeout, the whole answer never within KEA_TIMEOUT_SECONDS."""

    def __init__(self, gap: float) -> None:
        self.gap = gap
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n")
            while not self.stop.wait(self.gap):
                try:
                    conn.sendall(b" ")  # JSON's white space, for as long as the test lasts
                except OSError:  # the client went away
                    return

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
        self.thread.join(timeout=10)


def test_a_provider_trickling_its_answer_is_cut_at_the_timeout_and_opens_the_breaker(store_url: str) -> None:
    """The SDK's timeout bounds each read: an answer sent a byte every 0.2 s was waited for as long as it went on."""
    store, server = open_store(store_url), Trickling(gap=0.2)
    clock = Clock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    try:
        kea = kea_settings({"KEA_MODEL": "llama3-local", "KEA_BASE_URL": server.url, "KEA_TIMEOUT_SECONDS": "1",
                            "KEA_BREAKER_SECONDS": "600"})
        to = route(kea)
        assert to is not None
        llm = LlmExtractor(to, kea, store.kea_budget, clock)
        waited = threading.Event()
        failed: list[BaseException] = []

        def mine() -> None:
            try:
                llm.mine(_material())
            except BaseException as exc:
                failed.append(exc)
            finally:
                waited.set()

        threading.Thread(target=mine, daemon=True).start()
        assert waited.wait(30), "the call was still waiting 30 s after a 1 s timeout"
        assert len(failed) == 1 and isinstance(failed[0], ProviderError), failed
        assert "CallTimedOut" in str(failed[0])
        with pytest.raises(Deferred):  # unanswered: the breaker holds the next call
            llm.mine(_material())
    finally:
        server.close()
        store.close()
