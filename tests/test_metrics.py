"""GET /metrics and /readyz of a served app (docs/operations.md, "Metrics and health"): scraped over HTTP and
read with prometheus-client's own parser, every family documented; /readyz answering 503 while the database
refuses connections and 200 again once it takes them."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from brain_world import BrainWorld, build_brain_world, call
from conftest import run_cli
from mcp_world import ServerThread, connect
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.timestamps import parse_iso
from pg import PgCluster

pytestmark = pytest.mark.anyio
SECRET = "scraper-secret-0123456789"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "operations.md"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[BrainWorld]:
    built = build_brain_world(tmp_path, str(tmp_path / "index.db"))
    yield built
    built.runtime.close()


def served(world: BrainWorld, *, metrics: bool = True, watch: bool = False) -> ServerThread:
    """The app on a thread, recorded in the store as `notewell serve` records itself (server id "srv-test")."""
    secret = hashlib.sha256(SECRET.encode()).hexdigest() if metrics else None
    options = ServeOptions(choose(None), metrics_secret_hash=secret, watch=watch, server_id="srv-test")
    server = ServerThread(build_app(world.runtime, options))
    world.runtime.servers.announce(options.server_id, base(server))
    return server


def base(server: ServerThread) -> str:
    return server.url.removesuffix("/mcp")


def scrape(server: ServerThread) -> dict[str, list[tuple[dict[str, str], float]]]:
    answer = httpx.get(base(server) + "/metrics", headers={"Authorization": f"Bearer {SECRET}"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {family.name: [({**s.labels, "sample": s.name}, s.value) for s in family.samples]
            for family in text_string_to_metric_families(answer.text)}


async def test_metrics_count_tool_calls_and_requests_and_show_the_store(world: BrainWorld) -> None:
    with served(world) as server:
        before = scrape(server)
        async with connect(server.url, world.tokens["alice"]) as client:
            await call(client, "brain_get_user_style", {})
            refused = await client.call_tool("brain_log_event", {"sessionId": "ses_nope", "eventType": "x"})
            assert refused.is_error
        me = httpx.get(base(server) + "/api/v1/me", headers={"Authorization": f"Bearer {world.tokens['bob']}"})
        assert me.status_code == 200
        families = scrape(server)
    calls = {(s["tool"], s["outcome"], s["reason"]): v for s, v in families["notewell_tool_calls"]
             if "tool" in s}
    earlier = {(s["tool"], s["outcome"], s["reason"]): v for s, v in before.get("notewell_tool_calls", [])
               if "tool" in s}
    assert calls[("brain_get_user_style", "ok", "-")] - earlier.get(("brain_get_user_style", "ok", "-"), 0) == 1
    assert calls[("brain_log_event", "error", "refused")] - earlier.get(("brain_log_event", "error", "refused"), 0) == 1
    assert any(s.get("route") == "/me" and s.get("status") == "200" for s, _ in families["notewell_requests"])
    buckets = [s for s, _ in families["notewell_tool_call_seconds"] if s.get("tool") == "brain_get_user_style"]
    assert any(s.get("le") == "+Inf" for s in buckets)
    rows = {s["table"]: v for s, v in families["notewell_store_rows"]}
    assert rows["users"] == 3 and rows["tokens"] == 6 and "memories" in rows
    assert families["notewell_index_documents"][0][1] == 3
    documented = set(re.findall(r"`(notewell_[a-z_]+)`", DOCS.read_text()))
    assert {name for name in families if name.startswith("notewell_")} <= documented


def test_metrics_show_the_watcher_leading_and_its_last_sync(world: BrainWorld) -> None:
    def value(families: dict[str, list[tuple[dict[str, str], float]]], name: str, **labels: str) -> float:
        return sum(v for s, v in families.get(name, []) if all(s.get(k) == x for k, x in labels.items()))

    with served(world, watch=True) as server:
        deadline = time.monotonic() + 20
        while value(families := scrape(server), "notewell_watch_last_sync_timestamp_seconds") == 0:
            assert time.monotonic() < deadline, "the watcher never synced"
            time.sleep(0.2)
        assert value(families, "notewell_watch_leading") == 1
        # a probe: on a quiet vault it stayed at the start-up sync, so the documented NotewellVaultNotSynced
        # alert fired on every healthy server after 10 minutes; with nothing waiting it says so each second
        synced = value(families, "notewell_watch_last_sync_timestamp_seconds")
        while value(families := scrape(server), "notewell_watch_last_sync_timestamp_seconds") <= synced:
            assert time.monotonic() < deadline + 10, "a quiet vault's watcher never said it was in line"
            time.sleep(0.2)
        # the lease's holder, named by the store's record: /metrics, /readyz and doctor alike
        assert value(families, "notewell_writer_lease_since_timestamp_seconds", server_id="srv-test") > 0
        leader = httpx.get(base(server) + "/readyz").json()["leader"]
        assert leader["serverId"] == "srv-test" and leader["pid"] == os.getpid() and leader["since"].endswith("Z")
        doctor = run_cli("doctor", "--db", world.runtime.store_url, "--vault", str(world.runtime.settings.vault),
                         "--json")
        watcher = next(c for c in json.loads(doctor.stdout) if c["check"] == "watcher")
        assert f"the lease is held by {socket.gethostname()} pid {os.getpid()}" in watcher["found"], watcher
        changed = value(families, "notewell_watch_syncs", changed="yes")
        (world.runtime.settings.vault / "shared" / "new.md").write_text("# New\n\nA kingfisher.\n")
        while value(families := scrape(server), "notewell_watch_syncs", changed="yes") == changed:
            assert time.monotonic() < deadline + 20, "the change was never synced"
            time.sleep(0.2)
        assert value(families, "notewell_index_documents") == 4
        assert value(families, "notewell_watch_sync_seconds", sample="notewell_watch_sync_seconds_count") >= 2


def test_metrics_want_the_secret_and_are_off_unless_asked_for(world: BrainWorld) -> None:
    with served(world) as server:
        for headers in ({}, {"Authorization": "Bearer wrong-secret-0123456789"}, {"Authorization": SECRET}):
            answer = httpx.get(base(server) + "/metrics", headers=headers)
            assert answer.status_code == 401 and answer.headers["www-authenticate"].startswith("Bearer")
            assert "notewell_" not in answer.text
        # a scraper names the server by its address: /metrics and /readyz answer any Host
        assert httpx.get(base(server) + "/readyz", headers={"Host": "10.0.0.7:8765"}).status_code == 200
    with served(world, metrics=False) as server:
        assert "notewell_" not in httpx.get(base(server) + "/metrics",
                                            headers={"Authorization": f"Bearer {SECRET}"}).text


def test_readyz_fails_while_a_newer_notewell_has_upgraded_the_store(world: BrainWorld) -> None:
    with served(world) as server:
        assert httpx.get(base(server) + "/readyz").status_code == 200
        with sqlite3.connect(world.runtime.store_url) as conn:
            conn.execute("INSERT INTO schema_migrations (component, version) VALUES ('documents', 99)")
        ahead = httpx.get(base(server) + "/readyz")
        assert ahead.status_code == 503
        assert re.fullmatch(r"the store's schema is newer than this server's \(documents 99 > \d+\): upgrade this "
                            "server", ahead.json()["reason"])
        with sqlite3.connect(world.runtime.store_url) as conn:
            conn.execute("DELETE FROM schema_migrations WHERE version = 99")
        assert httpx.get(base(server) + "/readyz").status_code == 200


def test_readyz_fails_while_the_database_refuses_and_recovers(tmp_path: Path, pg_cluster: PgCluster) -> None:
    name = pg_cluster.create_database()
    world = build_brain_world(tmp_path, pg_cluster.url(name))
    try:
        with served(world) as server:
            ready = httpx.get(base(server) + "/readyz")
            assert ready.status_code == 200 and ready.json()["documents"] == 3
            with pg_cluster.admin() as admin:
                admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
                admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
            down = httpx.get(base(server) + "/readyz", timeout=30)
            assert down.status_code == 503 and down.json()["reason"].startswith("store unreachable")
            assert "postgresql://" not in down.text
            with pg_cluster.admin() as admin:
                admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
            deadline = time.monotonic() + 30
            while (answer := httpx.get(base(server) + "/readyz", timeout=30)).status_code != 200:
                assert time.monotonic() < deadline, answer.text
                time.sleep(0.5)
    finally:
        world.runtime.close()


def test_metrics_show_the_queues_depth_and_the_oldest_due(world: BrainWorld) -> None:
    rt = world.runtime
    alice = rt.authentication.authenticate(world.tokens["alice"])
    started = rt.brain.start_session(alice, client_type="claude-code", prompt="fix the flaky upload test")
    rt.brain.log_event(alice, started.session.id, "command", {"cmd": "pytest", "ok": False})
    closed = rt.brain.report_outcome(alice, started.session.id, success=True, summary="use tmp_path, not /tmp")
    assert closed.queued  # a kea.extract job waits: this app runs no job runner
    with served(world) as server:
        families = scrape(server)
    queued = {(s["queue"], s["state"]): v for s, v in families["notewell_queue_items"]}
    assert queued[("jobs", "pending")] == 1 and queued[("jobs", "failed")] == 0
    assert {"queued", "failing"} == {state for queue, state in queued if queue == "embedding"}
    due = {s["queue"]: v for s, v in families["notewell_queue_oldest_due_timestamp_seconds"]}
    (job,) = rt.store.jobs.listing(state="pending", limit=5)
    assert set(due) == {"jobs"} and due["jobs"] == parse_iso(job.next_at or job.created_at).timestamp()
