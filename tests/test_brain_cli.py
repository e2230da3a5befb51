"""notewell brain: projects, sessions, knowledge, teach, retire and export, with --json, on both stores."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from brain_world import build_brain_world
from conftest import run_cli
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER


@pytest.fixture
def where(store_url: str, tmp_path: Path) -> list[str]:
    world = build_brain_world(tmp_path, store_url)
    svc, user = world.runtime.brain, world.runtime.store.identity.user_by_email("alice@example.test")
    assert user is not None
    alice = user_principal(user)
    project, _ = svc.create_project(alice, "Acme Robotics")
    started = svc.start_session(alice, prompt="calibrate the gripper", project_id=project.id)
    svc.log_event(alice, started.session.id, "file_edit", {"file": "grip.py"})
    svc.report_outcome(alice, started.session.id, success=True, summary="calibrated")
    world.runtime.administration.add_user(LOCAL_OWNER, "dora@example.test", "member", handle="dora")
    world.runtime.close()
    return ["--vault", str(world.runtime.settings.vault), "--db", store_url, "--as", "alice@example.test"]


def cli_json(*args: str) -> Any:
    result = run_cli(*args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_teach_list_retire_and_export(where: list[str], tmp_path: Path) -> None:
    taught = cli_json("brain", "teach", "zero the torque sensor first", "--trigger", "when calibrating",
                      "--type", "reflex", "--project", "~alice/acme-robotics", "--tag", "robots", *where)
    assert taught["created"] and taught["confidence"] == 1.0 and taught["projectId"] == "~alice/acme-robotics"
    assert taught["stage"] == "seed" and taught["tags"] == ["reflex", "robots"]
    listed = cli_json("brain", "knowledge", "--type", "reflex", *where)["knowledge"]
    assert [k["id"] for k in listed] == [taught["id"]]
    projects = cli_json("brain", "projects", *where)["projects"]
    assert projects[0] == {"id": "~alice/acme-robotics", "slug": "acme-robotics", "name": "Acme Robotics",
                           "isOwn": True, "framework": None, "language": None, "createdAt": projects[0]["createdAt"]}
    sessions = cli_json("brain", "sessions", "--query", "gripper", *where)["sessions"]
    assert [(s["prompt"], s["success"], s["summary"]) for s in sessions] == [("calibrate the gripper", True,
                                                                               "calibrated")]
    table = run_cli("brain", "sessions", *where, env={"COLUMNS": "200"})
    assert table.exit_code == 0 and sessions[0]["sessionId"] in table.stdout and "success" in table.stdout

    out = tmp_path / "brain.json"
    done = run_cli("brain", "export", str(out), *where)
    assert done.exit_code == 0, done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    exported = json.loads(out.read_text("utf-8"))
    assert [k["id"] for k in exported["knowledge"]] == [taught["id"]]
    assert exported["knowledge"][0]["ownerUserId"] == exported["userId"] and not exported["knowledge"][0]["private"]
    assert [e["eventType"] for e in exported["sessions"][0]["events"]] == ["file_edit"]

    retired = cli_json("brain", "retire", taught["id"], "--reason", "superseded by the new sensor", *where)
    assert retired["retiredAt"] is not None
    assert cli_json("brain", "knowledge", *where)["knowledge"] == []
    again = run_cli("brain", "retire", taught["id"], "--reason", "x", *where)
    assert again.exit_code == 1 and "NOT_FOUND" in again.stderr and "Traceback" not in again.stderr


def test_refusals_name_the_fix(where: list[str]) -> None:
    vault_db = where[:4]
    unknown = run_cli("brain", "sessions", *vault_db, "--as", "nobody@example.test")
    assert unknown.exit_code == 1 and "--as: no active user with email nobody@example.test" in unknown.stderr
    bad = run_cli("brain", "knowledge", "--type", "rumour", *where)
    assert bad.exit_code == 1 and "--type: unknown type 'rumour'" in bad.stderr
    empty = run_cli("brain", "teach", "  ", *where)
    assert empty.exit_code == 1 and "error: rule: must not be empty" in empty.stderr
    outside = run_cli("brain", "teach", "x", "--project", "~alice/acme-robotics", *vault_db,
                      "--as", "dora@example.test")
    assert outside.exit_code == 1 and "FORBIDDEN_PROJECT" in outside.stderr


def test_session_search_says_how_each_session_was_found_and_when_by_words_only(where: list[str],
                                                                               tmp_path: Path) -> None:
    """MCP's brain_session_search and REST's /sessions/search say how each session was found and when meaning
    could not be used; `brain sessions --query --json` gave the bare sessions, and neither form said words only."""
    assert run_cli("embed", *where[:4]).exit_code == 0
    found = cli_json("brain", "sessions", "--query", "gripper calibration", *where)
    assert "wordsOnly" not in found
    first = found["sessions"][0]
    assert first["prompt"] == "calibrate the gripper" and first["foundBy"] == ["words", "meaning"], first
    assert first["similarity"] > 0.45 and 0 < first["score"] <= 1
    missing = {"NOTEWELL_EMBEDDING_MODEL": str(tmp_path / "no-model.onnx")}
    words = run_cli("brain", "sessions", "--query", "gripper", *where, "--json", env=missing)
    said = json.loads(words.stdout)
    assert said["wordsOnly"].startswith("the embedding model is not available on this server"), said
    assert said["sessions"][0]["foundBy"] == ["words"] and said["sessions"][0]["similarity"] is None
    table = run_cli("brain", "sessions", "--query", "gripper", *where, env=missing)
    assert "found by words only: the embedding model is not available" in " ".join(table.stderr.split())
    assert "foundBy" not in cli_json("brain", "sessions", *where)["sessions"][0]  # no query: newest first
