"""Merging an export twice through the command line: rows without a key of their own are recognised by their
content (store/shared/merge_match.py, docs/operations.md "Merge").

The world is test_carry's with a note written, overwritten and undone (a journal entry naming another), and an
audit entry and a counted sign-in failure the source holds twice, identical in every column but the number.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from brain_world import build_brain_world
from conftest import run_cli
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from test_carry import export, person, populate

TWIN = "SELECT at, user_id, token_id, action, target, detail FROM audit_log WHERE id = (SELECT min(id) FROM audit_log)"


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The populated SQLite store, closed."""
    tmp = tmp_path_factory.mktemp("carry-merge")
    built = build_brain_world(tmp, str(tmp / "source.db"))
    populate(built)
    rt = built.runtime
    alice = person(rt, "alice@example.test")
    rt.notes.write_note(alice, "shared/torque.md", "# Torque\n\n4 Nm.\n", tool="test")
    changed = rt.notes.write_note(alice, "shared/torque.md", "# Torque\n\n5 Nm.\n", tool="test", overwrite=True)
    rt.journal.undo(alice, changed.journal_id, tool="test")
    rt.close()
    with sqlite3.connect(tmp / "source.db") as conn:
        conn.execute(f"INSERT INTO audit_log (at, user_id, token_id, action, target, detail) {TWIN}")
        conn.execute("INSERT INTO sign_in_failures (key, at, attempt) SELECT key, at, attempt FROM sign_in_failures"
                     " LIMIT 1")
    return tmp / "source.db"


def counts(db: str, folder: Path) -> dict[str, int]:
    return {t["table"]: t["rows"] for t in export(db, folder)["tables"]}  # type: ignore[attr-defined]


def merged(folder: Path, db: str) -> dict[str, int]:
    """What a merge loaded, by table."""
    result = run_cli("import", str(folder), "--db", db, "--merge", "--json")
    assert result.exit_code == 0, result.output
    return {t["table"]: t["loaded"] for t in json.loads(result.stdout)["tables"]}


def audit(folder: Path) -> list[dict[str, object]]:
    """An export's audit entries, each without its number."""
    entries = [json.loads(line) for line in (folder / "audit_log.jsonl").read_text().splitlines()]
    return [{k: v for k, v in e.items() if k != "id"} for e in sorted(entries, key=lambda e: e["id"])]


def twins(folder: Path, source: Path) -> int:
    """The audit entries of an export identical (but for their number) to the first of the source's export."""
    return audit(folder).count(audit(source)[0])


def assert_undos_name_their_entries(folder: Path) -> None:
    """Each undo of an export's journal names the entry of its note whose version it took back."""
    journal = [json.loads(line) for line in (folder / "note_journal.jsonl").read_text().splitlines()]
    by_id = {j["id"]: j for j in journal}
    undos = [j for j in journal if j["action"] == "undo"]
    assert undos
    for undo in undos:
        assert (by_id[undo["undoes"]]["path"], by_id[undo["undoes"]]["after_version"]) == (
            undo["path"], undo["before_version"])


def test_merging_an_export_again_adds_nothing_and_a_new_audit_entry_exactly_once(
        source: Path, tmp_path: Path, store_url: str) -> None:
    export(str(source), tmp_path / "e")
    assert twins(tmp_path / "e", tmp_path / "e") == 2
    assert run_cli("import", str(tmp_path / "e"), "--db", store_url).exit_code == 0
    imported = counts(store_url, tmp_path / "imported")
    assert twins(tmp_path / "imported", tmp_path / "e") == 2 and imported["note_journal"] == 4
    assert set(merged(tmp_path / "e", store_url).values()) == {0}
    assert counts(store_url, tmp_path / "again") == imported
    later = tmp_path / "later.db"
    shutil.copy(source, later)
    with sqlite3.connect(later) as conn:
        conn.execute("INSERT INTO audit_log (at, user_id, token_id, action, target, detail) VALUES "
                     "('2031-01-01T00:00:00.000000Z', 'local', NULL, 'project.add', 'apollo', '{}')")
    export(str(later), tmp_path / "later")
    assert merged(tmp_path / "later", store_url) == dict.fromkeys(imported, 0) | {"audit_log": 1}
    assert merged(tmp_path / "later", store_url) == dict.fromkeys(imported, 0)
    assert counts(store_url, tmp_path / "after") == imported | {"audit_log": imported["audit_log"] + 1}


def test_identical_rows_all_load_into_a_store_holding_others_and_merged_back_add_only_the_targets_own(
        source: Path, tmp_path: Path, store_url: str) -> None:
    """A store with its own project, audit entries and journal (an undo among them) takes the export: both twins
    load, and the carried undo names the entry it undoes as renumbered. The merged store's export merged back
    into the source adds the target's own rows alone (its undo renumbered with them), and nothing the second
    time."""
    export(str(source), tmp_path / "e")
    (tmp_path / "vault").mkdir()
    rt = open_runtime(str(tmp_path / "vault"), store_url)
    try:
        rt.administration.add_project(LOCAL_OWNER, "apollo")
        rt.notes.write_note(LOCAL_OWNER, "apollo/plan.md", "# Plan\n", tool="test")
        changed = rt.notes.write_note(LOCAL_OWNER, "apollo/plan.md", "# Plan 2\n", tool="test", overwrite=True)
        rt.journal.undo(LOCAL_OWNER, changed.journal_id, tool="test")
    finally:
        rt.close()
    own = counts(store_url, tmp_path / "own")
    assert (own["projects"], own["audit_log"], own["note_journal"]) == (1, 4, 3)
    source_counts = counts(str(source), tmp_path / "source")
    loaded = merged(tmp_path / "e", store_url)
    assert (loaded["audit_log"], loaded["sign_in_failures"], loaded["note_journal"]) == (
        source_counts["audit_log"], source_counts["sign_in_failures"], 4)
    out = tmp_path / "merged"
    assert counts(store_url, out) == {name: own[name] + loaded[name] for name in own}
    assert twins(out, tmp_path / "e") == 2
    assert_undos_name_their_entries(out)
    back = tmp_path / "back.db"
    shutil.copy(source, back)
    added = merged(out, str(back))
    assert {name: n for name, n in added.items() if n} == {"audit_log": 4, "note_journal": 3, "projects": 1}
    assert set(merged(out, str(back)).values()) == {0}
    export(str(back), tmp_path / "back")
    assert_undos_name_their_entries(tmp_path / "back")
