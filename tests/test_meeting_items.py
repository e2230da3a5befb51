"""Meeting notes' action items through the sync `notewell index` and the watcher run (IndexingService.sync), on
SQLite and PostgreSQL: the items and their exact tags, idempotent re-syncs, retirement when a line is ticked,
removed or edited or the note deleted, what is no meeting note, and a store from before the items."""

from __future__ import annotations

import shutil
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import make_vault, run_cli
from mcp_world import REPO_ROOT
from notewell.access.principal import LOCAL_OWNER
from notewell.records.brain import VAULT_AUTHOR, NoteItemRecord
from notewell.records.memories import MemoryQuery
from notewell.runtime import Runtime, open_runtime
from notewell.store.shared.store import SqlStore

NOTE = "acme/meetings/2026-03-04-kickoff.md"
KICKOFF = """# Kickoff

Tom Whitcombe: send the plan by 2026-03-10.
Decision: ship in April.

## Actions

- [ ] Tom: draft the budget #blocker
- [ ] Eve Adams: book the room
- Is the API stable?
- [ ] Dana: a name nobody on the team has

```
- [ ] Tom: in a code block, no item
```
"""
TAG = "meeting:2026-03-04-kickoff"
FILES = {
    "acme/README.md": "# Acme\n",
    NOTE: KICKOFF,
    "acme/notes/plan.md": "# Plan\n\n## Actions\n\n- [ ] Tom: not a meeting, no item\n",
    "acme/notes/standup.md": "---\ntype: meeting\ndate: 2026-03-05\n---\n## Actions\n\n- [ ] @eve ship it\n",
}


@pytest.fixture
def rt(tmp_path: Path, store_url: str) -> Iterator[Runtime]:
    vault = make_vault(tmp_path, FILES)
    runtime = open_runtime(str(vault), store_url)
    for email, name, handle in (("tom@x.test", "Tom Whitcombe", "tom"), ("Eve@X.test", "Eve Adams", "eve")):
        runtime.administration.add_user(LOCAL_OWNER, email, "member", name=name, handle=handle)
    runtime.indexing.sync()
    yield runtime
    runtime.close()


def items(rt: Runtime, path: str = NOTE, live: bool = True) -> list[NoteItemRecord]:
    project, _, rest = path.partition("/")
    return [n for n in rt.store.brain.note_items(project, f"brain-actions/{rest}") if n.item.live == live]


def shown(rt: Runtime, path: str = NOTE) -> set[tuple[str, tuple[str, ...]]]:
    return {(n.item.rule, n.item.tags) for n in items(rt, path)}


def write(rt: Runtime, path: str, text: str) -> None:
    (rt.settings.vault / path).write_text(text, encoding="utf-8")
    rt.indexing.sync()


def test_a_meeting_note_yields_its_items_with_the_exact_tags(rt: Runtime) -> None:
    assert shown(rt) == {
        ("Tom Whitcombe: send the plan by 2026-03-10.", ("action_item", "action-item", "for:tom@x.test", TAG)),
        ("Tom: draft the budget", ("action_item", "action-item", "for:tom@x.test", TAG, "blocker")),
        ("Eve Adams: book the room", ("action_item", "action-item", "for:eve@x.test", TAG)),
        ("Is the API stable?", ("action_item", "open-question", TAG)),
        ("Dana: a name nobody on the team has", ("action_item", "action-item", TAG)),
    }
    for n in items(rt):
        k = n.item
        assert (k.kind, k.brain_project, k.project, k.owner_user_id, k.source) == \
            ("action_item", "acme", "acme", VAULT_AUTHOR, "meeting_note")
        assert (k.injected_count, k.used_count, k.success_count, k.failure_count) == (0, 0, 0, 0)
    memory = rt.store.memories.get(items(rt)[0].item.ref)
    assert memory is not None and memory.author_user_id == VAULT_AUTHOR and memory.project == "acme"
    assert shown(rt, "acme/notes/standup.md") == {
        ("@eve ship it", ("action_item", "action-item", "for:eve@x.test", "meeting:2026-03-05-standup"))}
    assert items(rt, "acme/notes/plan.md") == []  # outside meetings/, without type: meeting
    assert rt.store.brain.open_action_items("acme", "for:tom@x.test", 10)[0].rule == "Tom: draft the budget"


def test_every_re_sync_is_idempotent(rt: Runtime) -> None:
    before = {n.item.ref for n in items(rt)}
    assert not rt.indexing.sync().did_work and {n.item.ref for n in items(rt)} == before
    write(rt, NOTE, KICKOFF.replace("Decision: ship in April.", "Decision: ship in May.\n\nMore words."))
    write(rt, NOTE, "\n\n" + KICKOFF)  # the lines move down: the same lines, the same items
    assert {n.item.ref for n in items(rt)} == before and items(rt, live=False) == []


def test_ticking_removing_or_editing_a_line_retires_its_item(rt: Runtime) -> None:
    by_rule = {n.item.rule: n.item.ref for n in items(rt)}
    write(rt, NOTE, KICKOFF.replace("- [ ] Tom: draft", "- [x] Tom: draft")
          .replace("- [ ] Eve Adams: book the room\n", "")
          .replace("- Is the API stable?", "- Is the API stable yet?"))
    retired = {n.item.ref: n for n in items(rt, live=False)}
    assert set(retired) == {by_rule["Tom: draft the budget"], by_rule["Eve Adams: book the room"],
                            by_rule["Is the API stable?"]}
    assert all(n.retired_by == VAULT_AUTHOR for n in retired.values())
    reasons = {n.item.rule: rt.store.memories.get(n.item.ref) for n in retired.values()}
    assert {rule: m.delete_reason if m else None for rule, m in reasons.items()} == {
        "Tom: draft the budget": f"ticked in {NOTE}",
        "Eve Adams: book the room": f"{NOTE}: its line was removed or edited",
        "Is the API stable?": f"{NOTE}: its line was removed or edited"}
    assert "Is the API stable yet?" in {n.item.rule for n in items(rt)}  # the edited line: a new item
    write(rt, NOTE, KICKOFF)  # unticked again: open again, as a new item
    assert "Tom: draft the budget" in {n.item.rule for n in items(rt)}
    assert len(items(rt)) == 5


def test_deleting_the_note_or_its_meeting_type_retires_its_items(rt: Runtime) -> None:
    (rt.settings.vault / NOTE).unlink()
    rt.indexing.sync()
    assert items(rt) == [] and len(items(rt, live=False)) == 5
    write(rt, "acme/notes/standup.md", "## Actions\n\n- [ ] @eve ship it\n")  # no longer type: meeting
    assert items(rt, "acme/notes/standup.md") == []
    assert rt.store.brain.open_action_items("acme", "for:eve@x.test", 10) == []


def test_a_moved_note_takes_its_items_along_and_notewell_index_does_it_too(rt: Runtime) -> None:
    moved = "acme/archive/meetings/2026-03-04-kickoff.md"
    before = {n.item.ref for n in items(rt)}
    (rt.settings.vault / "acme/archive/meetings").mkdir(parents=True)
    (rt.settings.vault / NOTE).rename(rt.settings.vault / moved)
    assert rt.indexing.sync().renamed == 1
    assert items(rt) == [] and items(rt, live=False) == []  # nothing left behind, nothing retired
    assert {n.item.ref for n in items(rt, moved)} == before
    (rt.settings.vault / moved).write_text(KICKOFF.replace("- [ ] Eve Adams", "- [x] Eve Adams"), encoding="utf-8")
    result = run_cli("index", "--vault", str(rt.settings.vault), "--db", str(rt.settings.db))
    assert result.exit_code == 0 and "1 changed" in result.output
    assert "Eve Adams: book the room" not in {n.item.rule for n in items(rt, moved)} and len(items(rt, moved)) == 4


def test_a_note_moved_within_its_project_keeps_its_items_and_one_moved_to_another_starts_them_again(
        tmp_path: Path, store_url: str) -> None:
    """A meeting note moved to another folder of its project (`mv meetings/x.md meetings/archive/`, seen by
    `notewell index`: the same bytes at a new path) retired every item and opened them again under new refs, so
    one a person resolved opened again. It is the same note: each item keeps its ref and state, its memory and
    rationale name the note where it is now. Moved to another project (other readers), its items start again
    there, as before."""
    archived = "acme/meetings/archive/2026-03-04-kickoff.md"
    elsewhere = "beta/meetings/2026-03-04-kickoff.md"
    vault = make_vault(tmp_path, {"acme/README.md": "# Acme\n", "beta/README.md": "# Beta\n", NOTE: KICKOFF})
    rt = open_runtime(str(vault), store_url)
    try:
        for email, name, handle in (("tom@x.test", "Tom Whitcombe", "tom"), ("eve@x.test", "Eve Adams", "eve")):
            rt.administration.add_user(LOCAL_OWNER, email, "member", name=name, handle=handle)
        assert run_cli("index", "--vault", str(vault), "--db", store_url).exit_code == 0
        before = {n.item.rule: n.item.ref for n in items(rt)}
        assert len(before) == 5
        eve = next(u for u in rt.store.identity.users() if u.handle == "eve")
        resolved = before["Eve Adams: book the room"]
        rt.store.brain.retire([resolved], eve.id, "resolved at the close of ses_x", "2026-03-06T00:00:00Z")
        (vault / "acme/meetings/archive").mkdir()
        (vault / NOTE).rename(vault / archived)
        result = run_cli("index", "--vault", str(vault), "--db", store_url)
        assert result.exit_code == 0 and "1 renamed" in result.output, result.output
        assert items(rt) == [] and items(rt, live=False) == []
        live = {n.item.rule: n.item for n in items(rt, archived)}
        assert {rule: k.ref for rule, k in live.items()} == {r: ref for r, ref in before.items() if ref != resolved}
        assert {k.rationale for k in live.values()} == {f"from the meeting note {archived}"}
        assert [(n.item.ref, n.retired_by) for n in items(rt, archived, live=False)] == [(resolved, eve.id)]
        assert rt.store.brain.open_action_items("acme", "for:eve@x.test", 10) == []  # resolved stays resolved
        memory = rt.store.memories.get(before["Tom: draft the budget"])
        assert memory is not None and memory.path == "brain-actions/meetings/archive/2026-03-04-kickoff.md"
        assert memory.content == f"Tom: draft the budget\nFrom the meeting note {archived} (action-item, " \
            f"for:tom@x.test, {TAG}, blocker)"
        found = rt.store.memories.strict(MemoryQuery(["acme"], ["archive"], "9999", 10))  # its words follow it
        assert {h.record.ref for h in found} == {k.ref for k in live.values()}
        assert not rt.indexing.sync().did_work and {n.item.ref for n in items(rt, archived)} == {
            k.ref for k in live.values()}

        (vault / "beta/meetings").mkdir(parents=True)
        (vault / archived).rename(vault / elsewhere)
        result = run_cli("index", "--vault", str(vault), "--db", store_url)
        assert result.exit_code == 0 and "1 renamed" in result.output, result.output
        assert items(rt, archived) == []
        assert {m.delete_reason for n in items(rt, archived, live=False) if n.retired_by == VAULT_AUTHOR
                if (m := rt.store.memories.get(n.item.ref)) is not None} == {
            f"{archived}: the note moved to {elsewhere}"}
        again = {n.item.rule: n.item.ref for n in items(rt, elsewhere)}
        assert set(again) == set(before) and not set(again.values()) & set(before.values())
    finally:
        rt.close()


def test_an_item_a_person_resolved_stays_resolved_while_its_line_stands(rt: Runtime) -> None:
    ref = next(n.item.ref for n in items(rt) if n.item.rule == "Eve Adams: book the room")
    eve = next(u for u in rt.store.identity.users() if u.handle == "eve")
    rt.store.brain.retire([ref], eve.id, "resolved at the close of ses_x", "2026-03-06T00:00:00Z")
    write(rt, NOTE, KICKOFF + "\nA new last line.\n")
    assert "Eve Adams: book the room" not in {n.item.rule for n in items(rt)}
    write(rt, NOTE, KICKOFF.replace("book the room", "book the big room"))  # edited: a new item
    assert "Eve Adams: book the big room" in {n.item.rule for n in items(rt)}


def test_a_person_added_later_is_assigned_at_the_next_full_sync(rt: Runtime) -> None:
    dana = ("Dana: a name nobody on the team has", ("action_item", "action-item", TAG))
    assert dana in shown(rt)
    rt.administration.add_user(LOCAL_OWNER, "dana@x.test", "member", name="Dana Scully", handle="dana")
    rt.indexing.sync()
    assert ("Dana: a name nobody on the team has", ("action_item", "action-item", "for:dana@x.test", TAG)) \
        in shown(rt) and dana not in shown(rt)
    assert len(items(rt)) == 5


def test_a_store_from_before_meeting_items_gets_them_at_its_next_sync(rt: Runtime) -> None:
    store = rt.store
    assert isinstance(store, SqlStore)
    with store.links.dialect.transaction() as conn:  # as an older version left it: no items, no step 2
        conn.execute("DELETE FROM brain_knowledge")
        conn.execute("DELETE FROM memories")
        conn.execute("DELETE FROM schema_migrations WHERE component = 'links' AND version = 2")
    vault, db = str(rt.settings.vault), rt.settings.db
    rt.close()
    again = open_runtime(vault, str(db))
    try:
        assert not again.indexing.sync().did_work  # nothing changed on disk; the stored notes read once more
        assert len(items(again)) == 5
    finally:
        again.close()


def test_the_example_vaults_meeting_notes_show_it(tmp_path: Path, store_url: str) -> None:
    """examples/northwind: its meeting notes' Actions (TODO(owner), checkboxes, a ticked line, a blocker, an open
    question) reach the people they name once they are on the team."""
    vault = tmp_path / "northwind"
    shutil.copytree(REPO_ROOT / "examples" / "northwind", vault, ignore=shutil.ignore_patterns(".notewell"))
    rt = open_runtime(str(vault), store_url)
    try:
        for email, name, handle in (("tom@northwind.test", "Tom Whitcombe", "tom"),
                                    ("eleanor@northwind.test", "Eleanor Vance", "eleanor")):
            rt.administration.add_user(LOCAL_OWNER, email, "member", name=name, handle=handle, home_folder=False)
        rt.indexing.sync()
        tom = [(k.rule, k.tags[-1]) for k in rt.store.brain.open_action_items("projects", "for:tom@northwind.test", 10)]
        assert tom == [("TODO(tom): send the updated plan once the call-off is signed.", "blocker"),
                       ("Tom Whitcombe: one-page plan to the client lead by 2025-06-13.", "meeting:2025-06-09-kickoff")]
        phase_2 = items(rt, "projects/apollo/meetings/2026-09-17-phase-2-mobilisation.md")
        assert sorted(n.item.tags[1] for n in phase_2) == ["action-item", "action-item", "action-item", "open-question"]
        assert "Tom Whitcombe: book the phase 1 close-out review for 2026-09-25." not in {n.item.rule for n in phase_2}
        assert len(rt.store.brain.open_action_items("projects", "for:eleanor@northwind.test", 10)) == 3
    finally:
        rt.close()


def test_a_note_in_a_home_names_its_owner_alone(rt: Runtime) -> None:
    """No one but the home's owner sees its items, so naming anyone else would only tell the owner, from the
    item's for: tag, that the name has an account and what its email is (with no grant at all)."""
    rt.administration.add_user(LOCAL_OWNER, "zed@x.test", "member", name="Zed Quill", handle="zed")
    (rt.settings.vault / "~zed/meetings").mkdir(parents=True, exist_ok=True)
    note = "~zed/meetings/2026-03-06-who.md"
    write(rt, note, "## Actions\n\n- @tom first\n- Eve Adams: second\n- eve@x.test: third\n- @zed fourth\n"
                    "- Zed: fifth\n")
    tags = {n.item.rule: [t for t in n.item.tags if t.startswith("for:")] for n in items(rt, note)}
    assert tags == {"@tom first": [], "Eve Adams: second": [], "eve@x.test: third": [],
                    "@zed fourth": ["for:zed@x.test"], "Zed: fifth": ["for:zed@x.test"]}
    assert shown(rt)  # a team project's note still names the whole team
    assert ("Eve Adams: book the room", ("action_item", "action-item", "for:eve@x.test", TAG)) in shown(rt)


def test_two_meeting_notes_named_alike_in_two_forms_keep_their_own_items(tmp_path: Path, store_url: str) -> None:
    """Two meeting notes whose names differ in Unicode form alone (two files on Linux) share one composed memory
    path: reconciling one retired the other's items. Each keeps its own, ticked and deleted on its own, and a
    person who joins later is named in both at the next full sync."""
    composed_note = "acme/meetings/2026-03-04-r\u00e9union.md"
    decomposed_note = unicodedata.normalize("NFD", composed_note)
    vault = make_vault(tmp_path, {"acme/README.md": "# Acme\n",
                                  composed_note: "# Kickoff\n\n## Actions\n\n- [ ] Tom: draft the budget\n",
                                  decomposed_note: "# Paris\n\n## Actions\n\n- [ ] Tom: book the train\n"
                                                   "- [ ] Dana: bring the maps\n"})
    assert len(list((vault / "acme/meetings").iterdir())) == 2
    rt = open_runtime(str(vault), store_url)
    try:
        rt.administration.add_user(LOCAL_OWNER, "tom@x.test", "member", name="Tom Whitcombe", handle="tom")
        rt.indexing.sync()
        assert sorted(k.rule for k in rt.store.brain.open_action_items("acme", "for:tom@x.test", 10)) == [
            "Tom: book the train", "Tom: draft the budget"]
        rt.administration.add_user(LOCAL_OWNER, "dana@x.test", "member", name="Dana Scully", handle="dana")
        rt.indexing.sync()  # the full sync reads both notes again
        assert [k.rule for k in rt.store.brain.open_action_items("acme", "for:dana@x.test", 10)] == [
            "Dana: bring the maps"]
        write(rt, composed_note, "# Kickoff\n\n## Actions\n\n- [x] Tom: draft the budget\n")
        assert [k.rule for k in rt.store.brain.open_action_items("acme", "for:tom@x.test", 10)] == [
            "Tom: book the train"]
        (vault / decomposed_note).unlink()
        rt.indexing.sync()
        assert rt.store.brain.open_action_items("acme", "for:tom@x.test", 10) == []
        assert rt.store.brain.open_action_items("acme", "for:dana@x.test", 10) == []
    finally:
        rt.close()


def test_a_note_renamed_to_its_other_unicode_form_keeps_its_items(tmp_path: Path, store_url: str) -> None:
    """A meeting note renamed to the same name in the other Unicode form (réunion.md composed, renamed decomposed,
    as macOS and some sync tools do) is the same note: `notewell index` follows the rename, so an item a person
    resolved stays resolved and the live items keep their refs, none doubled."""
    composed_note = "acme/meetings/2026-03-04-r\u00e9union.md"
    decomposed_note = unicodedata.normalize("NFD", composed_note)
    vault = make_vault(tmp_path, {"acme/README.md": "# Acme\n", composed_note: KICKOFF})
    rt = open_runtime(str(vault), store_url)
    try:
        for email, name, handle in (("tom@x.test", "Tom Whitcombe", "tom"), ("eve@x.test", "Eve Adams", "eve")):
            rt.administration.add_user(LOCAL_OWNER, email, "member", name=name, handle=handle)
        rt.indexing.sync()
        before = {n.item.ref: n.item.rule for n in items(rt, composed_note)}
        assert len(before) == 5
        resolved = next(ref for ref, rule in before.items() if rule == "Eve Adams: book the room")
        eve = next(u for u in rt.store.identity.users() if u.handle == "eve")
        rt.store.brain.retire([resolved], eve.id, "resolved at the close of ses_x", "2026-03-06T00:00:00Z")
        (vault / composed_note).rename(vault / decomposed_note)
        result = run_cli("index", "--vault", str(vault), "--db", store_url)
        assert result.exit_code == 0 and "1 renamed" in result.output, result.output
        live = {n.item.ref: n.item for n in items(rt, composed_note)}  # one memory path for both forms
        assert set(live) == set(before) - {resolved}
        assert {k.rationale for k in live.values()} == {f"from the meeting note {decomposed_note}"}
        assert [n.retired_by for n in items(rt, composed_note, live=False)] == [eve.id]
        (vault / decomposed_note).write_text(KICKOFF.replace("- [ ] Tom: draft", "- [x] Tom: draft"), encoding="utf-8")
        rt.indexing.sync()  # the renamed note's items are its own: ticked there, retired
        assert {n.item.rule for n in items(rt, composed_note)} == {before[r] for r in live} - {"Tom: draft the budget"}
    finally:
        rt.close()


def test_a_note_renamed_to_its_other_unicode_form_and_edited_in_one_sync_keeps_its_unchanged_items(
        tmp_path: Path, store_url: str) -> None:
    """Renamed to its other Unicode form and edited before the sync saw it (`notewell index` finds the old name gone
    and the new one with other bytes, so no rename of the same bytes): still the same note. An item a person
    resolved stayed resolved only when the bytes were unchanged; edited too, it opened again, and every live item
    was retired and written again under a new ref. Now the unchanged items keep their state and refs, the edited
    line's item alone is retired, and the new line's item is added."""
    composed_note = "acme/meetings/2026-03-04-r\u00e9union.md"
    decomposed_note = unicodedata.normalize("NFD", composed_note)
    vault = make_vault(tmp_path, {"acme/README.md": "# Acme\n", composed_note: KICKOFF})
    rt = open_runtime(str(vault), store_url)
    try:
        for email, name, handle in (("tom@x.test", "Tom Whitcombe", "tom"), ("eve@x.test", "Eve Adams", "eve")):
            rt.administration.add_user(LOCAL_OWNER, email, "member", name=name, handle=handle)
        rt.indexing.sync()
        before = {n.item.rule: n.item.ref for n in items(rt, composed_note)}
        eve = next(u for u in rt.store.identity.users() if u.handle == "eve")
        rt.store.brain.retire([before["Eve Adams: book the room"]], eve.id, "resolved at the close of ses_x",
                              "2026-03-06T00:00:00Z")
        (vault / composed_note).rename(vault / decomposed_note)
        (vault / decomposed_note).write_text(KICKOFF.replace("draft the budget", "draft the final budget")
                                             + "\n- [ ] Tom: order the cake\n", encoding="utf-8")
        result = run_cli("index", "--vault", str(vault), "--db", store_url)
        assert result.exit_code == 0 and "1 added" in result.output and "1 removed" in result.output, result.output
        live = {n.item.rule: n.item for n in items(rt, composed_note)}  # one memory path for both forms
        kept = {"Tom Whitcombe: send the plan by 2026-03-10.", "Is the API stable?",
                "Dana: a name nobody on the team has"}
        assert set(live) == kept | {"Tom: draft the final budget", "Tom: order the cake"}
        assert {rule: live[rule].ref for rule in kept} == {rule: before[rule] for rule in kept}
        assert {k.rationale for k in live.values()} == {f"from the meeting note {decomposed_note}"}
        retired = {n.item.rule: n for n in items(rt, composed_note, live=False)}
        assert set(retired) == {"Eve Adams: book the room", "Tom: draft the budget"}
        assert retired["Eve Adams: book the room"].retired_by == eve.id
        assert retired["Tom: draft the budget"].retired_by == VAULT_AUTHOR
        assert [k.rule for k in rt.store.brain.open_action_items("acme", "for:eve@x.test", 10)] == []
    finally:
        rt.close()
