"""Writing notes through the MCP door, on both backends: the SDK's client over real HTTP with real tokens.

Each edit operation (headings, code fences that look like headings, front matter, CRLF, non-ASCII), a stale
version refused with the current one, who may write where (hidden == missing; a bound token stays in its
project), paths that would escape, the trash and undo byte for byte, and the index following every write.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_world import ServerThread, World, connect
from notes_world import call, refusal, served_notes
from notewell.access.principal import LOCAL_OWNER
from notewell.services.note_files import NoteFiles

pytestmark = pytest.mark.anyio
WRITING_TOOLS = ["write_note", "edit_note", "move_note", "delete_note", "undo_note_write"]


world, server, admin = served_notes("notes")


async def invalid(client: Client, name: str, args: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(MCPError) as err:
        await client.call_tool(name, args)
    assert err.value.error.code == -32602
    return err.value.error.message, (err.value.error.data or {}).get("argument", "")


async def found(client: Client, query: str) -> list[str]:
    hits = await call(client, "searchKnowledge", {"query": query})
    return [h["path"] for h in hits["results"]]


async def test_the_writing_tools_need_knowledge_write(server: ServerThread, world: World) -> None:
    async with connect(server.url, world.tokens["alice_read"]) as reader:
        names = [t.name for t in (await reader.list_tools()).tools]
        assert not set(WRITING_TOOLS) & set(names) and "search_notes" in names
        with pytest.raises(MCPError, match="Tool write_note not found"):
            await reader.call_tool("write_note", {"path": "projects/x.md", "content": "x"})
    async with connect(server.url, world.tokens["alice_write"]) as writer:
        tools = {t.name: t for t in (await writer.list_tools()).tools}
        assert set(WRITING_TOOLS) <= set(tools)
        assert tools["delete_note"].annotations.destructive_hint is True  # type: ignore[union-attr]
        assert tools["move_note"].annotations.destructive_hint is False  # type: ignore[union-attr]
        assert not any(tools[n].annotations.read_only_hint for n in WRITING_TOOLS)  # type: ignore[union-attr]


async def test_a_written_note_is_searchable_when_the_call_returns(admin: Client, world: World) -> None:
    done = await call(admin, "write_note", {"path": "handbook/agents/kiwi-log.md",
                                            "content": "# Kiwi log\n\nThe quokkafruit decision.\n"})
    assert done["previous_version"] is None and done["changed_lines"] == {"first": 1, "last": 3}
    assert "+The quokkafruit decision." in done["diff"]
    assert await found(admin, "quokkafruit") == ["handbook/agents/kiwi-log.md"]
    read = await call(admin, "readDoc", {"path": "handbook/agents/kiwi-log.md"})
    assert read["version"] == done["version"]
    hits = (await call(admin, "searchKnowledge", {"query": "quokkafruit"}))["results"]
    assert [h["version"] for h in hits] == [done["version"]]  # what an edit found by search passes on
    assert (world.vault / "handbook/agents/kiwi-log.md").read_text("utf-8").startswith("# Kiwi log")


async def test_a_diff_cut_to_the_answers_bound_says_how_to_read_the_rest(admin: Client) -> None:
    """A diff of 8,000 characters, each four bytes or more as JSON, passes the 32 KB of an answer: the door cut it
    and the note gave a general advice with no argument to follow; it names readDoc on the changed lines, whose
    parts read back every line the write put in."""
    content = "".join(f"{n:03d} " + "\u0001\U0001F680" * 30 + "\n" for n in range(300))
    done = await call(admin, "write_note", {"path": "handbook/rockets.md", "content": content})
    assert done["truncated"] is True and len(done["diff"]) < 8000, done["note"]
    way = 'readDoc with path "handbook/rockets.md" from offset 1 reads the lines the write put in (to line 300)'
    assert way in done["note"] and f"undo_note_write with journal_id {done['journal_id']}" in done["note"]
    lines: list[str] = []
    offset = 1
    while True:
        part = await call(admin, "readDoc", {"path": "handbook/rockets.md", "offset": offset, "limit": 300})
        lines += part["text"].split("\n")
        if not part["hasMore"]:
            break
        offset = part["nextOffset"]
    assert "\n".join(lines) + "\n" == content
    gone = await call(admin, "delete_note", {"path": "handbook/rockets.md"})
    assert gone["truncated"] is True and "The diff's removed lines are its own" in gone["note"]


async def test_write_refuses_to_overwrite_unless_told_and_then_checks_the_version(admin: Client) -> None:
    first = await call(admin, "write_note", {"path": "handbook/overwrite.md", "content": "one\n"})
    text = await refusal(admin, "write_note", {"path": "handbook/overwrite.md", "content": "two\n"})
    assert "exists already; edit it instead; to replace it whole, pass overwrite (with its expected_version)" in text
    second = await call(admin, "write_note", {"path": "handbook/overwrite.md", "content": "two\n", "overwrite": True,
                                              "expected_version": first["version"]})
    stale = await refusal(admin, "write_note", {"path": "handbook/overwrite.md", "content": "three\n",
                                                "overwrite": True, "expected_version": first["version"]})
    assert f"it is at version {second['version']}" in stale and "1 removed, 1 added" in stale



async def test_a_version_of_a_note_never_there_says_to_leave_out_expected_version(admin: Client, world: World) -> None:
    text = await refusal(admin, "write_note", {"path": "handbook/fresh.md", "content": "x\n",
                                               "expected_version": "0123456789abcdef"})
    assert "there is no note at handbook/fresh.md" in text and "leave out expected_version to create it" in text
    assert "deleted since" not in text and not (world.vault / "handbook/fresh.md").exists()
    made = await call(admin, "write_note", {"path": "handbook/fresh.md", "content": "x\n"})
    await call(admin, "delete_note", {"path": "handbook/fresh.md"})
    gone = await refusal(admin, "write_note", {"path": "handbook/fresh.md", "content": "y\n",
                                               "expected_version": made["version"]})
    assert "it no longer exists (deleted since)" in gone and "leave out" not in gone  # that one was there


async def test_a_version_unknown_to_the_journal_counts_the_lines_as_read_doc_does(admin: Client) -> None:
    await call(admin, "write_note", {"path": "handbook/lines.md", "content": "a\nb\n"})
    stale = await refusal(admin, "edit_note", {"path": "handbook/lines.md", "operation": "append", "content": "c",
                                               "expected_version": "0123456789abcdef"})
    assert "changed outside this journal; it now has 2 lines" in stale  # a final newline ends a line


EDITED = ("---\r\ntitle: Entscheidungen\r\n---\r\n# Entscheidungen\r\n\r\n## Beschlüsse\r\n- Café öffnet\r\n\r\n"
          "```markdown\r\n## Risiken\r\n```\r\n\r\n## Risiken\r\n- keine\r\n")


async def test_each_edit_operation_keeps_the_rest_byte_for_byte(admin: Client, world: World) -> None:
    path = "handbook/entscheidungen.md"
    note = world.vault / path
    note.write_bytes(EDITED.encode("utf-8"))
    world.runtime.indexing.sync_paths([path])
    version = (await call(admin, "readDoc", {"path": path}))["version"]
    steps: list[tuple[dict[str, Any], str]] = [
        ({"operation": "insert_under_heading", "heading": "## Beschlüsse", "content": "- Tee bleibt"},
         EDITED.replace("```\r\n\r\n## Risiken", "```\r\n- Tee bleibt\r\n\r\n## Risiken")),
        ({"operation": "replace_section", "heading": "## Risiken", "content": "- Regen\n- Wind"}, ""),
        ({"operation": "replace", "old": "Café öffnet", "content": "Café schließt"}, ""),
        ({"operation": "set_front_matter", "fields": {"status": "entschieden"}}, ""),
        ({"operation": "append", "content": "Ende."}, ""),
        ({"operation": "prepend", "content": "Entwurf."}, ""),
    ]
    for args, expected in steps:
        done = await call(admin, "edit_note", {"path": path, "expected_version": version, **args})
        version = done["version"]
        if expected:
            assert note.read_bytes().decode("utf-8") == expected
    assert note.read_bytes().decode("utf-8") == (
        "---\r\ntitle: Entscheidungen\r\nstatus: entschieden\r\n---\r\nEntwurf.\r\n# Entscheidungen\r\n\r\n"
        "## Beschlüsse\r\n- Café schließt\r\n\r\n```markdown\r\n## Risiken\r\n```\r\n- Tee bleibt\r\n\r\n"
        "## Risiken\r\n- Regen\r\n- Wind\r\nEnde.\r\n")
    assert await found(admin, "Café schließt") == [path]


async def test_a_note_with_an_old_macs_cr_endings_is_edited_line_by_line_in_its_own_endings(
        admin: Client, world: World) -> None:
    """A probe: a note whose lines end in a lone CR was one line to the editing (insert_under_heading "## A": its
    headings '# H\\r## A\\rx'), readDoc said totalLines 1, and an append ended its line with LF."""
    path = "handbook/old-mac.md"
    note = world.vault / path
    note.write_bytes(b"# H\r## A\rx\r")
    world.runtime.indexing.sync_paths([path])
    read = await call(admin, "readDoc", {"path": path})
    assert read["totalLines"] == 3 and read["text"].split("\n") == ["# H", "## A", "x"], read
    done = await call(admin, "edit_note", {"path": path, "operation": "insert_under_heading", "heading": "## A",
                                           "content": "y\nz", "expected_version": read["version"]})
    assert note.read_bytes() == b"# H\r## A\rx\ry\rz\r" and done["changed_lines"] == {"first": 4, "last": 5}
    steps: list[dict[str, Any]] = [
        {"operation": "append", "content": "end"},
        {"operation": "replace", "old": "x\ny", "content": "x2\ny2"},
        {"operation": "replace_section", "heading": "## A", "content": "only"},
        {"operation": "set_front_matter", "fields": {"status": "done"}},
        {"operation": "prepend", "content": "first"},
    ]
    for args in steps:
        await call(admin, "edit_note", {"path": path, **args})
    assert note.read_bytes() == b"---\rstatus: done\r---\rfirst\r# H\r## A\ronly\r"
    stale = await refusal(admin, "edit_note", {"path": path, "operation": "append", "content": "c",
                                               "expected_version": "0123456789abcdef"})
    assert "it now has 7 lines" in stale, stale


async def test_a_stray_cr_in_a_note_with_lf_lines_is_inside_its_line_for_read_doc_as_for_search(
        admin: Client, world: World) -> None:
    """A review: readDoc cut a line at a lone CR in any note (a pasted terminal progress line), search and links at
    LF only, so readDoc's line 4 was 'second line' where search_notes found 'needle here' at line 4. A lone CR
    ends a line only in a note with no LF at all (an old Mac's)."""
    path = "handbook/progress-log.md"
    (world.vault / path).write_bytes(b"# Log\nprogress 10%\rprogress 100%\nsecond line\nneedle here\n")
    world.runtime.indexing.sync_paths([path])
    hits = await call(admin, "search_notes", {"query": "needle here", "path": path})
    assert [(m["path"], m["line"]) for m in hits["matches"]] == [(path, 4)], hits
    read = await call(admin, "readDoc", {"path": path, "offset": 4, "limit": 1})
    assert read["text"] == "needle here" and read["totalLines"] == 4, read
    whole = await call(admin, "readDoc", {"path": path})
    assert whole["text"].split("\n")[1] == "progress 10%\rprogress 100%", whole


async def test_an_append_to_a_crlf_note_with_a_stray_cr_inside_a_line_adds_crlf(admin: Client, world: World) -> None:
    """A review: the stray CR counted as a third ending, so the note's endings were 'mixed' and the append LF."""
    path = "handbook/crlf-stray.md"
    note = world.vault / path
    note.write_bytes(b"# Log\r\nprogress 10%\rprogress 100%\r\nend")
    world.runtime.indexing.sync_paths([path])
    done = await call(admin, "edit_note", {"path": path, "operation": "append", "content": "more\nlast"})
    assert note.read_bytes() == b"# Log\r\nprogress 10%\rprogress 100%\r\nend\r\nmore\r\nlast\r\n"
    assert done["changed_lines"] == {"first": 3, "last": 5}, done


async def test_an_append_after_a_last_line_ending_in_a_stray_cr_starts_a_new_line(admin: Client, world: World) -> None:
    """The stray CR at the end of an LF note's last line is no ending: the appended line went after it, on the same
    line to search and readDoc ("progress 100%\\rdone")."""
    path = "handbook/progress-tail.md"
    note = world.vault / path
    note.write_bytes(b"# Log\nprogress 100%\r")
    world.runtime.indexing.sync_paths([path])
    await call(admin, "edit_note", {"path": path, "operation": "append", "content": "done"})
    assert note.read_bytes() == b"# Log\nprogress 100%\r\ndone\n"
    read = await call(admin, "readDoc", {"path": path})
    assert read["totalLines"] == 3 and read["text"].split("\n")[2] == "done", read


async def test_a_stale_version_is_refused_with_the_current_one(admin: Client, world: World) -> None:
    first = await call(admin, "write_note", {"path": "handbook/stale.md", "content": "# S\n\nline\n"})
    second = await call(admin, "edit_note", {"path": "handbook/stale.md", "operation": "append", "content": "more",
                                             "expected_version": first["version"]})
    text = await refusal(admin, "edit_note", {"path": "handbook/stale.md", "operation": "append", "content": "x",
                                              "expected_version": first["version"]})
    assert f"it is at version {second['version']}" in text and "lines 4-4: 0 removed, 1 added" in text
    assert f"first by admin (edit_note, journal {second['journal_id']})" in text  # the writer by handle
    assert (world.vault / "handbook/stale.md").read_text() == "# S\n\nline\nmore\n"


async def test_a_passage_occurring_twice_overlapping_is_refused(admin: Client, world: World) -> None:
    """Overlapping occurrences count: "aa" occurs twice in "xaaay" (str.count said once, and the edit took the
    first), and the note is left as it was."""
    await call(admin, "write_note", {"path": "handbook/overlap.md", "content": "xaaay\n"})
    message, field = await invalid(admin, "edit_note", {"path": "handbook/overlap.md", "operation": "replace",
                                                        "old": "aa", "content": "b"})
    assert field == "old" and "occurs 2 times in the note" in message and "add the lines around it" in message
    assert (world.vault / "handbook/overlap.md").read_text() == "xaaay\n"
    await call(admin, "edit_note", {"path": "handbook/overlap.md", "operation": "replace", "old": "xaa",
                                    "content": "xb"})  # once: accepted
    assert (world.vault / "handbook/overlap.md").read_text() == "xbay\n"


async def test_edit_refusals_name_the_argument(admin: Client, world: World) -> None:
    await call(admin, "write_note", {"path": "handbook/refusals.md", "content": "## A\nx\n## A\ny\n"})
    assert (await invalid(admin, "edit_note", {"path": "handbook/refusals.md", "operation": "replace_section",
                                               "heading": "## A", "content": "z"}))[1] == "heading"
    assert (await invalid(admin, "edit_note", {"path": "handbook/refusals.md", "operation": "replace",
                                               "old": "nope", "content": "z"}))[1] == "old"
    assert (await invalid(admin, "edit_note", {"path": "handbook/refusals.md", "operation": "shuffle",
                                               "content": "z"}))[1] == "operation"
    assert (await invalid(admin, "edit_note", {"path": "handbook/refusals.md", "operation": "append",
                                               "content": "z", "expected_version": "v1"}))[1] == "expected_version"
    await call(admin, "write_note", {"path": "handbook/data.json", "content": '{"a": 1}\n'})
    text, field = await invalid(admin, "edit_note", {"path": "handbook/data.json", "operation": "set_front_matter",
                                                     "fields": {"x": "y"}})
    assert field == "operation" and "this file is not markdown" in text
    assert (world.vault / "handbook/data.json").read_text() == '{"a": 1}\n'  # never given a front matter


async def test_an_argument_the_operation_does_not_take_is_refused(admin: Client, world: World) -> None:
    path = "handbook/stray.md"
    await call(admin, "write_note", {"path": path, "content": "# S\n\n## Yes\n"})
    for args, field, takers in [({"operation": "append", "content": "x", "heading": "## Nope"}, "heading",
                                 "only insert_under_heading, replace_section take it"),
                                ({"operation": "append", "content": "x", "fields": {"a": 1}}, "fields",
                                 "only set_front_matter takes it"),
                                ({"operation": "prepend", "content": "x", "old": "# S"}, "old",
                                 "only replace takes it"),
                                ({"operation": "set_front_matter", "fields": {"a": 1}, "content": "x"}, "content",
                                 "only append, prepend")]:
        message, argument = await invalid(admin, "edit_note", {"path": path, **args})
        assert argument == field and f"{args['operation']} takes no {field}" in message and takers in message, message
    assert (world.vault / path).read_text() == "# S\n\n## Yes\n"


@pytest.mark.parametrize(("token", "path", "answer"), [
    ("staff_write", "handbook/staff.md", "Forbidden: you may read handbook but not write to it"),
    ("admin_write", "projects/admin.md", "Forbidden: you may read projects but not write to it"),
    ("alice_write", "northwind-advisory/alice.md", "Forbidden: you may read northwind-advisory but not write"),
    ("bob_write", "handbook/bob.md", "Not found: there is no note at this path"),
    ("bob_write", "no-such-project/bob.md", "Not found: there is no note at this path"),
    ("bob_write", "~alice/bob.md", "Not found: there is no note at this path"),
    ("alice_bound", "~alice/bound.md", "Not found: there is no note at this path"),
])
async def test_who_may_write_where(server: ServerThread, world: World, token: str, path: str, answer: str) -> None:
    async with connect(server.url, world.tokens[token]) as client:
        assert answer in await refusal(client, "write_note", {"path": path, "content": "x\n"})
    assert not (world.vault / path).exists()


async def test_forbidden_names_the_callers_home_as_the_way_out(server: ServerThread, world: World) -> None:
    for token, path, home in [("staff_write", "handbook/staff.md", "~staff"),
                              ("alice_write", "northwind-advisory/alice.md", "~alice")]:
        async with connect(server.url, world.tokens[token]) as client:
            for tool, args in [("write_note", {"path": path, "content": "x\n"}),
                               ("edit_note", {"path": path, "operation": "append", "content": "x"}),
                               ("delete_note", {"path": path})]:
                project = path.split("/")[0]
                assert await refusal(client, tool, args) == (
                    f"Error in {tool}: Forbidden: you may read {project} but not write to it; ask an admin for a "
                    f"write grant (or write in your home, {home})")
    bound = world.runtime.administration.mint_token(LOCAL_OWNER, "alice@northwind.test",
                                                    ["knowledge:read", "knowledge:write"],
                                                    project_id="northwind-advisory").secret
    async with connect(server.url, bound) as client:  # a bound token writes in its project alone: no home to offer
        text = await refusal(client, "write_note", {"path": "northwind-advisory/bound.md", "content": "x\n"})
        assert text.endswith("ask an admin for a write grant") and "home" not in text


async def test_members_write_where_they_hold_write_and_in_their_home(server: ServerThread, world: World) -> None:
    async with connect(server.url, world.tokens["alice_write"]) as client:
        await call(client, "write_note", {"path": "~alice/todo.md", "content": "- milk\n"})
        await call(client, "write_note", {"path": "projects/apollo/alice.md", "content": "alice was here\n"})
    async with connect(server.url, world.tokens["alice_bound"]) as client:
        await call(client, "edit_note", {"path": "projects/apollo/alice.md", "operation": "append", "content": "!"})


async def test_a_write_only_token_writes_where_its_person_may(server: ServerThread, world: World) -> None:
    async with connect(server.url, world.tokens["alice_write_only"]) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "write_note" in names and "readDoc" not in names
        await call(client, "write_note", {"path": "projects/apollo/blind.md", "content": "written unseen\n"})
        assert "Not found" in await refusal(client, "write_note", {"path": "handbook/blind.md", "content": "x"})


async def test_paths_that_escape_are_refused(admin: Client, world: World) -> None:
    outside = world.vault.parent / "outside"
    outside.mkdir(exist_ok=True)
    os.symlink(outside, world.vault / "handbook" / "escape", target_is_directory=True)
    for path, words in [("handbook/../../x.md", "inside the vault"), ("handbook/.notewell/x.md", "hidden"),
                        (".notewell/x.md", "hidden"), ("handbook/.hidden.md", "hidden"),
                        ("handbook/escape/x.md", "symlink"), ("handbook/tool.exe", "type the vault indexes"),
                        ("handbook", "names no file")]:
        message, argument = await invalid(admin, "write_note", {"path": path, "content": "x\n"})
        assert argument == "path" and words in message, (path, message)
    assert list(outside.iterdir()) == []


async def test_a_dot_segment_is_refused_never_folded_into_another_project(server: ServerThread, world: World) -> None:
    """alice writes projects and her home: "projects/../~alice/x.md" must not land in the home (nor anywhere)."""
    async with connect(server.url, world.tokens["alice_write"]) as client:
        await call(client, "write_note", {"path": "~alice/dots.md", "content": "dots\n"})
        refused = [("write_note", {"path": "projects/../~alice/dd1.md", "content": "x\n"}, "path"),
                   ("write_note", {"path": "projects/./apollo/dd2.md", "content": "x\n"}, "path"),
                   ("edit_note", {"path": "projects/../~alice/dots.md", "operation": "append", "content": "x"},
                    "path"),
                   ("delete_note", {"path": "projects/../~alice/dots.md"}, "path"),
                   ("move_note", {"path": "projects/../~alice/dots.md", "new_path": "~alice/dd3.md"}, "path"),
                   ("move_note", {"path": "~alice/dots.md", "new_path": "~alice/../~alice/dd4.md"}, "new_path"),
                   ("note_journal", {"path": "projects/../~alice/dots.md"}, "path")]
        for tool, args, field in refused:
            message, argument = await invalid(client, tool, args)
            assert argument == field and "without . or .." in message, (tool, args, message)
    assert sorted(p.name for p in (world.vault / "~alice").iterdir() if p.name.startswith("d")) == ["dots.md"]
    assert (world.vault / "~alice/dots.md").read_text() == "dots\n"
    assert not (world.vault / "projects/apollo/dd2.md").exists()


def outside_writer(monkeypatch: pytest.MonkeyPatch, vault: Path, rel: str, times: int) -> list[str]:
    """A program outside Notewell (an editor, a script) appending a line to ``rel`` right after each of the first
    ``times`` reads a note write makes of it: between the write's read and its rename, where the note's lock,
    which binds Notewell's writers alone, cannot keep it out. The lines it wrote, in order."""
    original = NoteFiles.read
    written: list[str] = []

    def read(self: NoteFiles, path: str, max_bytes: int, field: str = "path") -> bytes | None:
        data = original(self, path, max_bytes, field)
        if path == rel and len(written) < times:
            written.append(f"outside {len(written)}\n")
            with open(vault / rel, "a", encoding="utf-8") as note:
                note.write(written[-1])
        return data

    monkeypatch.setattr(NoteFiles, "read", read)
    return written


async def test_an_outside_change_during_a_write_is_kept(admin: Client, world: World,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = "handbook/outside.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    outside_writer(monkeypatch, world.vault, path, 1)
    done = await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    assert note.read_text() == "start\noutside 0\nmine\n"  # the edit applied to the text as the other left it
    read = await call(admin, "readDoc", {"path": path})
    assert read["version"] == done["version"]
    monkeypatch.undo()
    outside_writer(monkeypatch, world.vault, path, 1)
    replaced = await call(admin, "write_note", {"path": path, "content": "whole\n", "overwrite": True})
    assert note.read_text() == "whole\n"  # an overwrite is meant to replace: it replaces what it was shown
    back = await call(admin, "undo_note_write", {"journal_id": replaced["journal_id"]})
    assert note.read_text() == "start\noutside 0\nmine\noutside 0\n" and back["version"]


async def test_an_outside_change_during_a_write_named_by_version_is_a_conflict(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    path = "handbook/outside-versioned.md"
    note = world.vault / path
    first = await call(admin, "write_note", {"path": path, "content": "start\n"})
    outside_writer(monkeypatch, world.vault, path, 1)
    text = await refusal(admin, "edit_note", {"path": path, "operation": "append", "content": "mine",
                                              "expected_version": first["version"]})
    assert f"changed since version {first['version']}" in text and "changed outside this journal" in text
    assert note.read_text() == "start\noutside 0\n"
    world.runtime.indexing.sync_paths([path])  # the outside change, as the watcher would index it


async def test_a_note_that_keeps_changing_on_disk_is_a_conflict_and_nothing_is_lost(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    path = "handbook/outside-busy.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    written = outside_writer(monkeypatch, world.vault, path, 1000)
    text = await refusal(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    assert "keeps changing on disk" in text and "nothing was written" in text
    assert note.read_text() == "start\n" + "".join(written) and len(written) == 5
    gone = world.vault / "handbook/outside-gone.md"
    await call(admin, "write_note", {"path": "handbook/outside-gone.md", "content": "bye\n"})
    monkeypatch.undo()
    outside_writer(monkeypatch, world.vault, "handbook/outside-gone.md", 1)
    deleted = await call(admin, "delete_note", {"path": "handbook/outside-gone.md"})
    assert not gone.exists() and (world.vault / deleted["trash"]).read_text() == "bye\noutside 0\n"
    monkeypatch.undo()
    outside_writer(monkeypatch, world.vault, "handbook/outside-new.md", 1)
    assert "exists already" in await refusal(admin, "write_note", {"path": "handbook/outside-new.md",
                                                                   "content": "mine\n"})
    assert (world.vault / "handbook/outside-new.md").read_text() == "outside 0\n"  # made outside meanwhile: kept
    world.runtime.indexing.sync_paths([path, "handbook/outside-new.md"])  # as the watcher would index them


async def test_delete_goes_to_the_trash_and_undo_restores_byte_for_byte(admin: Client, world: World) -> None:
    path = "handbook/doomed.md"
    original = b"# Doomed\r\n\r\nOrbweaver notes\r\nno final newline"
    (world.vault / path).write_bytes(original)
    world.runtime.indexing.sync_paths([path])
    gone = await call(admin, "delete_note", {"path": path})
    assert gone["version"] is None and (world.vault / gone["trash"]).read_bytes() == original
    assert not (world.vault / path).exists() and await found(admin, "Orbweaver") == []
    back = await call(admin, "undo_note_write", {"journal_id": gone["journal_id"]})
    assert (world.vault / path).read_bytes() == original and await found(admin, "Orbweaver") == [path]
    assert "undone already" in await refusal(admin, "undo_note_write", {"journal_id": gone["journal_id"]})
    assert back["version"] == gone["previous_version"]


async def test_undo_is_refused_when_the_note_changed_since(admin: Client) -> None:
    first = await call(admin, "write_note", {"path": "handbook/undo.md", "content": "one\n"})
    edit = await call(admin, "edit_note", {"path": "handbook/undo.md", "operation": "append", "content": "two"})
    await call(admin, "edit_note", {"path": "handbook/undo.md", "operation": "append", "content": "three"})
    assert "changed since journal entry" in await refusal(admin, "undo_note_write", {"journal_id": edit["journal_id"]})
    assert "changed since" in await refusal(admin, "undo_note_write", {"journal_id": first["journal_id"]})


async def test_move_keeps_the_bytes_and_never_overwrites(admin: Client, world: World) -> None:
    await call(admin, "write_note", {"path": "handbook/draft-mango.md", "content": "mangosteen plan\n"})
    await call(admin, "write_note", {"path": "handbook/taken.md", "content": "taken\n"})
    assert "exists already" in await refusal(admin, "move_note", {"path": "handbook/draft-mango.md",
                                                                  "new_path": "handbook/taken.md"})
    moved = await call(admin, "move_note", {"path": "handbook/draft-mango.md", "new_path": "handbook/done/mango.md"})
    assert moved["moved_from"] == "handbook/draft-mango.md"
    assert await found(admin, "mangosteen") == ["handbook/done/mango.md"]
    assert "Forbidden" in await refusal(admin, "move_note", {"path": "handbook/done/mango.md",
                                                             "new_path": "projects/mango.md"})
    await call(admin, "undo_note_write", {"journal_id": moved["journal_id"]})
    assert (world.vault / "handbook/draft-mango.md").read_text() == "mangosteen plan\n"


async def test_a_move_that_keeps_links_names_those_it_leaves_unresolved(admin: Client) -> None:
    """With update_links false, a wikilink follows a move to another folder (a name resolves wherever it is),
    not a rename; a markdown link, a mention of the old path and the note's own relative link follow neither:
    the answer names each place that resolved before and does not now (a move said nothing of them)."""
    await call(admin, "write_note", {"path": "handbook/lk/target-u9.md", "content": "# U9\n\nSee [up](../up-u9.md).\n"})
    await call(admin, "write_note", {"path": "handbook/up-u9.md", "content": "# Up\n"})
    await call(admin, "write_note", {"path": "handbook/lk/from-u9.md", "content": (
        "[[target-u9]]\n[t](target-u9.md)\nsee `handbook/lk/target-u9.md`\n")})
    moved = await call(admin, "move_note", {"path": "handbook/lk/target-u9.md", "update_links": False,
                                            "new_path": "handbook/lk/moved/target-u9.md"})
    assert moved["unlinked"] == ["handbook/lk/from-u9.md:2", "handbook/lk/from-u9.md:3",
                                 "handbook/lk/moved/target-u9.md:3"], moved
    assert "3 lines with a link that no longer names what it named (update_links was false)" in moved["summary"]
    renamed = await call(admin, "move_note", {"path": "handbook/lk/moved/target-u9.md", "update_links": False,
                                              "new_path": "handbook/lk/moved/renamed-u9.md"})
    assert renamed["unlinked"] == ["handbook/lk/from-u9.md:1"], renamed  # [[target-u9]] names the old name
    plain = await call(admin, "move_note", {"path": "handbook/up-u9.md", "new_path": "handbook/up-u9-b.md",
                                            "update_links": False})
    assert "unlinked" not in plain and "no longer resolve" not in plain["summary"]


async def test_a_move_rewrites_the_links_to_it_and_its_own_each_as_written(admin: Client, world: World) -> None:
    """Each kind of link to a note, written each way, and the note's own relative link, name the same notes
    after it moves to another folder under a name with a space; only what names the target changes (a label,
    an anchor, a title stay), a link in code stays, and each rewritten note is a journal entry undo takes back."""
    await call(admin, "write_note", {"path": "handbook/rw/target-r1.md", "content": (
        "# R1\n\nSee [up](../up-r1.md#sec) and [[target-r1]] itself.\n")})
    await call(admin, "write_note", {"path": "handbook/up-r1.md", "content": "# Up\n"})
    source = ("[[target-r1]] and [[target-r1#Heading|shown]]\n"
              "[t](target-r1.md \"a title\") then [abs](/handbook/rw/target-r1.md#part)\n"
              "see `handbook/rw/target-r1.md` and [no ending](target-r1)\n"
              "```\n[[target-r1]] in code\n```\n")
    await call(admin, "write_note", {"path": "handbook/rw/from-r1.md", "content": source})
    moved = await call(admin, "move_note", {"path": "handbook/rw/target-r1.md",
                                            "new_path": "handbook/rw/moved/renamed r1.md"})
    assert "unlinked" not in moved, moved
    assert moved["relinked"] == ["handbook/rw/from-r1.md:1", "handbook/rw/from-r1.md:2", "handbook/rw/from-r1.md:3",
                                 "handbook/rw/moved/renamed r1.md:3"], moved
    assert "4 lines of 2 notes rewritten" in moved["summary"], moved
    assert (world.vault / "handbook/rw/from-r1.md").read_text() == (
        "[[renamed r1]] and [[renamed r1#Heading|shown]]\n"
        "[t](moved/renamed%20r1.md \"a title\") then [abs](/handbook/rw/moved/renamed%20r1.md#part)\n"
        "see `handbook/rw/moved/renamed r1.md` and [no ending](moved/renamed%20r1)\n"
        "```\n[[target-r1]] in code\n```\n")
    assert (world.vault / "handbook/rw/moved/renamed r1.md").read_text() == (
        "# R1\n\nSee [up](../../up-r1.md#sec) and [[renamed r1]] itself.\n")
    links = await call(admin, "getLinks", {"path": "handbook/rw/moved/renamed r1.md"})
    assert len(links["backlinks"]) == 7, links  # the six of from-r1.md outside code, and its own [[renamed r1]]
    assert {b["path"] for b in links["backlinks"]} == {"handbook/rw/from-r1.md", "handbook/rw/moved/renamed r1.md"}
    journal = await call(admin, "note_journal", {"path": "handbook/rw/from-r1.md"})
    rewrite = journal["entries"][0]
    assert rewrite["action"] == "edit" and rewrite["tool"] == "move_note", journal
    await call(admin, "undo_note_write", {"journal_id": rewrite["id"]})
    assert (world.vault / "handbook/rw/from-r1.md").read_text() == source


async def test_undoing_a_move_moves_the_note_back_with_its_links(admin: Client, world: World) -> None:
    """Undoing a move put the note back and left the links the move had rewritten naming the place it left (each
    then broken), and it was refused while the move's rewrite of the note's own links stood."""
    await call(admin, "write_note", {"path": "handbook/um/up-u1.md", "content": "# Up\n"})
    own = "# U1\n\nSee [up](../up-u1.md) and [[up-u1]].\n"
    await call(admin, "write_note", {"path": "handbook/um/sub/target-u1.md", "content": own})
    linking = "[to it](sub/target-u1.md) and [[target-u1]]\n"
    await call(admin, "write_note", {"path": "handbook/um/from-u1.md", "content": linking})
    moved = await call(admin, "move_note", {"path": "handbook/um/sub/target-u1.md",
                                            "new_path": "handbook/um/deeper/still/moved-u1.md"})
    assert moved["relinked"] == ["handbook/um/deeper/still/moved-u1.md:3", "handbook/um/from-u1.md:1"], moved
    undone = await call(admin, "undo_note_write", {"journal_id": moved["journal_id"]})
    assert undone["path"] == "handbook/um/sub/target-u1.md", undone
    assert undone["relinked"] == ["handbook/um/from-u1.md:1", "handbook/um/sub/target-u1.md:3"], undone
    assert (world.vault / "handbook/um/sub/target-u1.md").read_text() == own
    assert (world.vault / "handbook/um/from-u1.md").read_text() == linking
    assert not (world.vault / "handbook/um/deeper/still/moved-u1.md").exists()
    links = await call(admin, "getLinks", {"path": "handbook/um/sub/target-u1.md"})
    assert {b["path"] for b in links["backlinks"]} == {"handbook/um/from-u1.md"}, links
    again = await refusal(admin, "undo_note_write", {"journal_id": moved["journal_id"]})
    assert f"journal entry {moved['journal_id']} was undone already" in again, again


async def test_a_move_is_not_undone_over_a_later_edit(admin: Client, world: World) -> None:
    await call(admin, "write_note", {"path": "handbook/um/later-u2.md", "content": "# U2\n"})
    moved = await call(admin, "move_note", {"path": "handbook/um/later-u2.md", "new_path": "handbook/um/later-u3.md"})
    await call(admin, "edit_note", {"path": "handbook/um/later-u3.md", "operation": "append", "content": "more"})
    said = await refusal(admin, "undo_note_write", {"journal_id": moved["journal_id"]})
    assert "handbook/um/later-u3.md changed since journal entry" in said, said
    assert (world.vault / "handbook/um/later-u3.md").exists()


async def test_the_journal_lists_a_notes_writes_to_whoever_reads_it(server: ServerThread, world: World) -> None:
    async with connect(server.url, world.tokens["alice_write"]) as client:
        made = await call(client, "write_note", {"path": "projects/apollo/journal.md", "content": "# J\n"})
        edited = await call(client, "edit_note", {"path": "projects/apollo/journal.md", "operation": "append",
                                                  "content": "kumquat"})
        moved = await call(client, "move_note", {"path": "projects/apollo/journal.md",
                                                 "new_path": "projects/apollo/journal-2.md"})
    async with connect(server.url, world.tokens["alice_read"]) as reader:  # reading the journal needs no write
        listed = await call(reader, "note_journal", {"path": "projects/apollo/journal.md"})  # where it was
        assert [(e["id"], e["action"], e["before_version"], e["after_version"]) for e in listed["entries"]] == [
            (moved["journal_id"], "move", edited["version"], edited["version"]),
            (edited["journal_id"], "edit", made["version"], edited["version"]),
            (made["journal_id"], "write", None, made["version"])]
        assert listed["entries"][0]["new_path"] == "apollo/journal-2.md" and listed["entries"][1]["tool"] == "edit_note"
        assert "note" not in listed
        went = await call(reader, "note_journal", {"path": "projects/apollo/journal-2.md"})  # where it went
        assert [e["id"] for e in went["entries"]] == [moved["journal_id"]]
        one = await call(reader, "note_journal", {"path": "projects/apollo/journal.md", "limit": 1})
        assert len(one["entries"]) == 1 and "older ones may follow" in one["note"] and one["truncated"] is True
        paged, before = [], None  # one at a time, each page's note naming the next: every entry once
        while True:
            page = await call(reader, "note_journal", {"path": "projects/apollo/journal.md", "limit": 1,
                                                       **({"before": before} if before else {})})
            paged += [e["id"] for e in page["entries"]]
            if "note" not in page:
                break
            before = page["entries"][-1]["id"]
            assert f"with before {before} " in page["note"]
        assert paged == [e["id"] for e in listed["entries"]]
        assert (await invalid(reader, "note_journal", {"before": 0}))[1] == "before"
        message, argument = await invalid(reader, "note_journal", {"since": "last tuesday"})
        assert argument == "since" and "is not a time" in message
    async with connect(server.url, world.tokens["bob_write"]) as other:  # bob reads only his home
        assert (await call(other, "note_journal", {"path": "projects/apollo/journal-2.md"}))["entries"] == []
        assert all(e["project"] == "~bob" for e in (await call(other, "note_journal", {}))["entries"])


def test_the_watcher_finds_a_written_note_unchanged(world: World) -> None:
    """What a write indexed is what the vault holds: a later sync of the whole vault rewrites nothing."""
    world.runtime.notes.write_note(world.runtime.authentication.authenticate(world.tokens["admin_write"]),
                                   "handbook/watched.md", "seen once\n", tool="test")
    report = world.runtime.indexing.sync()
    assert (report.added, report.changed, report.removed, report.renamed) == (0, 0, 0, 0)


async def test_the_trash_is_the_owners_alone_whatever_the_umask(admin: Client, world: World) -> None:
    """A deleted note (one of a 0700 home, say) went to trash/<id>/<path> as 0644 in 0755 folders under a 022
    umask: readable by anyone on the machine. And a .notewell left open by an earlier version is tightened."""
    path = "handbook/secret-plan.md"
    (world.vault / path).write_bytes(b"# Secret\n\nquokka plan\n")
    world.runtime.indexing.sync_paths([path])
    index_folder = world.vault / ".notewell"
    index_folder.mkdir(exist_ok=True)
    index_folder.chmod(0o755)
    before = os.umask(0o022)
    try:
        gone = await call(admin, "delete_note", {"path": path})
    finally:
        os.umask(before)
    copy = world.vault / gone["trash"]
    assert copy.read_bytes() == b"# Secret\n\nquokka plan\n"
    assert copy.stat().st_mode & 0o777 == 0o600
    folders = [folder for folder in copy.parents if index_folder in (folder, *folder.parents)]
    assert folders[-1] == index_folder and len(folders) >= 3  # .notewell, trash, <id>, handbook
    assert {folder.stat().st_mode & 0o777 for folder in folders} == {0o700}
    await call(admin, "undo_note_write", {"journal_id": gone["journal_id"]})


async def test_undoing_an_edit_of_a_note_moved_since_names_the_move(admin: Client) -> None:
    """A probe: it said the note "is gone since" the edit, when a later entry had moved it."""
    await call(admin, "write_note", {"path": "handbook/undo-mv/a.md", "content": "# A\n"})
    edited = await call(admin, "edit_note", {"path": "handbook/undo-mv/a.md", "operation": "append", "content": "x"})
    moved = await call(admin, "move_note", {"path": "handbook/undo-mv/a.md", "new_path": "handbook/undo-mv/b.md"})
    said = await refusal(admin, "undo_note_write", {"journal_id": edited["journal_id"]})
    assert (f"handbook/undo-mv/a.md was moved to handbook/undo-mv/b.md by journal entry {moved['journal_id']}"
            in said and "undo that move first" in said), said


async def test_a_note_kept_decomposed_is_read_by_its_composed_name(admin: Client, world: World) -> None:
    """A probe: a file named on a Mac ("e" then a combining accent, NFD) was Not found by readDoc, getLinks and
    buildContext when asked for as typed (NFC), though a wikilink reached it."""
    decomposed = unicodedata.normalize("NFD", "handbook/nfd/Zoë café.md")
    (world.vault / decomposed).parent.mkdir(parents=True, exist_ok=True)
    (world.vault / decomposed).write_text("# Zoë\n\ncafé notes\n")
    (world.vault / "handbook/nfd/index.md").write_text("see [[Zoë café]]\n")
    world.runtime.indexing.sync_paths([decomposed, "handbook/nfd/index.md"])
    composed = unicodedata.normalize("NFC", decomposed)
    read = await call(admin, "readDoc", {"path": composed})
    assert "café notes" in read["text"] and read["path"] == decomposed, read
    links = await call(admin, "getLinks", {"path": composed})
    assert [b["path"] for b in links["backlinks"]] == ["handbook/nfd/index.md"], links
    context = await call(admin, "buildContext", {"path": composed})
    assert decomposed in json.dumps(context, ensure_ascii=False), context


async def test_a_note_is_written_by_either_unicode_form_of_its_name(admin: Client, world: World) -> None:
    """A probe: readDoc took either Unicode form of a name (NFC "Zoë", NFD "Zoe" and a combining mark) while
    edit_note, delete_note and move_note answered Not found and note_journal nothing, for a note written by its
    composed name and for a file a Mac sync named decomposed. Each write goes to the file that is there."""
    folder = world.vault / "handbook/forms"
    composed, decomposed = "handbook/forms/Zo\u00eb.md", "handbook/forms/Zoe\u0308.md"
    await call(admin, "write_note", {"path": composed, "content": "# Zoë\n"})
    edited = await call(admin, "edit_note", {"path": decomposed, "operation": "append", "content": "other form"})
    assert edited["path"] == composed, edited
    journal = await call(admin, "note_journal", {"path": decomposed})
    assert [e["action"] for e in journal["entries"]] == ["edit", "write"], journal
    moved = await call(admin, "move_note", {"path": decomposed, "new_path": "handbook/forms/zoe.md"})
    assert moved["moved_from"] == composed and (folder / "zoe.md").read_text() == "# Zoë\nother form\n", moved
    (folder / "cafe\u0301.md").write_text("# Café\n")  # named decomposed on disk, typed composed
    world.runtime.indexing.sync_paths(["handbook/forms/cafe\u0301.md"])
    typed = "handbook/forms/caf\u00e9.md"
    edited = await call(admin, "edit_note", {"path": typed, "operation": "append", "content": "menu"})
    assert edited["path"] == "handbook/forms/cafe\u0301.md", edited
    gone = await call(admin, "delete_note", {"path": typed, "expected_version": edited["version"]})
    await call(admin, "undo_note_write", {"journal_id": gone["journal_id"]})
    journal = await call(admin, "note_journal", {"path": typed})
    assert [e["action"] for e in journal["entries"]] == ["undo", "delete", "edit"], journal
    assert sorted(p.name for p in folder.iterdir()) == ["cafe\u0301.md", "zoe.md"]
    assert (folder / "cafe\u0301.md").read_text() == "# Café\nmenu\n"
    read = await call(admin, "readDoc", {"path": typed})
    assert read["version"] == edited["version"] and "menu" in read["text"], read
    noel = "handbook/forms/No\u00ebl.md"  # written composed, then renamed decomposed by a sync: undone still
    await call(admin, "write_note", {"path": noel, "content": "# Noël\n"})
    edited = await call(admin, "edit_note", {"path": noel, "operation": "append", "content": "gifts"})
    (folder / "No\u00ebl.md").rename(folder / "Noe\u0308l.md")
    world.runtime.indexing.sync_paths([noel, "handbook/forms/Noe\u0308l.md"])
    undone = await call(admin, "undo_note_write", {"journal_id": edited["journal_id"]})
    assert undone["path"] == "handbook/forms/Noe\u0308l.md", undone
    assert (folder / "Noe\u0308l.md").read_text() == "# Noël\n" and not (folder / "No\u00ebl.md").exists()


@pytest.mark.parametrize("ignored_form", ["NFC", "NFD"])
async def test_a_note_an_ignore_file_passes_over_is_not_written_by_its_other_unicode_form(
        admin: Client, world: World, ignored_form: str) -> None:
    """A review: an ignore file matches a name as it is written, and a write found the note by either Unicode
    form of its path after checking the ignore files against the form typed, so edit_note through the other form
    read and rewrote the ignored file (its bytes then in the journal, which readers read). Every write by the
    other form is now refused as by the ignored one: edit, delete, move and overwrite."""
    typed_form = "NFD" if ignored_form == "NFC" else "NFC"
    folder = world.vault / f"handbook/ignored-{ignored_form.lower()}"
    folder.mkdir(parents=True)
    secret = unicodedata.normalize(ignored_form, "secret-café.md")
    (folder / ".notewellignore").write_text(f"{secret}\n")
    (folder / secret).write_text("# the secret\n")
    typed = unicodedata.normalize(typed_form, f"handbook/ignored-{ignored_form.lower()}/secret-café.md")
    for tool, args in [("edit_note", {"operation": "append", "content": "leak"}), ("delete_note", {}),
                       ("move_note", {"new_path": f"handbook/ignored-{ignored_form.lower()}/out.md"}),
                       ("write_note", {"content": "over", "overwrite": True})]:
        message, argument = await invalid(admin, tool, {"path": typed, **args})
        assert "is excluded by an ignore file" in message and argument == "path", (tool, message)
    assert sorted(p.name for p in folder.iterdir()) == [".notewellignore", secret]
    assert (folder / secret).read_text() == "# the secret\n"
    assert (await call(admin, "note_journal", {"path": typed}))["entries"] == []


@pytest.mark.parametrize("ignored_form", ["NFC", "NFD"])
async def test_an_undo_does_not_write_a_note_renamed_to_a_form_an_ignore_file_passes_over(
        admin: Client, world: World, ignored_form: str) -> None:
    """The undo of a write finds its note by either Unicode form too (a sync may have renamed it): a note renamed
    to the form an ignore file names is not written back, as no write by that name is."""
    typed_form = "NFD" if ignored_form == "NFC" else "NFC"
    folder = world.vault / f"handbook/ignored-undo-{ignored_form.lower()}"
    folder.mkdir(parents=True)
    plan = unicodedata.normalize(ignored_form, "plan-é.md")
    (folder / ".notewellignore").write_text(f"{plan}\n")
    other = unicodedata.normalize(typed_form, f"handbook/ignored-undo-{ignored_form.lower()}/plan-é.md")
    await call(admin, "write_note", {"path": other, "content": "# plan\n"})  # not ignored in this form
    edited = await call(admin, "edit_note", {"path": other, "operation": "append", "content": "step"})
    (world.vault / other).rename(folder / plan)  # a sync renamed it to the form the ignore file names
    message, argument = await invalid(admin, "undo_note_write", {"journal_id": edited["journal_id"]})
    assert "is excluded by an ignore file" in message and argument == "journal_id", message
    assert (folder / plan).read_text() == "# plan\nstep\n"


async def test_a_name_taken_in_another_unicode_form_is_refused_with_a_way_out_that_works(
        admin: Client, world: World) -> None:
    """A review: the refusal of a name another entry has in another Unicode form said "write to it by that name",
    though a write by either name now finds the note, and only with overwrite; a move never overwrites, and a
    folder is entered by its own spelling. Each refusal names the way out that works, and it does."""
    composed, decomposed = "handbook/alike/Zo\u00eb", "handbook/alike/Zoe\u0308"
    await call(admin, "write_note", {"path": f"{composed}.md", "content": "first\n"})
    await call(admin, "write_note", {"path": f"{composed}/inner.md", "content": "in a folder\n"})
    message, argument = await invalid(admin, "write_note", {"path": f"{decomposed}.md", "content": "second\n"})
    assert argument == "path" and "to write over that note, write with overwrite (either form of its name finds " \
                                  "it), or choose another name" in message, message
    written = await call(admin, "write_note", {"path": f"{decomposed}.md", "content": "second\n", "overwrite": True})
    assert written["path"] == f"{composed}.md" and (world.vault / f"{composed}.md").read_text() == "second\n"
    await call(admin, "write_note", {"path": "handbook/alike/plan.md", "content": "plan\n"})
    message, argument = await invalid(admin, "move_note", {"path": "handbook/alike/plan.md",
                                                           "new_path": f"{decomposed}.md"})
    assert argument == "new_path" and "a move never overwrites a note: choose another name" in message, message
    message, argument = await invalid(admin, "write_note", {"path": f"{decomposed}/other.md", "content": "x\n"})
    assert argument == "path" and "write the path with the folder's name as it is spelled there" in message, message
    await call(admin, "write_note", {"path": f"{composed}/other.md", "content": "x\n"})
    assert sorted(p.name for p in (world.vault / "handbook/alike").iterdir()) == ["Zo\u00eb", "Zo\u00eb.md", "plan.md"]
