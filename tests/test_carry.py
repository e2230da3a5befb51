"""Carrying a whole store through the command line: notewell export, import and migrate (docs/operations.md).

The world is the brain world (people, grants, tokens) with memories written, superseded, forgotten and kept
private, a coding session with events, an outcome and a captured learning, taught knowledge, a password and
a failed sign-in: every carried table holds rows. The round trip goes SQLite -> export -> PostgreSQL ->
export -> SQLite -> export, and every export's files and manifest are byte-identical.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import tarfile
from pathlib import Path

import pytest

from brain_world import BrainWorld, build_brain_world
from conftest import run_cli
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.errors import Forbidden, Unauthenticated
from notewell.records.brain import ProposalInput
from notewell.runtime import Runtime, open_runtime
from notewell.services.idempotency import Answer
from notewell.store import open_store
from notewell.store.shared.tables import EXCLUDED_TABLES
from pg import PgCluster
from schema_dump import postgres_schema, sqlite_schema

RECALLED = "gripper"
# SQLite's FTS5 tables keep shadow tables named after them (document_trigrams_0 is the documents' index)
FTS_SHADOWS_OF = ("memory_words_", "memory_stems_", "brain_session_words_", "document_trigrams_")


def person(rt: Runtime, email: str) -> Principal:
    """The user with every scope their role allows."""
    found = rt.store.identity.user_by_email(email)
    assert found is not None
    return user_principal(found)


def populate(world: BrainWorld) -> None:
    rt = world.runtime
    alice, bob = (person(rt, f"{h}@example.test") for h in ("alice", "bob"))
    first = rt.memory.remember(alice, "The gripper firmware is flashed with the staging key.", project="shared",
                               path="deploy", tags=["firmware"])
    rt.memory.remember(alice, "The gripper firmware is flashed with the production key now.", project="shared",
                       path="deploy", supersedes=first.memory.ref)
    gone = rt.memory.remember(bob, "A gripper note nobody needs", project="shared", path="scratch")
    rt.memory.forget(bob, gone.memory.ref, "obsolete")
    rt.memory.remember(alice, "My private gripper reminder \u00e9\u4e2d\U0001f600", private=True)
    taught = rt.brain.teach(alice, rule="Flash with the staging key first", trigger="deploying gripper firmware",
                            project_id="shared").item
    started = rt.brain.start_session(alice, client_type="claude-code", prompt="fix the gripper stall",
                                     project_name="Robot Arm")
    sid = started.session.id
    rt.brain.log_event(alice, sid, "file_edit", {"path": "arm.py", "lines": 3, "ok": True})
    rt.brain.report_outcome(alice, sid, success=True, user_feedback="up", summary="lowered the limit",
                            knowledge_used=[taught.ref],
                            learnings=[{"trigger": "when the gripper stalls", "rule": "lower the acceleration limit",
                                        "rationale": "the servo overheats", "type": "recipe",
                                        "source": "discovery", "confidence": 0.7}])
    rt.store.brain.add_proposal(ProposalInput(  # what an autoskill.run job makes (tests/test_autoskill.py)
        "key-1", "add_steps", taught.ref, None, alice.user_id, "shared", sid, "recipe",
        "Flash with the staging key first. Then: make flash.", f"session {sid} succeeded", started.session.started_at))
    rt.notes.write_note(alice, "shared/gripper-runbook.md", "# Gripper\n\nFlash, then test.\n", tool="test")
    rt.memory.remember(alice, "The gripper runbook skips the torque test.", project="shared",
                       about="shared/gripper-runbook.md")
    rt.sign_in.make_link(LOCAL_OWNER, "bob@example.test", "http://localhost:8765")
    rt.idempotency.once(alice, "key-1", "fingerprint", lambda: None, lambda: Answer(201, {"ref": "m"}, "/m"))
    rt.sign_in.set_password(LOCAL_OWNER, "alice@example.test", "correct horse battery staple")
    with pytest.raises(Unauthenticated):
        rt.sign_in.sign_in_with_password("alice@example.test", "wrong password", "127.0.0.1")


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A populated SQLite store (closed), shared by the module's tests: they only read it."""
    tmp = tmp_path_factory.mktemp("carry")
    world = build_brain_world(tmp, str(tmp / "source.db"))
    populate(world)
    world.runtime.close()
    return tmp / "source.db"


def export(db: str, folder: Path) -> dict[str, object]:
    result = run_cli("export", str(folder), "--db", db, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_every_carried_table_holds_rows_in_the_world(source: Path, tmp_path: Path) -> None:
    """The round trip below proves something only if every table it carries has rows to lose."""
    exported = export(str(source), tmp_path / "e")
    empty = [t["table"] for t in exported["tables"] if not t["rows"]]  # type: ignore[attr-defined, index]
    assert not empty


def test_an_older_export_brings_no_text_typed_at_a_failed_sign_in(source: Path, tmp_path: Path) -> None:
    """An earlier version kept what was typed as the email of a failed sign-in (maybe a password) in the throttle's
    keys and the audit log; its migrations dropped it from its own store, not from an export it wrote."""
    import shutil
    import sqlite3

    older = tmp_path / "older.db"
    shutil.copy(source, older)
    with sqlite3.connect(older) as conn:  # as the earlier version wrote them
        conn.execute("INSERT INTO sign_in_keys (key) VALUES ('email:adapassword1!')")
        conn.execute("INSERT INTO sign_in_failures (key, at, attempt) VALUES ('email:adapassword1!',"
                     " '2026-03-02T08:55:00.000000Z', 'a1')")
        conn.execute("INSERT INTO audit_log (at, user_id, token_id, action, target, detail) VALUES"
                     " ('2026-03-02T08:55:00.000000Z', '-', NULL, 'auth.sign_in_failed', 'adapassword1!', '{}')")
    export(str(older), tmp_path / "e")
    target = tmp_path / "target.db"
    done = run_cli("import", str(tmp_path / "e"), "--db", str(target))
    assert done.exit_code == 0, done.output
    with sqlite3.connect(target) as conn:
        for table in ("sign_in_keys", "sign_in_failures", "audit_log"):
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            assert not [r for r in rows if "password1" in str(r)], table


def test_a_store_made_in_an_empty_file_made_beforehand_is_private(source: Path, tmp_path: Path) -> None:
    """`touch e.db` (0644) then an import or a restore into it kept 0644: a store readable by anyone on the
    machine, private memories and all."""
    exported = tmp_path / "e"
    export(str(source), exported)
    for command in (["import", str(exported)], ["restore", str(source)]):
        target = tmp_path / f"{command[0]}.db"
        target.touch()
        target.chmod(0o644)
        done = run_cli(*command, "--db", str(target))
        assert done.exit_code == 0, done.output
        assert target.stat().st_mode & 0o777 == 0o600, command


def test_exports_are_private_to_their_owner_whatever_the_umask_or_the_folder(source: Path, tmp_path: Path) -> None:
    """An empty folder made beforehand kept its mode (777) and the tables came 644; memory export wrote private
    memories 644 in 755 folders."""
    made = tmp_path / "made"
    made.mkdir()
    made.chmod(0o777)
    old = os.umask(0o022)
    try:
        export(str(source), made)
        memories = run_cli("memory", "export", str(tmp_path / "mex"), "--db", str(source), "--all")
        assert memories.exit_code == 0, memories.output
    finally:
        os.umask(old)
    assert made.stat().st_mode & 0o777 == 0o700
    assert {p.stat().st_mode & 0o777 for p in made.iterdir()} == {0o600}
    written = list((tmp_path / "mex").rglob("*"))
    assert written and {p.stat().st_mode & 0o777 for p in written} <= {0o700, 0o600}
    assert any(p.is_file() for p in written) and (tmp_path / "mex").stat().st_mode & 0o777 == 0o700


def test_sqlite_to_postgres_and_back_is_byte_identical(source: Path, tmp_path: Path, pg_cluster: PgCluster) -> None:
    first, second, third = tmp_path / "first", tmp_path / "second", tmp_path / "third"
    export(str(source), first)
    pg = pg_cluster.url(pg_cluster.create_database())
    result = run_cli("import", str(first), "--db", pg)
    assert result.exit_code == 0, result.output
    assert "counts and SHA-256 checked" in result.output
    export(pg, second)
    assert files(second) == files(first)
    back = str(tmp_path / "back.db")
    assert run_cli("import", str(second), "--db", back).exit_code == 0
    export(back, third)
    assert files(third) == files(first)


def test_the_imported_store_answers_as_the_source(source: Path, tmp_path: Path, pg_cluster: PgCluster) -> None:
    """Search indexes are rebuilt on import: recall, strict search, session search and passwords work on the
    target, private memories stay private, and forgotten ones stay out (the same sets: each backend ranks its own
    way)."""
    export(str(source), tmp_path / "e")
    pg = pg_cluster.url(pg_cluster.create_database())
    lite = str(tmp_path / "imported.db")
    for target in (pg, lite):
        assert run_cli("import", str(tmp_path / "e"), "--db", target).exit_code == 0
    answers = []
    for db in (str(source), pg, lite):
        rt = open_runtime(str(tmp_path), db)
        try:
            as_alice, bob = person(rt, "alice@example.test"), person(rt, "bob@example.test")
            answers.append((
                sorted(h.memory.ref for h in rt.memory.recall(as_alice, RECALLED).results),
                sorted(h.memory.ref for h in rt.memory.recall(bob, RECALLED).results),
                sorted(h.memory.ref for h in rt.memory.search_memory(as_alice, "production").results),
                sorted(s.session.id for s in rt.brain.search_sessions(as_alice, "acceleration")),
                rt.sign_in.sign_in_with_password("alice@example.test", "correct horse battery staple",
                                                 "127.0.0.1").id,
            ))
            if db != str(source):  # vectors are not carried: every live memory and session waits to be embedded
                state = rt.meaning.state()
                assert state.vectors == 0 and state.queued == state.items > 0
        finally:
            rt.close()
    assert answers[0] == answers[1] == answers[2]
    mine, bobs, strict, sessions, _ = answers[0]
    # alice: the shared ones bob sees, her private memory and the learning captured in her own brain project
    assert set(bobs) < set(mine) and len(mine) == len(bobs) + 2 and len(strict) == 1 and sessions


def test_every_table_is_carried_or_excluded_with_a_reason_alike_on_both_backends(tmp_path: Path,
                                                                                 pg_url: str) -> None:
    """Read from each fresh database's own catalog: every table is in the export or excluded with a reason, and
    both backends carry the same tables with the same columns."""
    db = tmp_path / "index.db"
    open_store(str(db)).close()
    manifests = []
    open_store(pg_url).close()
    for store, tables in ((str(db), set(sqlite_schema(db))), (pg_url, set(postgres_schema(pg_url)))):
        export(store, tmp_path / str(len(manifests)))
        manifest = json.loads((tmp_path / str(len(manifests)) / "manifest.json").read_text())
        carried = set(manifest["tables"])
        excluded = {t for t in tables - carried if t in EXCLUDED_TABLES or t.startswith(FTS_SHADOWS_OF)}
        assert carried | excluded == tables, tables - carried - excluded
        assert all(EXCLUDED_TABLES[t] for t in excluded if t in EXCLUDED_TABLES)  # each with its reason
        manifests.append(manifest)
    assert manifests[0] == manifests[1]
    assert {"users", "tokens", "memories", "brain_sessions", "brain_session_words", "audit_log"} <= set(
        manifests[0]["tables"])


def test_a_new_table_is_carried_and_a_column_it_cannot_carry_stops_the_export(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    open_store(str(db)).close()
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE future_things (id TEXT PRIMARY KEY, what TEXT NOT NULL)")
        conn.execute("INSERT INTO future_things VALUES ('1', 'a row an export must not lose')")
        conn.execute("CREATE TABLE odd_things (id TEXT PRIMARY KEY, shape GEOMETRY)")
    result = run_cli("export", str(tmp_path / "e"), "--db", str(db))
    assert result.exit_code == 1
    assert "odd_things" in result.output and "DERIVED_COLUMNS" in result.output
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE odd_things")
    exported = export(str(db), tmp_path / "e2")
    assert {"table": "future_things", "rows": 1} in [{k: t[k] for k in ("table", "rows")}
                                                      for t in exported["tables"]]  # type: ignore[attr-defined]
    rt = open_runtime(str(tmp_path), str(db))
    try:
        rt.administration.add_user(LOCAL_OWNER, "dana@example.org", "member", handle="dana")
    finally:
        rt.close()
    mine = run_cli("export", str(tmp_path / "e3"), "--db", str(db), "--person", "dana@example.org")
    assert mine.exit_code == 1 and "table future_things: no rule says which of its rows are a person's" in mine.output


def test_an_import_refuses_a_non_empty_store_a_newer_format_and_a_changed_file(source: Path, tmp_path: Path) -> None:
    folder = tmp_path / "e"
    export(str(source), folder)
    result = run_cli("import", str(folder), "--db", str(source))
    assert result.exit_code == 1 and re.search(r"the target store is not empty: audit_log \(\d+\), ", result.output)
    assert "import into a new store, or merge" in result.output

    target = tmp_path / "target.db"
    memories = folder / "memories.jsonl"
    original = memories.read_bytes()
    memories.write_bytes(original.replace(b"production key", b"productiom key"))
    result = run_cli("import", str(folder), "--db", str(target))
    assert result.exit_code == 1 and "memories.jsonl holds 7 rows with SHA-256" in result.output
    assert "nothing was imported" in result.output
    assert not target.exists()  # the store the import made is gone with it: no empty store is left to be taken for it

    memories.write_bytes(original)
    manifest = folder / "manifest.json"
    newer = json.loads(manifest.read_text()) | {"version": 99}
    manifest.write_text(json.dumps(newer))
    result = run_cli("import", str(folder), "--db", str(target))
    assert result.exit_code == 1 and "format version 99, newer than this Notewell reads (1); upgrade" in result.output

    result = run_cli("export", str(folder), "--db", str(source))
    assert result.exit_code == 1 and "is not an empty folder; name a new folder" in result.output


@pytest.mark.parametrize(("version", "said"), [
    ("1", 'version must be the number 1, not the string "1"'),
    (True, "version must be the number 1, not the boolean true"),
    (0, "version must be the number 1, not the number 0"),
    (None, "version is missing (or null)")])
def test_a_manifest_whose_version_is_no_format_number_names_the_field_and_the_fix(
        source: Path, tmp_path: Path, version: object, said: str) -> None:
    """A version written as the string "1" was refused as 'format version 1, newer than this Notewell reads (1)'."""
    folder = tmp_path / "e"
    export(str(source), folder)
    manifest = folder / "manifest.json"
    manifest.write_text(json.dumps(json.loads(manifest.read_text()) | {"version": version}))
    target = tmp_path / "target.db"
    result = run_cli("import", str(folder), "--db", str(target))
    assert result.exit_code == 1 and result.stdout == "", result.output
    assert result.stderr.splitlines()[-1] == (f"error: import: {manifest}: {said}; write \"version\": 1 (a number, no "
                                             "quotes), or export again")
    assert not target.exists()


def test_only_the_local_owner_carries_the_store(tmp_path: Path) -> None:
    rt = open_runtime(str(tmp_path), str(tmp_path / "index.db"))
    try:
        admin = rt.administration.add_user(LOCAL_OWNER, "root@example.test", "admin", handle="root")
        with pytest.raises(Forbidden, match="local owner alone"):
            rt.portability.export(user_principal(admin), tmp_path / "e")
        assert not (tmp_path / "e").exists()
    finally:
        rt.close()


def test_a_merge_adds_what_the_target_lacks_and_renumbers_generated_keys(source: Path, tmp_path: Path,
                                                                         pg_cluster: PgCluster) -> None:
    """Another store with its own person, memory and session takes the export with --merge: every row of both is
    there after (generated numbers renumbered past the target's, session pieces following their session), and
    merging the same export again adds nothing."""
    export(str(source), tmp_path / "e")
    pg = pg_cluster.url(pg_cluster.create_database())
    rt = open_runtime(str(tmp_path), pg)
    try:
        dana = user_principal(rt.administration.add_user(LOCAL_OWNER, "dana@example.org", "member", handle="dana"))
        rt.memory.remember(dana, "Dana's gripper calibration notes")
        rt.brain.start_session(dana, client_type="cursor", prompt="calibrate the gripper acceleration")
    finally:
        rt.close()
    before = {t["table"]: t["rows"] for t in export(pg, tmp_path / "before")["tables"]}  # type: ignore[attr-defined]
    first = run_cli("import", str(tmp_path / "e"), "--db", pg, "--merge", "--json")
    assert first.exit_code == 0, first.output
    loaded = {t["table"]: t["loaded"] for t in json.loads(first.stdout)["tables"]}
    assert {t: loaded[t] for t in ("users", "memories", "brain_sessions")} == {"users": 3, "memories": 7,
                                                                              "brain_sessions": 1}
    again = run_cli("import", str(tmp_path / "e"), "--db", pg, "--merge", "--json")
    assert again.exit_code == 0, again.output
    # rows without a key of their own (audit entries, ...) are recognised by their content (test_carry_merge.py)
    assert {t["table"]: t["loaded"] for t in json.loads(again.stdout)["tables"]} == dict.fromkeys(loaded, 0)
    said = " ".join(run_cli("import", str(tmp_path / "e"), "--db", pg, "--merge").output.split())
    assert "rows: 0 added, the others held already" in said, said  # it said "N rows", as if all were loaded
    after = {t["table"]: t["rows"] for t in export(pg, tmp_path / "after")["tables"]}  # type: ignore[attr-defined]
    assert after == {name: before[name] + loaded[name] for name in before}
    rt = open_runtime(str(tmp_path), pg)
    try:
        for email, prompt in (("dana@example.org", "calibrate"), ("alice@example.test", "fix")):
            found = rt.brain.search_sessions(person(rt, email), "gripper")
            assert [s.session.prompt.split()[0] for s in found] == [prompt], email
        new = rt.memory.remember(person(rt, "dana@example.org"), "A note written after the merge")
        assert new.created  # the renumbered memories left the id sequence past them
    finally:
        rt.close()


def test_a_merge_that_names_a_missing_person_is_refused_whole(tmp_path: Path) -> None:
    """A grant of a person the target lacks cannot be merged: nothing is. Here the target gives erin's email to
    another id, which the merge names before loading anything (test_carry_project.py merges a person it holds)."""
    db = tmp_path / "index.db"
    rt = open_runtime(str(tmp_path), str(db))
    try:
        rt.administration.add_user(LOCAL_OWNER, "erin@example.org", "member", handle="erin")
        rt.administration.add_project(LOCAL_OWNER, "apollo")
        rt.administration.grant(LOCAL_OWNER, "erin@example.org", "apollo", "read")
    finally:
        rt.close()
    export(str(db), tmp_path / "e")
    target = tmp_path / "target.db"
    assert run_cli("import", str(tmp_path / "e"), "--db", str(target)).exit_code == 0
    with sqlite3.connect(target) as conn:
        conn.execute("DELETE FROM grants")
        conn.execute("UPDATE users SET id = 'u_other'")
    before = files(tmp_path / "e")
    result = run_cli("import", str(tmp_path / "e"), "--db", str(target), "--merge")
    assert result.exit_code == 1, result.output
    assert "the export's user erin@example.org (handle erin, id u_" in result.output
    assert "is another account here (erin@example.org, handle erin, id u_other)" in result.output
    assert files(tmp_path / "e") == before


def test_migrate_sqlite_to_postgres_and_back_checks_every_table(source: Path, tmp_path: Path,
                                                                  pg_cluster: PgCluster) -> None:
    pg = pg_cluster.url(pg_cluster.create_database())
    with_password = pg.replace("postgresql://postgres@", "postgresql://postgres:S3cretPw@", 1)
    assert with_password != pg  # the cluster trusts local connections: the password is carried, never checked
    shown = run_cli("migrate", "--from", f"sqlite:{source}", "--to", with_password)
    assert shown.exit_code == 0, shown.output
    assert "S3cretPw" not in shown.output
    # a probe: the note named no --vault (run as printed, it indexed the working folder), went to stdout and
    # was cut across lines at 80 columns
    note = [line for line in shown.stderr.splitlines() if line.startswith("Now index the vault")]
    assert len(note) == 1 and "notewell index --vault VAULT --db postgresql://postgres:***@" in note[0], shown.stderr
    assert "Now index" not in shown.stdout
    pg = pg_cluster.url(pg_cluster.create_database())
    there = run_cli("migrate", "--from", f"sqlite:{source}", "--to", pg, "--json")
    assert there.exit_code == 0, there.output
    moved = json.loads(there.stdout)["tables"]
    assert all(t["rows"] == t["loaded"] for t in moved) and sum(t["rows"] for t in moved) > 50
    back = tmp_path / "back.db"
    result = run_cli("migrate", "--from", pg, "--to", f"sqlite:{back}", "--vault", str(source.parent / "vault"))
    assert result.exit_code == 0, result.output
    assert "counts and SHA-256 checked" in result.output and "added" in result.output  # the vault indexed
    export(str(source), tmp_path / "a")
    export(str(back), tmp_path / "b")
    assert files(tmp_path / "a") == files(tmp_path / "b")
    assert [t["sha256"] for t in moved] == [json.loads((tmp_path / "a" / "manifest.json").read_text())["tables"][
        t["table"]]["sha256"] for t in moved]
    rt = open_runtime(str(source.parent / "vault"), str(back))
    try:
        assert rt.knowledge.search(LOCAL_OWNER, "gripper firmware").matches  # documents re-indexed from the vault
    finally:
        rt.close()
    again = run_cli("migrate", "--from", f"sqlite:{source}", "--to", f"sqlite:{back}")
    assert again.exit_code == 1 and "the target store is not empty" in again.output


def test_a_value_postgres_cannot_hold_is_named_and_nothing_is_migrated(tmp_path: Path, pg_url: str) -> None:
    db = tmp_path / "index.db"
    open_store(str(db)).close()
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO sign_in_keys (key) VALUES (?)", ("a\x00b",))
    result = run_cli("migrate", "--from", f"sqlite:{db}", "--to", pg_url)
    assert result.exit_code == 1
    assert "table sign_in_keys: a row's key holds a NUL character" in result.output
    assert all(not t["rows"] for t in export(pg_url, tmp_path / "e")["tables"])  # type: ignore[attr-defined]


def test_a_persons_export_holds_their_rows_alone_and_imports(source: Path, tmp_path: Path, pg_url: str) -> None:
    """What alice may take with her: her user and home, the memories she wrote (her private one included), her
    brain project, knowledge, session with its events and pieces, her audit entries; no one else's, and no
    grant, token or password."""
    result = run_cli("export", str(tmp_path / "alice"), "--db", str(source), "--person", "alice@example.test",
                     "--json")
    assert result.exit_code == 0, result.output
    rows = {t["table"]: t["rows"] for t in json.loads(result.stdout)["tables"]}
    assert rows["users"] == 1 and rows["projects"] == 1 and rows["brain_sessions"] == 1
    assert rows["memories"] == 6  # two on deploy (one superseded), the private one, the one about the runbook,
    # taught and captured knowledge
    assert rows["memory_documents"] == 1
    assert rows["brain_kea_funnel"] == 1  # KEA's refine of her session's close
    assert rows["grants"] == rows["tokens"] == rows["passwords"] == rows["sign_in_failures"] == 0
    users = [json.loads(line) for line in (tmp_path / "alice" / "users.jsonl").read_text().splitlines()]
    assert [u["email"] for u in users] == ["alice@example.test"]
    memories = [json.loads(line) for line in (tmp_path / "alice" / "memories.jsonl").read_text().splitlines()]
    assert {m["author_user_id"] for m in memories} == {users[0]["id"]}
    assert json.loads((tmp_path / "alice" / "manifest.json").read_text())["person"] == "alice@example.test"
    target = str(tmp_path / "alice.db")
    assert run_cli("import", str(tmp_path / "alice"), "--db", target).exit_code == 0
    rt = open_runtime(str(tmp_path), target)
    try:
        alice = person(rt, "alice@example.test")
        # in her home: the private one and the learning captured in her brain project (what she wrote in "shared"
        # is carried, and seen once that project and a grant exist on the target)
        assert len(rt.memory.recall(alice, RECALLED).results) == 2
        assert [s.session.prompt for s in rt.brain.search_sessions(alice, "acceleration")] == ["fix the gripper stall"]
    finally:
        rt.close()
    export(str(source), tmp_path / "whole")  # the same person's export from PostgreSQL: the same bytes
    assert run_cli("import", str(tmp_path / "whole"), "--db", pg_url).exit_code == 0
    again = run_cli("export", str(tmp_path / "alice-pg"), "--db", pg_url, "--person", "alice@example.test")
    assert again.exit_code == 0, again.output
    assert files(tmp_path / "alice-pg") == files(tmp_path / "alice")
    missing = run_cli("export", str(tmp_path / "nobody"), "--db", str(source), "--person", "nobody@example.test")
    assert missing.exit_code == 1 and "--person: no user has the email nobody@example.test" in missing.output


def test_an_export_as_one_file_is_the_same_bytes_each_time_and_imports_on_both_backends(
        source: Path, tmp_path: Path, pg_url: str) -> None:
    folder, archive, again = tmp_path / "folder", tmp_path / "store.tar", tmp_path / "again.tar"
    export(str(source), folder)
    one = export(str(source), archive)
    export(str(source), again)
    assert archive.read_bytes() == again.read_bytes() and archive.stat().st_mode & 0o777 == 0o600
    assert one == export(str(source), tmp_path / "folder-2")  # the same tables, rows and checksums
    with tarfile.open(archive) as tar:
        assert tar.getnames()[-1] == "manifest.json"
        assert {n: tar.extractfile(n).read() for n in tar.getnames()} == files(folder)  # type: ignore[union-attr]
    assert "exists already" in run_cli("export", str(archive), "--db", str(source)).output
    for n, target in enumerate((pg_url, str(tmp_path / "from-file.db"))):  # by place: two names can be as long
        result = run_cli("import", str(archive), "--db", target)
        assert result.exit_code == 0 and "counts and SHA-256 checked" in result.output, result.output
        export(target, tmp_path / f"check-{n}")
        assert files(tmp_path / f"check-{n}") == files(folder)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".notewell-")]  # no scratch folder is left


def test_an_archive_in_a_folder_not_there_is_one_line_and_one_in_a_read_only_folder_imports(
        source: Path, tmp_path: Path) -> None:
    """A probe: `export x/y.tar` with no folder x, or x a file, was an internal error (exit 70); an import of an
    archive in a folder it may not write (a read-only mount of backups) told to free space or name another disk."""
    for parent in (tmp_path / "nowhere", source):  # not there; a file
        refused = run_cli("export", str(parent / "x.tar"), "--db", str(source))
        assert refused.exit_code == 1 and f"export: {parent} is not a folder; create it" in refused.stderr, \
            refused.stderr
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    export(str(source), shelf / "store.tar")
    root = os.geteuid() == 0  # root writes a 0555 folder: only an immutable one refuses it
    shelf.chmod(0o555)
    if root and subprocess.run(["chattr", "+i", str(shelf)], capture_output=True, check=False).returncode != 0:
        pytest.fail("chattr +i is needed to make a folder root may not write")
    try:
        done = run_cli("import", str(shelf / "store.tar"), "--db", str(tmp_path / "from-ro.db"))
        assert done.exit_code == 0 and "counts and SHA-256 checked" in done.output, done.output
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(shelf)], check=True)
        shelf.chmod(0o755)


def _link(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


def test_an_archive_holding_anything_an_export_never_writes_is_refused(source: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.tar"
    evil = tmp_path / "evil.jsonl"
    evil.write_text("{}\n")
    with tarfile.open(bad, "w") as tar:
        tar.add(evil, arcname="../escape.jsonl")
    result = run_cli("import", str(bad), "--db", str(tmp_path / "target.db"))
    assert result.exit_code != 0 and "which no export writes" in result.output, result.output
    assert not (tmp_path.parent / "escape.jsonl").exists()
    for name, add in (("dup.tar", lambda tar: [tar.add(evil, arcname="audit_log.jsonl") for _ in range(2)]),
                      ("link.tar", lambda tar: tar.addfile(_link("manifest.json", "/etc/passwd")))):
        with tarfile.open(tmp_path / name, "w") as tar:  # the reason given was "which no export writes"
            add(tar)
        said = " ".join(run_cli("import", str(tmp_path / name), "--db", str(tmp_path / "target.db")).output.split())
        assert ("holds 'audit_log.jsonl' twice" if name == "dup.tar" else
                "holds 'manifest.json' as a symbolic link, not a file") in said, said
    (tmp_path / "cut.tar").write_bytes(b"not a tar at all" * 64)
    result = run_cli("import", str(tmp_path / "cut.tar"), "--db", str(tmp_path / "target.db"))
    assert result.exit_code != 0 and "is not an export's archive" in result.output
    assert "Traceback" not in result.output


def test_migrate_names_its_own_flags_when_it_refuses(source: Path, tmp_path: Path) -> None:
    """migrate said "--db: no index at …; run 'notewell index' first" of a --from that does not exist, "--db" of a
    bad --to, and "import: … or merge" of a target that holds rows: migrate has neither --db nor merge."""
    cases = [
        (["--from", f"sqlite:{tmp_path / 'nope.db'}", "--to", f"sqlite:{tmp_path / 'new.db'}"],
         f"--from: no store at {tmp_path / 'nope.db'}"),
        (["--from", f"sqlite:{source}", "--to", "mysql://x"], "--to: is neither a file path nor a postgresql://"),
        (["--from", "mysql://x", "--to", f"sqlite:{tmp_path / 'new.db'}"], "--from: is neither a file path"),
        (["--from", f"sqlite:{source}", "--to", f"sqlite:{source}"],
         "--to: the target store is not empty"),
    ]
    for args, words in cases:
        result = run_cli("migrate", *args)
        flat = " ".join(result.output.split())
        assert result.exit_code == 1 and words in flat, (args, flat)
        assert "--db" not in flat and "merge" not in flat and "notewell index" not in flat, flat
    assert not (tmp_path / "new.db").exists()
