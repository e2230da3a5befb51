"""One project carried through the command line: notewell export --project, and its import (docs/operations.md).

The world is test_carry's (alice's work in "shared", her personal brain project "Robot Arm") and more: a coding
session of "shared" that applied its knowledge, carol's private memory in "shared", and carol's memory, taught
knowledge, session and note in "readonly". The export of "shared" holds its rows and none of "readonly"'s nor of
"Robot Arm"'s, every row of it names only rows it holds, and it loads into an empty store of either backend.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from brain_world import build_brain_world
from conftest import run_cli
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from notewell.store import open_store
from pg import PgCluster
from test_carry import export, files, person, populate

CAROLS_SECRET = "Carol's private gripper torque figure is 4.2 newton metres."


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """test_carry's populated SQLite store with rows in project "readonly" (B) beside "shared" (A), closed."""
    tmp = tmp_path_factory.mktemp("carry-project")
    world = build_brain_world(tmp, str(tmp / "source.db"))
    populate(world)
    rt = world.runtime
    rt.administration.grant(LOCAL_OWNER, "carol@example.test", "shared", "write")
    rt.administration.grant(LOCAL_OWNER, "carol@example.test", "readonly", "write")
    alice, carol = person(rt, "alice@example.test"), person(rt, "carol@example.test")
    rt.memory.remember(carol, CAROLS_SECRET, project="shared", private=True)
    taught = rt.brain.teach(alice, rule="Check the gripper torque before a demo", project_id="shared").item
    sid = rt.brain.start_session(alice, client_type="cursor", prompt="tune the shared gripper torque",
                                 project_id="shared").session.id
    rt.brain.log_event(alice, sid, "file_edit", {"path": "torque.py"})
    rt.brain.report_outcome(alice, sid, success=True, knowledge_used=[taught.ref])
    rt.notes.write_note(alice, "shared/torque.md", "# Torque\n\n4 Nm.\n", tool="test")
    changed = rt.notes.write_note(alice, "shared/torque.md", "# Torque\n\n5 Nm.\n", tool="test", overwrite=True)
    rt.journal.undo(alice, changed.journal_id, tool="test")
    rt.memory.remember(carol, "The readonly calibration table is in metres.", project="readonly", path="calib")
    other = rt.brain.teach(carol, rule="Calibrate the readonly arm weekly", project_id="readonly").item
    theirs = rt.brain.start_session(carol, client_type="cursor", prompt="calibrate the readonly arm",
                                    project_id="readonly").session.id
    rt.brain.log_event(carol, theirs, "file_edit", {"path": "calib.py"})
    rt.brain.report_outcome(carol, theirs, success=True, knowledge_used=[other.ref])
    rt.notes.write_note(carol, "readonly/calibration.md", "# Calibration\n\nWeekly.\n", tool="test")
    rt.close()
    return tmp / "source.db"


def rows(folder: Path, table: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / f"{table}.jsonl").read_text().splitlines()]


def export_project(db: str, folder: Path, project: str = "shared") -> dict[str, int]:
    result = run_cli("export", str(folder), "--db", db, "--project", project, "--json")
    assert result.exit_code == 0, result.output
    return {t["table"]: t["rows"] for t in json.loads(result.stdout)["tables"]}


def test_a_projects_export_holds_its_rows_alone(source: Path, tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    counted = export_project(str(source), folder)
    assert json.loads((folder / "manifest.json").read_text())["project"] == "shared"
    assert [p["id"] for p in rows(folder, "projects")] == ["shared", "~alice", "~bob", "~carol"]  # and their homes
    assert {g["project_id"] for g in rows(folder, "grants")} == {"shared"} and counted["grants"] == 3
    memories = rows(folder, "memories")
    assert {m["project"] for m in memories} == {"shared"}
    assert CAROLS_SECRET in [m["content"] for m in memories]  # the project's data, private ones included
    assert counted["memories"] == 7  # deploy (two), bob's forgotten one, carol's, the runbook's, two taught
    assert {k["project"] for k in rows(folder, "brain_knowledge")} == {"shared"}
    sessions = rows(folder, "brain_sessions")
    assert [s["prompt"] for s in sessions] == ["tune the shared gripper torque"]  # not Robot Arm's, not readonly's
    assert not rows(folder, "brain_projects")  # "shared" is its own brain project; Robot Arm lives in ~alice
    assert {j["project"] for j in rows(folder, "note_journal")} == {"shared"}
    audit = (folder / "audit_log.jsonl").read_text()
    assert "readonly" not in audit and "Robot Arm" not in audit and counted["audit_log"] > 0
    for table in ("tokens", "passwords", "sign_in_links", "sign_in_failures", "sign_in_keys", "idempotency_keys"):
        assert counted[table] == 0, table


def test_every_row_of_a_projects_export_names_only_rows_it_holds(source: Path, tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    export_project(str(source), folder)
    users = {u["id"] for u in rows(folder, "users")}
    assert {u["email"] for u in rows(folder, "users")} == {f"{h}@example.test" for h in ("alice", "bob", "carol")}
    assert not {"hash", "secret_hash"} & set(rows(folder, "users")[0])
    named = {m["author_user_id"] for m in rows(folder, "memories")} | {g["user_id"] for g in rows(folder, "grants")}
    named |= {s["user_id"] for s in rows(folder, "brain_sessions")}
    named |= {k["owner_user_id"] for k in rows(folder, "brain_knowledge")}
    named |= {a["user_id"] for a in rows(folder, "audit_log") + rows(folder, "note_journal")}
    named |= {p["owner_user_id"] for p in rows(folder, "projects") if p["owner_user_id"]}
    assert named - {LOCAL_OWNER.user_id} <= users
    memory_ids = {m["id"] for m in rows(folder, "memories")}
    assert {d["memory_id"] for d in rows(folder, "memory_documents")} <= memory_ids
    sessions = {s["id"] for s in rows(folder, "brain_sessions")}
    seqs = {s["seq"] for s in rows(folder, "brain_sessions")}
    knowledge = {k["ref"] for k in rows(folder, "brain_knowledge")}
    assert {e["session_id"] for e in rows(folder, "brain_events")} == sessions
    assert {w["session_seq"] for w in rows(folder, "brain_session_words")} == seqs
    applied = rows(folder, "brain_applications")
    assert applied and {a["session_id"] for a in applied} <= sessions and {a["knowledge_ref"] for a in applied} <= (
        knowledge)
    assert {p["knowledge_ref"] for p in rows(folder, "brain_skill_proposals")} <= knowledge


def test_a_projects_export_imports_into_an_empty_store_of_each_backend(source: Path, tmp_path: Path,
                                                                       pg_cluster: PgCluster) -> None:
    """Its memories read back through the service with their authors; carol's private one stays hers; and the
    project's export from PostgreSQL is the same bytes as from SQLite."""
    export_project(str(source), tmp_path / "shared")
    pg = pg_cluster.url(pg_cluster.create_database())
    for target in (pg, str(tmp_path / "imported.db")):
        result = run_cli("import", str(tmp_path / "shared"), "--db", target)
        assert result.exit_code == 0 and "counts and SHA-256 checked" in result.output, result.output
        rt = open_runtime(str(tmp_path), target)
        try:
            bob, carol = person(rt, "bob@example.test"), person(rt, "carol@example.test")
            found = [h.memory for h in rt.memory.recall(bob, "gripper").results]
            assert found and {m.project for m in found} == {"shared"}
            assert {rt.store.identity.user(m.author).email for m in found  # type: ignore[union-attr]
                    } <= {"alice@example.test", "bob@example.test"}
            assert CAROLS_SECRET not in [m.content for m in found]
            assert CAROLS_SECRET in [h.memory.content for h in rt.memory.recall(carol, "torque").results]
            assert rt.memory.remember(bob, "Bob's own reminder", private=True).memory.project == "~bob"  # his home
            alice = person(rt, "alice@example.test")
            assert [s.session.prompt for s in rt.brain.search_sessions(alice, "torque")] == [
                "tune the shared gripper torque"]
        finally:
            rt.close()
    whole = pg_cluster.url(pg_cluster.create_database())
    export(str(source), tmp_path / "whole")
    assert run_cli("import", str(tmp_path / "whole"), "--db", whole).exit_code == 0
    export_project(whole, tmp_path / "shared-pg")
    assert files(tmp_path / "shared-pg") == files(tmp_path / "shared")


def test_person_with_project_and_an_unknown_project_are_refused(source: Path, tmp_path: Path) -> None:
    both = run_cli("export", str(tmp_path / "e"), "--db", str(source), "--project", "shared", "--person",
                   "alice@example.test")
    assert both.exit_code == 1 and "--person and --project are two different exports" in both.output
    missing = run_cli("export", str(tmp_path / "e"), "--db", str(source), "--project", "apollo")
    assert missing.exit_code == 1 and "--project: no project has the id apollo" in missing.output
    assert not (tmp_path / "e").exists()


def test_a_merge_reuses_people_carried_before_and_refuses_another_account_with_their_email(
        source: Path, tmp_path: Path, pg_url: str) -> None:
    """A team moving "shared" into a store that took "readonly" from the same source: alice and carol are the
    target's rows already (the same ids) and stay; bob comes with the export. Into a store where bob has an
    account of his own, the merge is refused whole, naming him."""
    export_project(str(source), tmp_path / "readonly", "readonly")
    export_project(str(source), tmp_path / "shared")
    assert run_cli("import", str(tmp_path / "readonly"), "--db", pg_url).exit_code == 0
    merged = run_cli("import", str(tmp_path / "shared"), "--db", pg_url, "--merge", "--json")
    assert merged.exit_code == 0, merged.output
    loaded = {t["table"]: t["loaded"] for t in json.loads(merged.stdout)["tables"]}
    assert (loaded["users"], loaded["projects"], loaded["memories"]) == (1, 2, 7)  # bob and ~bob; not alice, carol
    rt = open_runtime(str(tmp_path), pg_url)
    try:
        carol = person(rt, "carol@example.test")
        assert {h.memory.project for h in rt.memory.recall(carol, "torque calibration").results} >= {"shared"}
    finally:
        rt.close()
    other = str(tmp_path / "other.db")
    rt = open_runtime(str(tmp_path), other)
    try:
        rt.administration.add_user(LOCAL_OWNER, "bob@example.test", "member", handle="robert")
    finally:
        rt.close()
    export(pg_url, tmp_path / "merged")
    journal = rows(tmp_path / "merged", "note_journal")
    by_id = {j["id"]: j for j in journal}
    undo = next(j for j in journal if j["action"] == "undo")  # renumbered past readonly's entry with what it undoes
    assert by_id[undo["undoes"]]["path"] == "torque.md" and by_id[undo["undoes"]]["after_version"] == undo[
        "before_version"]
    refused = run_cli("import", str(tmp_path / "shared"), "--db", other, "--merge")
    assert refused.exit_code == 1, refused.output
    assert "the export's user bob@example.test (handle bob" in refused.output
    assert "Import into a new store, or merge into one where that person has no account yet" in refused.output
    after = export(other, tmp_path / "after")
    assert {t["table"]: t["rows"] for t in after["tables"]}["memories"] == 0  # type: ignore[attr-defined, index]


def test_a_table_with_no_project_rule_stops_a_projects_export(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    open_store(str(db)).close()
    rt = open_runtime(str(tmp_path), str(db))
    try:
        rt.administration.add_project(LOCAL_OWNER, "apollo")
    finally:
        rt.close()
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE future_things (id TEXT PRIMARY KEY, what TEXT NOT NULL)")
    result = run_cli("export", str(tmp_path / "e"), "--db", str(db), "--project", "apollo")
    assert result.exit_code == 1
    assert "table future_things: no rule says which of its rows are a project's; add it to PROJECT_ROWS" in (
        result.output)


def test_a_homes_export_holds_its_personal_brain_projects_and_imports(source: Path, tmp_path: Path) -> None:
    """A home is a project too: its memories, the personal brain project under it (Robot Arm) with its session,
    and its owner; nothing of "shared"."""
    counted = export_project(str(source), tmp_path / "home", "~alice")
    assert [p["id"] for p in rows(tmp_path / "home", "projects")] == ["~alice"]
    assert [u["email"] for u in rows(tmp_path / "home", "users")] == ["alice@example.test"]
    assert [b["name"] for b in rows(tmp_path / "home", "brain_projects")] == ["Robot Arm"]
    assert [s["prompt"] for s in rows(tmp_path / "home", "brain_sessions")] == ["fix the gripper stall"]
    assert {m["project"] for m in rows(tmp_path / "home", "memories")} == {"~alice"} and counted["memories"] == 2
    assert counted["grants"] == 0 and "shared" not in (tmp_path / "home" / "audit_log.jsonl").read_text()
    target = str(tmp_path / "home.db")
    assert run_cli("import", str(tmp_path / "home"), "--db", target).exit_code == 0
    rt = open_runtime(str(tmp_path), target)
    try:
        alice = person(rt, "alice@example.test")
        assert [s.session.prompt for s in rt.brain.search_sessions(alice, "gripper")] == ["fix the gripper stall"]
    finally:
        rt.close()
