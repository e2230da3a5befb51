"""Log lines on stderr carry their UTC time, as text or (--log-format json) as one JSON object of the same fields."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_cli
from notewell.mcp import log

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


@pytest.fixture(autouse=True)
def restored_logging() -> Iterator[None]:
    saved = [(logger, list(logger.handlers), logger.level, logger.propagate)
             for logger in (logging.getLogger("notewell"), logging.getLogger("psycopg"))]
    yield
    for logger, handlers, level, propagate in saved:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_database_drivers_warnings_are_lines_of_their_own(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """psycopg's pool said "error connecting in 'notewell': ..." on stderr as a bare line while a database was
    down: it is an op= line, as text or JSON, like every other; its info lines stay out."""
    log.setup("info", fmt)
    logging.getLogger("psycopg.pool").warning("error connecting in %r: %s", "notewell", "connection refused")
    logging.getLogger("psycopg.pq").error("a driver's error")
    logging.getLogger("psycopg.pool").info("a pool's info line")
    first, second = capsys.readouterr().err.splitlines()
    if fmt == "json":
        assert {k: json.loads(first)[k] for k in ("op", "level", "message")} == {
            "op": "store.pool", "level": "warning", "message": "error connecting in 'notewell': connection refused"}
        assert json.loads(second)["op"] == "store.driver"
        return
    assert re.fullmatch(rf"{ISO} op=store\.pool level=warning message=\"error connecting in 'notewell': "
                        r"connection refused\"", first), first
    assert re.fullmatch(rf"{ISO} op=store\.driver level=error message=\"a driver's error\"", second), second


def test_a_text_line_starts_with_its_utc_time(capsys: pytest.CaptureFixture[str]) -> None:
    log.setup("info", "text")
    log.event("mcp.tool", tool="searchKnowledge", durMs="1.25", outcome="ok")
    logging.getLogger("notewell.watch").info("op=watch.leader state=%s vault=%s", "following", "/srv/my vault")
    first, second = capsys.readouterr().err.splitlines()
    assert re.fullmatch(rf"{ISO} op=mcp\.tool tool=searchKnowledge durMs=1\.25 outcome=ok", first), first
    assert re.fullmatch(rf"{ISO} op=watch\.leader state=following vault=/srv/my vault", second), second


def test_a_json_line_holds_the_same_fields(capsys: pytest.CaptureFixture[str]) -> None:
    log.setup("info", "json")
    log.event("mcp.tool", tool="recall", durMs="3.5", outcome="error", reason="refused", user='ann "a" b')
    logging.getLogger("notewell.server").warning("task %s failed", "watcher")
    first, second = (json.loads(line) for line in capsys.readouterr().err.splitlines())
    assert re.fullmatch(ISO, first.pop("at"))
    assert first == {"level": "info", "logger": "notewell.mcp", "op": "mcp.tool", "tool": "recall", "durMs": "3.5",
                     "outcome": "error", "reason": "refused", "user": 'ann "a" b'}
    assert second["message"] == "task watcher failed" and second["level"] == "warning"


def test_a_wrong_log_format_names_its_source(tmp_path: Path) -> None:
    result = run_cli("serve", "--log-format", "xml", "--db", f"{tmp_path}/index.db", "--vault", str(tmp_path))
    assert result.exit_code == 1 and "--log-format: 'xml' is not a log format; use one of text, json" in result.output


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_served_http_door_says_where_it_listens_in_the_log_form(tmp_path: Path, fmt: str) -> None:
    """`notewell serve` wrote its first lines (where MCP, REST and the pages are) as plain sentences wrapped at 80
    columns: no time, and no JSON under --log-format json. Now every line on stderr is a log line."""
    import subprocess
    import sys
    import threading

    from mcp_world import free_port

    (tmp_path / "apollo").mkdir()
    (tmp_path / "apollo" / "a.md").write_text("# A\n", encoding="utf-8")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "notewell", "serve", "--vault", str(tmp_path), "--db",
                               str(tmp_path / "index.db"), "--port", str(port), "--host", "0.0.0.0",
                               "--log-format", fmt], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    lines: list[str] = []
    said: list[str] = []  # what it writes once it listens, read on (a pipe left full would block its writes)
    try:
        assert server.stderr is not None
        while not any("serve.listening" in seen for seen in lines):
            got = server.stderr.readline()
            assert got, lines  # the server ended before saying where it listens
            lines.append(got.rstrip("\n"))
        drain = threading.Thread(target=lambda: said.extend(server.stderr or []), daemon=True)
        drain.start()
    finally:
        server.terminate()
        try:
            server.wait(timeout=90)
        except subprocess.TimeoutExpired:
            server.kill()
            raise AssertionError(f"serve did not stop within 90 s of SIGTERM; it said: {lines + said}") from None
    if fmt == "json":
        parsed = [json.loads(seen) for seen in lines]
        listening = next(p for p in parsed if p["op"] == "serve.listening")
        assert listening["mcp"] == f"http://127.0.0.1:{port}/mcp" and listening["listen"] == f"0.0.0.0:{port}"
        assert any(p["op"] == "serve.hosts" and p["level"] == "warning" for p in parsed)
    else:
        assert all(re.match(ISO + " op=", seen) for seen in lines), lines
        assert any(f" rest=http://127.0.0.1:{port}/api/v1 " in seen for seen in lines)
