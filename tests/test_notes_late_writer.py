"""A program outside Notewell that writes a note in the instants of a write's rename, through the MCP door on both
backends (docs/writing.md, "Other programs writing the same notes").

An appending script opens the note, then writes: when Notewell's rename (or delete) comes between the two, the
script's line goes into the file the rename took away. The check before the rename cannot see it; it was lost
(about 1 line in 100 of a script appending every 2 ms while a move rewrote its notes). Here the script is made to
open the note right before the rename and write right after it, every time, by wrapping ``os.replace``,
``os.unlink`` and ``os.link`` for the note's name; no timing is involved.
"""

from __future__ import annotations

import errno
import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_world import World
from notes_world import call, refusal, served_notes
from notewell.services.note_files import NoteFiles

pytestmark = pytest.mark.anyio


world, server, admin = served_notes("late")


def around(monkeypatch: pytest.MonkeyPatch, step: str, name: str, times: int,
           outside: Callable[[Callable[[], None]], None]) -> list[int]:
    """``os.<step>`` (replace, unlink or link) of the entry ``name`` done as ``outside(done)`` says, for its first
    ``times`` calls; the calls counted."""
    real: Callable[..., None] = getattr(os, step)
    calls: list[int] = []

    def wrapped(*args: Any, **kwargs: Any) -> None:
        target = args[1] if step in ("replace", "link") else args[0]
        if target != name or len(calls) >= times:
            real(*args, **kwargs)
            return
        calls.append(1)
        outside(lambda: real(*args, **kwargs))

    monkeypatch.setattr(os, step, wrapped)
    return calls


def appending_across(note: Path, lines: list[str]) -> Callable[[Callable[[], None]], None]:
    """The script: the note opened before the step, a line written after it (the next of ``lines`` each time)."""
    def outside(done: Callable[[], None]) -> None:
        with open(note, "a", encoding="utf-8") as opened:
            done()
            opened.write(lines.pop(0))
    return outside


def rewriting_across(note: Path, text: str) -> Callable[[Callable[[], None]], None]:
    """An editor that writes its file in place: opened before the step, rewritten whole after it."""
    def outside(done: Callable[[], None]) -> None:
        with open(note, "r+", encoding="utf-8") as opened:
            done()
            opened.write(text)
            opened.truncate()
    return outside


def rewritten_then_appended(note: Path) -> Callable[[Callable[[], None]], None]:
    """Two programs: an editor rewriting the note in place across the step, then a script appending a line to the
    note the step left, before the editor's text can be put back."""
    def outside(done: Callable[[], None]) -> None:
        rewriting_across(note, "rewritten\n")(done)
        with open(note, "a", encoding="utf-8") as second:
            second.write("second\n")
    return outside


def beside(note: Path) -> list[Path]:
    return sorted(p for p in note.parent.iterdir() if p.name.startswith(f"{note.stem}.conflict-"))


async def test_a_line_appended_across_the_rename_is_kept(admin: Client, world: World,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = "handbook/late-edit.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    calls = around(monkeypatch, "replace", note.name, 1, appending_across(note, ["outside\n"]))
    await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    monkeypatch.undo()
    assert calls == [1]
    assert note.read_text() == "start\nmine\noutside\n"  # the edit stands, the script's line appended to it
    assert beside(note) == []
    world.runtime.indexing.sync_paths([path])  # as the watcher would index it


async def test_lines_appended_across_each_rename_are_kept(admin: Client, world: World,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A script that appends across the rename that appends its line again, and so on: five times, then the rest
    is kept beside the note."""
    path = "handbook/late-often.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    lines = [f"outside {n}\n" for n in range(10)]
    calls = around(monkeypatch, "replace", note.name, 3, appending_across(note, lines))
    await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    assert len(calls) == 3 and note.read_text() == "start\nmine\noutside 0\noutside 1\noutside 2\n"
    monkeypatch.undo()
    calls = around(monkeypatch, "replace", note.name, 10, appending_across(note, lines))
    await call(admin, "edit_note", {"path": path, "operation": "append", "content": "again"})
    monkeypatch.undo()
    assert len(calls) == 6
    assert note.read_text() == "start\nmine\noutside 0\noutside 1\noutside 2\nagain\n" + "".join(
        f"outside {n}\n" for n in range(3, 8))
    kept = beside(note)
    assert len(kept) == 1 and kept[0].read_text() == "outside 8\n"
    world.runtime.indexing.sync_paths([path, str(kept[0].relative_to(world.vault))])


async def test_a_note_rewritten_across_the_rename_is_put_back_and_the_edit_made_again(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    path = "handbook/late-rewrite.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    around(monkeypatch, "replace", note.name, 1, rewriting_across(note, "rewritten\n"))
    done = await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    monkeypatch.undo()
    assert note.read_text() == "rewritten\nmine\n"  # the editor's text, and the edit made again over it
    read = await call(admin, "readDoc", {"path": path})
    assert read["version"] == done["version"] and beside(note) == []


async def test_a_line_appended_across_a_delete_goes_to_the_trash(admin: Client, world: World,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = "handbook/late-delete.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "bye\n"})
    calls = around(monkeypatch, "unlink", note.name, 1, appending_across(note, ["outside\n"]))
    deleted = await call(admin, "delete_note", {"path": path})
    monkeypatch.undo()
    assert calls == [1] and not note.exists()
    assert (world.vault / deleted["trash"]).read_text() == "bye\noutside\n"  # the delete made again, over both
    back = await call(admin, "undo_note_write", {"journal_id": deleted["journal_id"]})
    assert note.read_text() == "bye\noutside\n" and back["version"]


async def test_a_note_made_outside_as_a_new_one_is_written_is_kept(admin: Client, world: World,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Made between the check that the path is free and the step that puts the new note there: a rename put the
    new note over it."""
    path = "handbook/late-new.md"
    note = world.vault / path

    def made_first(done: Callable[[], None]) -> None:
        note.write_text("made outside\n")
        done()

    for step in ("replace", "link"):  # the step before the fix, and after it
        around(monkeypatch, step, note.name, 1, made_first)
    assert "exists already" in await refusal(admin, "write_note", {"path": path, "content": "mine\n"})
    monkeypatch.undo()
    assert note.read_text() == "made outside\n"
    world.runtime.indexing.sync_paths([path])  # as the watcher would index it


async def test_a_late_rewrite_written_over_again_is_kept_beside_the_note(admin: Client, world: World,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A second program writes over the new text before the first one's can be put back: the write stands (the
    second built on it) and the first one's text is kept in a file beside the note."""
    path = "handbook/late-twice.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})

    around(monkeypatch, "replace", note.name, 1, rewritten_then_appended(note))
    await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    monkeypatch.undo()
    assert note.read_text() == "start\nmine\nsecond\n"
    kept = beside(note)
    assert len(kept) == 1 and kept[0].suffix == ".md" and kept[0].read_text() == "rewritten\n"
    world.runtime.indexing.sync_paths([path, str(kept[0].relative_to(world.vault))])


@pytest.mark.parametrize("answer", [errno.EPERM, errno.ENOSYS])
async def test_a_new_note_is_written_where_the_file_system_has_no_hard_links(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch, answer: int) -> None:
    """link() refused as FAT and some network shares refuse it (EPERM), or as a FUSE file system that has no link
    (ENOSYS: rclone, s3fs), which was an internal error: every new note failed there."""
    path = f"handbook/late-fat-{errno.errorcode[answer]}.md"
    note = world.vault / path

    def refused(done: Callable[[], None]) -> None:
        raise OSError(answer, os.strerror(answer))

    around(monkeypatch, "link", note.name, 1, refused)
    made = await call(admin, "write_note", {"path": path, "content": "made\n"})
    monkeypatch.undo()
    assert note.read_text() == "made\n" and made["version"]


async def test_the_conflict_file_of_a_note_with_a_long_name_fits_a_name(admin: Client, world: World,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A note's name may be 255 bytes long: its conflict file's name, the stem with ``.conflict-<hex>`` added, was
    longer than a name may be (ENAMETOOLONG), which escaped as an internal error after the edit was on disk, the
    edit neither indexed nor journaled and the other program's text lost."""
    path = "handbook/" + "é" * 123 + "x.md"  # 250 bytes
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})

    around(monkeypatch, "replace", note.name, 1, rewritten_then_appended(note))
    done = await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    monkeypatch.undo()
    assert note.read_text() == "start\nmine\nsecond\n"
    kept = sorted(p for p in note.parent.iterdir() if p.name.startswith("é" * 100) and ".conflict-" in p.name)
    assert len(kept) == 1 and kept[0].read_text() == "rewritten\n" and kept[0].suffix == ".md"
    assert len(kept[0].name.encode()) <= 255 and kept[0].name.startswith("é" * 100)
    journal = await call(admin, "note_journal", {"path": path})
    assert any(entry["id"] == done["journal_id"] for entry in journal["entries"])
    world.runtime.indexing.sync_paths([path, str(kept[0].relative_to(world.vault))])


@pytest.mark.parametrize("tool", ["edit_note", "delete_note"])
async def test_a_note_made_a_folder_under_a_write_is_refused_as_one(admin: Client, world: World,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    tool: str) -> None:
    """Another program puts a folder where the note was, between the write's read and its check: the check read
    what is there (a folder has a size, but no bytes to read), which escaped as an internal error (EISDIR); it is
    now a change on disk, and the write's read again says what the path is."""
    path = f"handbook/late-folder-{tool}.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    real = os.open
    opened: list[int] = []

    def opening(name: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if name == note.name and kwargs.get("dir_fd") is not None:
            opened.append(1)
        if len(opened) == 2 and note.is_file():  # the read's open, then the check's
            note.unlink()
            note.mkdir()
            (note / "inside.md").write_text("a folder's note\n")
        return real(name, flags, *args, **kwargs)

    args = {"path": path, **({"operation": "append", "content": "mine"} if tool == "edit_note" else {})}
    monkeypatch.setattr(os, "open", opening)
    with pytest.raises(MCPError) as refused:  # invalid arguments, naming the path; no internal error
        await admin.call_tool(tool, args)
    monkeypatch.undo()
    assert len(opened) >= 2 and f"path: {path} is not a regular file" in str(refused.value), refused.value
    assert (note / "inside.md").read_text() == "a folder's note\n"


async def test_a_full_disk_while_keeping_a_late_line_leaves_the_write_standing(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The late line cannot be written anywhere (the disk is full): the edit, already in place, stands and is
    journaled (it answered an internal error, with its text on disk and no journal entry)."""
    path = "handbook/late-full.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    written = NoteFiles._written
    temps: list[int] = []

    def full_after_the_first(self: NoteFiles, folder: int, data: bytes) -> str:
        temps.append(1)
        if len(temps) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return written(self, folder, data)

    monkeypatch.setattr(NoteFiles, "_written", full_after_the_first)
    around(monkeypatch, "replace", note.name, 1, appending_across(note, ["outside\n"]))
    done = await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    monkeypatch.undo()
    assert note.read_text() == "start\nmine\n" and len(temps) == 2
    await call(admin, "undo_note_write", {"journal_id": done["journal_id"]})
    assert note.read_text() == "start\n"


async def test_a_full_disk_after_putting_a_rewrite_back_still_makes_the_edit_again(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """An editor rewrites the note across the edit's rename, and again across the rename putting its text back; the
    second text cannot be kept beside (the disk is full). The editor's first text is the note again, so the edit
    is made again over it: it was answered done and journaled, with the note holding the editor's text alone. On a
    file system without hard links (FAT: where one has them, their files are put back and kept beside by a name,
    which takes no room)."""
    path = "handbook/late-full-put-back.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    written = NoteFiles._written
    temps: list[int] = []

    def full_at_the_third(self: NoteFiles, folder: int, data: bytes) -> str:
        temps.append(1)
        if len(temps) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return written(self, folder, data)

    texts = ["rewritten\n", "again\n"]

    def editor(done: Callable[[], None]) -> None:
        rewriting_across(note, texts.pop(0))(done)

    def no_links(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(NoteFiles, "_written", full_at_the_third)
    monkeypatch.setattr(os, "link", no_links)
    calls = around(monkeypatch, "replace", note.name, 2, editor)
    await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    monkeypatch.undo()
    assert len(calls) == 2 and len(temps) >= 3
    assert note.read_text() == "rewritten\nmine\n"  # the editor's text put back, and the edit made again over it
    assert "its 6 bytes could not be kept" in caplog.text  # "again\n", the text lost (it named the 10 put back)


def truncating_across(note: Path, first: str, rest: str) -> Callable[[Callable[[], None]], None]:
    """An editor that truncates its file, then writes it again: opened before the first step, truncated after it and
    written as far as ``first``; the ``rest`` written after the second step (the put-back of what it had written)."""
    opened: list[Any] = []

    def outside(done: Callable[[], None]) -> None:
        if not opened:
            opened.append(open(note, "r+", encoding="utf-8"))  # noqa: SIM115 (written across two steps)
            done()
            opened[0].truncate(0)
            opened[0].write(first)
            opened[0].flush()
            return
        done()
        opened[0].write(rest)
        opened[0].close()
    return outside


@pytest.mark.parametrize("first", ["", "rewritten by"])
async def test_a_note_truncated_then_written_across_the_rename_is_put_back_whole(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch, first: str) -> None:
    """The editor has truncated the note (and written part of its text, or none) when the write looks at the file it
    replaced, and writes the rest after the look: that half text was put back as a copy, the rest written into the
    file no longer named, lost, and the edit made again over the half text (over nothing: the note's text gone)."""
    path = f"handbook/late-truncated-{len(first)}.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    calls = around(monkeypatch, "replace", note.name, 2, truncating_across(note, first, " the editor\n"))
    done = await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    monkeypatch.undo()
    assert len(calls) == 2
    assert note.read_text() == f"{first} the editor\nmine\n"  # their whole text, and the edit made again over it
    read = await call(admin, "readDoc", {"path": path})
    assert read["version"] == done["version"] and beside(note) == []


async def test_a_note_truncated_then_written_while_written_over_again_is_kept_whole_beside(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The editor truncates the note and writes part of its text across the rename; a script appends to the note
    before the editor's text can be put back, so it is kept beside the note: that file is the editor's own, which it
    goes on writing, not a copy of its half text (the rest was written into a file no longer named, lost)."""
    path = "handbook/late-truncated-beside.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    editor = truncating_across(note, "rewritten by", " the editor\n")

    def two_programs(done: Callable[[], None]) -> None:
        editor(done)
        with open(note, "a", encoding="utf-8") as second:
            second.write("second\n")

    around(monkeypatch, "replace", note.name, 1, two_programs)
    await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    monkeypatch.undo()
    editor(lambda: None)  # the editor writes the rest of its text, after the edit is done
    assert note.read_text() == "start\nmine\nsecond\n"
    kept = beside(note)
    assert len(kept) == 1 and kept[0].read_text() == "rewritten by the editor\n"
    world.runtime.indexing.sync_paths([path, str(kept[0].relative_to(world.vault))])


async def test_lines_appended_across_the_rename_past_the_note_limit_are_kept_beside(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """What a script appends late is appended to the note only while the note stays within the vault's
    max_file_bytes (the size the tools write and the index takes): it was appended whatever its size, so the note
    left the index and every later edit of it was refused."""
    path = "handbook/late-large-append.md"
    note = world.vault / path
    limit = world.runtime.settings.max_file_bytes
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    tail = "x" * (limit - 10) + "\n"
    around(monkeypatch, "replace", note.name, 1, appending_across(note, [tail]))
    await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    monkeypatch.undo()
    assert note.read_text() == "start\nmine\n"  # the edit stands, within the limit
    kept = beside(note)
    assert len(kept) == 1 and kept[0].read_text() == tail  # the script's lines, whole, beside the note
    assert f"kept beside it as {kept[0].name}" in caplog.text
    again = await call(admin, "edit_note", {"path": path, "operation": "append", "content": "again"})
    assert again["version"] and note.read_text() == "start\nmine\nagain\n"
    kept[0].unlink()


async def test_a_note_rewritten_across_the_rename_past_the_note_limit_is_kept_beside(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor's text over max_file_bytes written across the rename is kept beside the note, whole, and the edit
    stands: it was put back as the note, and the edit made again over it was refused as over the limit (the edit
    answered an error after it had been on disk)."""
    path = "handbook/late-large-rewrite.md"
    note = world.vault / path
    limit = world.runtime.settings.max_file_bytes
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    text = "y" * limit + "\n"
    around(monkeypatch, "replace", note.name, 1, rewriting_across(note, text))
    done = await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    monkeypatch.undo()
    assert note.read_text() == "start\nmine\n"
    read = await call(admin, "readDoc", {"path": path})
    assert read["version"] == done["version"]
    kept = beside(note)
    assert len(kept) == 1 and kept[0].stat().st_size == limit + 1 and kept[0].read_text() == text
    kept[0].unlink()


def opened_across(note: Path, held: list[Any]) -> Callable[[Callable[[], None]], None]:
    """A program that opens the note to append before the step and keeps it open after it (``held``): what it
    writes comes after any look the write takes at the file it replaced."""
    def outside(done: Callable[[], None]) -> None:
        held.append(open(note, "a", encoding="utf-8"))  # noqa: SIM115 (written after the write is done)
        done()
    return outside


HELD = "is open for writing in another program, and what it writes next would be lost were the note replaced now"


async def test_a_line_written_after_the_last_look_into_a_note_opened_before_the_rename_is_kept(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """A program that opened the note before the rename writes after the write's last look at the file the rename
    took away: its line went into a file no longer named, lost, and the edit was answered done. That file is put
    back as the note, and the edit refused while the program has it open."""
    path = "handbook/late-after-look.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    held: list[Any] = []
    calls = around(monkeypatch, "replace", note.name, 1, opened_across(note, held))
    try:
        said = await refusal(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    finally:
        monkeypatch.undo()
        for opened in held:
            opened.write("outside\n")  # after the write is done, into the file it opened before the rename
            opened.close()
    assert calls == [1] and f"Conflict: {path} {HELD}" in said and "try again once that program has closed" in said
    assert note.read_text() == "start\noutside\n" and beside(note) == []
    again = await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    assert again["version"] and note.read_text() == "start\noutside\nmine\n"
    assert not [p for p in note.parent.iterdir() if p.name.startswith(".notewell-write-")]


async def test_a_line_written_after_the_last_look_into_a_note_opened_before_a_delete_is_kept(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    path = "handbook/late-after-look-delete.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "bye\n"})
    held: list[Any] = []
    around(monkeypatch, "unlink", note.name, 1, opened_across(note, held))
    try:
        said = await refusal(admin, "delete_note", {"path": path})
    finally:
        monkeypatch.undo()
        for opened in held:
            opened.write("outside\n")
            opened.close()
    assert f"Conflict: {path} {HELD}" in said and note.read_text() == "bye\noutside\n"
    deleted = await call(admin, "delete_note", {"path": path})
    assert not note.exists() and (world.vault / deleted["trash"]).read_text() == "bye\noutside\n"


async def test_a_note_another_program_holds_open_for_writing_is_not_replaced(admin: Client, world: World) -> None:
    """A program (a logger, `exec >> note`) holds the note open to append: a rename over it sent every line it wrote
    after into the file no longer named. The edit is refused, the note untouched, until the program closes it."""
    path = "handbook/held-open.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})
    with open(note, "a", encoding="utf-8") as logger:
        said = await refusal(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
        logger.write("logged\n")
    assert f"Conflict: {path} {HELD}" in said and note.read_text() == "start\nlogged\n"
    await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    assert note.read_text() == "start\nlogged\nmine\n"


@pytest.mark.parametrize("answer", [errno.EPERM, errno.ENOSYS])
async def test_a_note_is_moved_where_the_file_system_has_no_hard_links(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch, answer: int) -> None:
    """A move links the note at its new path, then unlinks the old one: where link() is refused (FAT, some network
    shares: EPERM; a FUSE file system without link: ENOSYS) every move was an internal error. It is a rename that
    never replaces: a note at the new path is refused as ever, and kept."""
    name = errno.errorcode[answer]
    path, new_path, other = (f"handbook/fat-move-{name}{end}.md" for end in ("", "-moved", "-other"))
    await call(admin, "write_note", {"path": path, "content": "mine\n"})
    await call(admin, "write_note", {"path": other, "content": "other\n"})

    def no_links(*args: Any, **kwargs: Any) -> None:
        raise OSError(answer, os.strerror(answer))

    monkeypatch.setattr(os, "link", no_links)
    over = await refusal(admin, "move_note", {"path": path, "new_path": other})
    moved = await call(admin, "move_note", {"path": path, "new_path": new_path})
    made = await call(admin, "write_note", {"path": path, "content": "again\n"})  # a new note there, no link either
    monkeypatch.undo()
    assert f"Conflict: {other} exists already; a move never overwrites a note" in over
    assert (world.vault / other).read_text() == "other\n" and (world.vault / new_path).read_text() == "mine\n"
    assert (world.vault / path).read_text() == "again\n" and made["version"]
    read = await call(admin, "readDoc", {"path": new_path})
    assert read["version"] == moved["version"]
    assert not [p for p in (world.vault / "handbook").iterdir() if p.name.startswith(".notewell-write-")]


async def test_a_note_made_outside_as_a_new_one_is_written_without_hard_links_is_kept(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where link() is refused, a new note is renamed into place by a rename that never replaces: a file another
    program makes at its path meanwhile is kept, and the write refused as over an existing note."""
    path = "handbook/fat-made-outside.md"
    note = world.vault / path

    def made_then_refused(done: Callable[[], None]) -> None:
        note.write_text("made outside\n")
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    around(monkeypatch, "link", note.name, 1, made_then_refused)
    assert "exists already" in await refusal(admin, "write_note", {"path": path, "content": "mine\n"})
    monkeypatch.undo()
    assert note.read_text() == "made outside\n"
    assert not [p for p in note.parent.iterdir() if p.name.startswith(".notewell-write-")]


async def test_a_note_made_outside_right_before_the_rename_of_a_new_one_without_hard_links_is_kept(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where link() is refused, a new note was a check that the path is free, then os.replace: a file made between
    the two was replaced, lost. The rename that never replaces calls no os.replace; should one come, what another
    program made right before it is kept."""
    path = "handbook/fat-made-before-rename.md"
    note = world.vault / path

    def no_links(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    def made_first(done: Callable[[], None]) -> None:
        note.write_text("made outside\n")
        done()

    monkeypatch.setattr(os, "link", no_links)
    made = around(monkeypatch, "replace", note.name, 1, made_first)
    result = await admin.call_tool("write_note", {"path": path, "content": "mine\n"})
    monkeypatch.undo()
    assert note.read_text() == ("made outside\n" if made else "mine\n"), made
    assert result.is_error == bool(made)


async def test_a_late_rewrite_past_the_note_limit_without_hard_links_is_copied_beside_not_read_whole(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where link() is refused, what another program wrote across the rename was read whole into memory, however
    large (a runaway logger's megabytes), then written beside the note: it is copied beside a chunk at a time."""
    path = "handbook/fat-late-large.md"
    note = world.vault / path
    size = world.runtime.settings.max_file_bytes + 24 * (1 << 20)
    await call(admin, "write_note", {"path": path, "content": "start\n"})

    def no_links(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    def logger(done: Callable[[], None]) -> None:
        with open(note, "r+b") as opened:
            done()
            chunk = b"z" * (1 << 20)
            for at in range(0, size, len(chunk)):
                opened.write(chunk[:size - at])

    monkeypatch.setattr(os, "link", no_links)
    around(monkeypatch, "replace", note.name, 1, logger)
    tracemalloc.start()
    try:
        done = await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        monkeypatch.undo()
    assert peak < 16 * (1 << 20), peak  # twice the text and more when read whole
    assert note.read_text() == "start\nmine\n" and done["version"]
    kept = beside(note)
    assert len(kept) == 1 and kept[0].stat().st_size == size
    with open(kept[0], "rb") as copy:
        assert set(copy.read()) == {ord("z")}
    kept[0].unlink()
    assert not [p for p in note.parent.iterdir() if p.name.startswith(".notewell-write-")]


async def test_a_note_opened_across_the_rename_without_hard_links_is_said_in_the_log(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Where link() is refused, the file a program opened across the rename cannot be given its name back: a copy
    of it is put back, and what the program writes after goes into a file no longer named, which was silent."""
    path = "handbook/fat-opened-across.md"
    note = world.vault / path
    await call(admin, "write_note", {"path": path, "content": "start\n"})

    def no_links(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    held: list[Any] = []
    monkeypatch.setattr(os, "link", no_links)
    around(monkeypatch, "replace", note.name, 1, opened_across(note, held))
    try:
        await call(admin, "edit_note", {"path": path, "operation": "append", "content": "mine"})
    finally:
        monkeypatch.undo()
        for opened in held:
            opened.close()
    assert note.read_text() == "start\nmine\n"  # a copy of their file put back, and the edit made again over it
    assert (f"another program opened {path} for writing while Notewell replaced it, and the file system has no hard "
            "links") in caplog.text, caplog.text
