"""Moving a note through the MCP door, on both backends: the notes it rewrites indexed in one sync (and said
so when that sync fails), the symbolic links it leaves dangling named, and a link past a note's 1,000th (more
than the index keeps) rewritten all the same (docs/links.md, "A move takes its links along")."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace

import httpx
import pytest
from mcp import Client

from mcp_world import ServerThread, World, connect
from notes_world import call, refusal, served_notes
from notewell.answer_bound import ANSWER_BYTES_MAX, json_bytes
from notewell.errors import Unavailable
from notewell.indexer import IndexReport
from notewell.mcp.tools.note_writing import change_dict
from notewell.services.note_vault import NoteChange
from notewell.services.note_writing import NOT_INDEXED_CHARS
from notewell.vault.note_links import MAX_LINKS_PER_DOCUMENT

pytestmark = pytest.mark.anyio


world, server, admin = served_notes("moves")


def watched_syncs(world: World, monkeypatch: pytest.MonkeyPatch, fail_on: str | None = None,
                  error: str = "the store did not answer in time") -> list[list[str]]:
    """The paths of each sync the note writers run from now on; a sync of ``fail_on`` fails (the store down,
    saying ``error``)."""
    indexing = world.runtime.notes.vault.indexing
    real = indexing.sync_paths
    calls: list[list[str]] = []

    def sync_paths(paths: Sequence[str]) -> IndexReport:
        calls.append(sorted(paths))
        if fail_on is not None and fail_on in paths:
            raise Unavailable(error)
        return real(paths)

    monkeypatch.setattr(indexing, "sync_paths", sync_paths)
    return calls


async def test_a_move_indexes_the_notes_it_rewrote_in_one_sync(admin: Client, world: World,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Each linking note was indexed on its own sync (300 notes: 300 syncs); now one sync takes them all, after
    each is written and journaled, and every one is found by its new text when the move returns."""
    await call(admin, "write_note", {"path": "handbook/b1/target-b1.md", "content": "# B1\n"})
    linking = [f"handbook/b1/from-{i}.md" for i in range(4)]
    for path in linking:
        await call(admin, "write_note", {"path": path, "content": "See [[target-b1]].\n"})
    syncs = watched_syncs(world, monkeypatch)
    moved = await call(admin, "move_note", {"path": "handbook/b1/target-b1.md", "new_path": "handbook/b1/zebra-b1.md"})
    assert moved["relinked"] == [f"{path}:1" for path in linking], moved
    assert syncs == [["handbook/b1/target-b1.md", "handbook/b1/zebra-b1.md"], linking], syncs
    links = await call(admin, "getLinks", {"path": "handbook/b1/zebra-b1.md", "direction": "backlinks"})
    assert links["backlinksTotal"] == 4, links
    for path in linking:
        journal = await call(admin, "note_journal", {"path": path})
        assert journal["entries"][0]["tool"] == "move_note", journal


async def test_a_failed_index_of_the_rewritten_notes_is_said_and_each_note_is_whole(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the store refuses the rewritten notes' sync, each note is written whole and journaled (undo takes it
    back) and the answer says they are not indexed yet; the next sync indexes them. It said nothing before."""
    await call(admin, "write_note", {"path": "handbook/b2/target-b2.md", "content": "# B2\n"})
    linking = ["handbook/b2/from-a.md", "handbook/b2/from-b.md"]
    for path in linking:
        await call(admin, "write_note", {"path": path, "content": "First line.\nSee [[target-b2]].\n"})
    watched_syncs(world, monkeypatch, fail_on=linking[0])
    moved = await call(admin, "move_note", {"path": "handbook/b2/target-b2.md", "new_path": "handbook/b2/zebu-b2.md"})
    assert "the 2 rewritten notes are written and journaled but not indexed yet (the store did not answer in " \
           "time): the next sync of the vault indexes them" in moved["summary"], moved
    assert moved["relinked"] == [f"{path}:2" for path in linking], moved
    for path in linking:
        assert (world.vault / path).read_text() == "First line.\nSee [[zebu-b2]].\n"
        journal = await call(admin, "note_journal", {"path": path})
        assert journal["entries"][0]["tool"] == "move_note", journal
    monkeypatch.undo()
    world.runtime.indexing.sync_paths(linking)
    links = await call(admin, "getLinks", {"path": "handbook/b2/zebu-b2.md", "direction": "backlinks"})
    assert links["backlinksTotal"] == 2, links


async def test_a_long_indexing_error_leaves_a_moves_summary_short(
        admin: Client, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """An indexing error of 100,000 characters is quoted by its first NOT_INDEXED_CHARS in the summary, which stays
    a line (the log has it whole): it was quoted whole, and the door cut the summary with no way to its rest."""
    await call(admin, "write_note", {"path": "handbook/b6/target-b6.md", "content": "# B6\n"})
    await call(admin, "write_note", {"path": "handbook/b6/from-b6.md", "content": "See [[target-b6]].\n"})
    watched_syncs(world, monkeypatch, fail_on="handbook/b6/from-b6.md", error="the store said: " + "長" * 100_000)
    moved = await call(admin, "move_note", {"path": "handbook/b6/target-b6.md", "new_path": "handbook/b6/zebu-b6.md"})
    assert "truncated" not in moved and len(moved["summary"].encode()) < 4096, moved["summary"][:300]
    quoted = "the store said: " + "長" * (NOT_INDEXED_CHARS - len("the store said: "))
    assert moved["summary"].endswith(f"({quoted}…): the next sync of the vault indexes them"), moved["summary"][-400:]
    monkeypatch.undo()
    world.runtime.indexing.sync_paths(["handbook/b6/from-b6.md"])


async def test_a_moves_places_of_long_paths_are_listed_within_the_bound(admin: Client, server: ServerThread,
                                                                     world: World) -> None:
    """Fifty notes whose paths run to 700 bytes link to a note: over MCP a move's unlinked (update_links false),
    a move's relinked and its undo's list the first places that fit in the answer's 32 KB, and note names how many
    and where the rest is (getLinks' backlinks for relinked, search_notes for unlinked); the summary counts them
    all. Every place listed, the answer passed 32 KB and the door cut the list, saying only to ask for less (a
    narrower path), which no move can. REST lists all fifty."""
    folder = "handbook/b7/" + "/".join(["長い名前のフォルダ" * 9] * 3)  # 243 bytes a name
    linking = [f"{folder}/from-{n:02d}.md" for n in range(50)]
    await call(admin, "write_note", {"path": "handbook/b7/target-b7.md", "content": "# B7\n"})
    for path in linking:
        await call(admin, "write_note", {"path": path, "content": "See [[target-b7]].\n"})
    places = [f"{path}:1" for path in linking]

    def listed(answer: dict[str, object], name: str, way: str) -> None:
        assert len(json.dumps(answer, ensure_ascii=False).encode()) <= ANSWER_BYTES_MAX
        shown = answer[name]
        assert isinstance(shown, list) and 0 < len(shown) < 50 and shown == places[:len(shown)], answer
        assert answer["truncated"] is True and f"{name} lists the first {len(shown)} of its 50 places ({way}" \
            in str(answer["note"]), answer["note"]

    broke = await call(admin, "move_note", {"path": "handbook/b7/target-b7.md", "new_path": "handbook/b7/yak-b7.md",
                                            "update_links": False})
    listed(broke, "unlinked", 'search_notes with query "target-b7" and path "handbook" finds the lines still naming '
                              'its old place, and getLinks with path "handbook/b7/yak-b7.md" and direction outgoing')
    assert "50 lines with a link that no longer names what it named (update_links was false): see unlinked" \
           in broke["summary"], broke["summary"]
    matches, offset = [], 0
    while True:  # the way on, page by page
        found = await call(admin, "search_notes", {"query": "target-b7", "path": "handbook", "offset": offset})
        matches += [f"{match['path']}:{match['line']}" for match in found["matches"]]
        if not found["hasMore"]:
            break
        offset += len(found["matches"])
    assert matches == places, matches
    await call(admin, "undo_note_write", {"journal_id": broke["journal_id"]})
    moved = await call(admin, "move_note", {"path": "handbook/b7/target-b7.md", "new_path": "handbook/b7/gnu-b7.md"})
    listed(moved, "relinked", 'getLinks with path "handbook/b7/gnu-b7.md" and direction backlinks lists every note '
                              "linking to it now")
    assert "50 lines of 50 notes rewritten to keep their links naming what they named: see relinked" \
           in moved["summary"], moved["summary"]
    links = await call(admin, "getLinks", {"path": "handbook/b7/gnu-b7.md", "direction": "backlinks"})
    assert links["backlinksTotal"] == 50, links
    back = await call(admin, "undo_note_write", {"journal_id": moved["journal_id"]})
    listed(back, "relinked", 'getLinks with path "handbook/b7/target-b7.md" and direction backlinks')
    again = httpx.post(f"http://127.0.0.1:{server.port}/api/v1/projects/handbook/moves", timeout=60,
                       headers={"Authorization": f"Bearer {world.tokens['admin_write']}"},
                       json={"path": "b7/target-b7.md", "newPath": "b7/emu-b7.md"})
    assert again.status_code == 200 and again.json()["relinked"] == places, again.text[:300]


async def test_fifty_places_of_ordinary_paths_are_all_listed_on_every_door(admin: Client, server: ServerThread,
                                                                          world: World) -> None:
    """A review of 1fb0127: each list was cut to 3 KB in the service, so fifty linking notes of 69-character
    paths listed 40 over REST (50 before it), and the other ten could be had from no door. REST and MCP list all
    fifty, and the summary says so."""
    linking = [f"handbook/b8/a-linking-note-with-a-name-of-quite-ordinary-length-{n:02d}.md" for n in range(50)]
    assert {len(path) for path in linking} == {69}
    await call(admin, "write_note", {"path": "handbook/b8/target-b8.md", "content": "# B8\n"})
    for path in linking:
        await call(admin, "write_note", {"path": path, "content": "See [[target-b8]].\n"})
    headers = {"Authorization": f"Bearer {world.tokens['admin_write']}"}
    moved = httpx.post(f"http://127.0.0.1:{server.port}/api/v1/projects/handbook/moves", timeout=60, headers=headers,
                       json={"path": "b8/target-b8.md", "newPath": "b8/ox-b8.md"})
    assert moved.status_code == 200, moved.text
    assert moved.json()["relinked"] == [f"{path}:1" for path in linking], moved.json()
    assert moved.json()["summary"].endswith("50 lines of 50 notes rewritten to keep their links naming what they "
                                            "named: see relinked"), moved.json()["summary"]
    back = await call(admin, "move_note", {"path": "handbook/b8/ox-b8.md", "new_path": "handbook/b8/target-b8.md"})
    assert back["relinked"] == [f"{path}:1" for path in linking] and "truncated" not in back, back


def test_the_three_lists_share_the_answers_bound_dangling_kept_first() -> None:
    """Each list of fifty places of 4,000-character paths: the answer keeps within 32 KB with paths of 4,096
    characters, dangling (which no tool finds again) keeps its room first, and note names every list it cut."""
    long = "p/" + "x" * 4000
    change = NoteChange("p/" + "n" * 4090, "v", "v", 1, 0, "moved, no line changed", "", False, 7,
                        moved_from="p/" + "o" * 4090, unlinked=tuple(f"{long}u{n}:1" for n in range(50)),
                        relinked=tuple(f"{long}r{n}:1" for n in range(50)),
                        dangling=tuple(f"{long}d{n}" for n in range(50)))
    answer = change_dict(change)
    assert json_bytes(answer) <= ANSWER_BYTES_MAX and answer["truncated"] is True
    assert 0 < len(answer["dangling"]) < 50 and answer["unlinked"] == answer["relinked"] == []
    assert answer["dangling"] == list(change.dangling[:len(answer["dangling"])])
    for name in ("dangling", "unlinked", "relinked"):
        assert f"{name} lists the first {len(answer[name])} of its 50 places" in answer["note"], answer["note"]
    short = change_dict(replace(change, path="p/n.md", moved_from="p/o.md", unlinked=("p/a.md:1",), relinked=(),
                                dangling=("p/l.md",)))
    assert "truncated" not in short and "note" not in short and short["unlinked"] == ["p/a.md:1"]


async def test_a_move_names_the_symbolic_links_it_leaves_dangling(server: ServerThread, world: World) -> None:
    """A symlink to the note (in its project, through another symlink, or from another project the mover reads)
    is named in ``dangling``, never re-pointed; one in a project the mover does not read is not named; the
    followed one leaves the index with the move."""
    vault = world.vault
    async with connect(server.url, world.tokens["alice_write"]) as alice:
        await call(alice, "write_note", {"path": "projects/sl/target-s1.md", "content": "# S1 quokka\n"})
        os.symlink("target-s1.md", vault / "projects/sl/alias-s1.md")
        os.symlink("alias-s1.md", vault / "projects/sl/chain-s1.md")
        os.symlink("../projects/sl/target-s1.md", vault / "northwind-advisory/to-s1.md")
        os.symlink("../projects/sl/target-s1.md", vault / "handbook/to-s1.md")  # alice does not read handbook
        os.symlink("../README.md", vault / "projects/sl/elsewhere-s1.md")
        world.runtime.indexing.sync()
        assert (await call(alice, "readDoc", {"path": "projects/sl/alias-s1.md"}))["path"] == "projects/sl/alias-s1.md"
        moved = await call(alice, "move_note", {"path": "projects/sl/target-s1.md",
                                                "new_path": "projects/sl/moved/target-s1.md"})
        assert moved["dangling"] == ["northwind-advisory/to-s1.md", "projects/sl/alias-s1.md",
                                     "projects/sl/chain-s1.md"], moved
        assert "3 symbolic links led to it and now lead nowhere: see dangling" in moved["summary"], moved
        assert os.readlink(vault / "projects/sl/alias-s1.md") == "target-s1.md"  # left as it was
        assert "Not found" in await refusal(alice, "readDoc", {"path": "projects/sl/alias-s1.md"})
        back = await call(alice, "move_note", {"path": "projects/sl/moved/target-s1.md",
                                               "new_path": "projects/sl/target-s1.md"})
        assert "dangling" not in back, back  # the links lead to it again
        for alias in ("projects/sl/alias-s1.md", "projects/sl/chain-s1.md"):  # and are documents again at once
            assert (await call(alice, "readDoc", {"path": alias}))["text"] == "# S1 quokka", alias
        found = await call(alice, "searchKnowledge", {"query": "S1 quokka", "project": "projects"})
        assert sorted(r["path"] for r in found["results"]) == [
            "projects/sl/alias-s1.md", "projects/sl/chain-s1.md", "projects/sl/target-s1.md"], found


async def test_the_symbolic_links_a_move_changes_are_indexed_whoever_moves(server: ServerThread, world: World) -> None:
    """A symlink of the note's project leaves the index as the move leaves it dangling, and is a document again
    when a move back brings it back to life, also when the mover may not read the project (knowledge:write alone,
    which is told no link's name): the index follows the disk, not the mover's sight. A move back left the
    revived link out of the index until the next sync of the vault."""
    vault = world.vault
    async with connect(server.url, world.tokens["alice_write"]) as alice, \
            connect(server.url, world.tokens["alice_write_only"]) as writer:
        await call(alice, "write_note", {"path": "projects/s4/target-s4.md", "content": "# S4 wallaby\n"})
        os.symlink("target-s4.md", vault / "projects/s4/alias-s4.md")
        world.runtime.indexing.sync()
        moved = await call(writer, "move_note", {"path": "projects/s4/target-s4.md",
                                                 "new_path": "projects/s4/gone/target-s4.md"})
        assert "dangling" not in moved, moved  # named to no one who may not read the project
        assert "Not found" in await refusal(alice, "readDoc", {"path": "projects/s4/alias-s4.md"})
        await call(writer, "move_note", {"path": "projects/s4/gone/target-s4.md",
                                         "new_path": "projects/s4/target-s4.md"})
        assert (await call(alice, "readDoc", {"path": "projects/s4/alias-s4.md"}))["text"] == "# S4 wallaby"


async def test_a_move_names_no_symbolic_link_an_ignore_file_passes_over(server: ServerThread, world: World) -> None:
    """A review: a symlink an ignore file passes over (in an ignored folder, or by its own name) was named in
    ``dangling``, though the index never walks it; the links are named as the index walks them."""
    vault = world.vault
    async with connect(server.url, world.tokens["alice_write"]) as alice:
        await call(alice, "write_note", {"path": "projects/s2/target-s2.md", "content": "# S2\n"})
        (vault / "projects/s2/private").mkdir()
        os.symlink("../target-s2.md", vault / "projects/s2/private/secret-plan-name.md")
        (vault / "projects/s2/kept").mkdir()
        (vault / "projects/s2/kept/.gitignore").write_text("hidden-alias.md\n")
        os.symlink("../target-s2.md", vault / "projects/s2/kept/hidden-alias.md")
        (vault / "projects/s2/.notewellignore").write_text("private/\n")
        os.symlink("target-s2.md", vault / "projects/s2/alias-s2.md")
        world.runtime.indexing.sync()
        moved = await call(alice, "move_note", {"path": "projects/s2/target-s2.md",
                                                "new_path": "projects/s2/moved-s2.md"})
        assert moved["dangling"] == ["projects/s2/alias-s2.md"], moved


async def test_a_move_names_no_symbolic_link_to_a_mover_who_reads_nothing(server: ServerThread, world: World) -> None:
    """A review: a token with knowledge:write alone (it reads no project) was told the names of the symlinks in the
    moved note's project, names no read of its gives; only the links of projects the mover reads are named."""
    vault = world.vault
    async with connect(server.url, world.tokens["alice_write"]) as alice:
        await call(alice, "write_note", {"path": "projects/s3/target-s3.md", "content": "# S3\n"})
        (vault / "projects/s3/private-stuff").mkdir()
        os.symlink("../target-s3.md", vault / "projects/s3/private-stuff/secret-plan-name.md")
        world.runtime.indexing.sync()
        async with connect(server.url, world.tokens["alice_write_only"]) as writer:
            moved = await call(writer, "move_note", {"path": "projects/s3/target-s3.md",
                                                     "new_path": "projects/s3/moved-s3.md"})
        assert "dangling" not in moved and "symbolic link" not in moved["summary"], moved
        assert "secret-plan-name" not in json.dumps(moved), moved
        await call(alice, "move_note", {"path": "projects/s3/moved-s3.md", "new_path": "projects/s3/target-s3.md"})
        moved = await call(alice, "move_note", {"path": "projects/s3/target-s3.md",  # she reads it: named
                                                "new_path": "projects/s3/moved-s3.md"})
        assert moved["dangling"] == ["projects/s3/private-stuff/secret-plan-name.md"], moved


async def test_a_link_past_the_indexs_bound_is_rewritten(admin: Client, world: World) -> None:
    """The index keeps a note's first 1,000 links, so a link past them named no backlink and a move left it
    naming the old place, silently; the move now reads such a note whole."""
    await call(admin, "write_note", {"path": "handbook/cr/target-c1.md", "content": "# C1\n"})
    crowded = "".join(f"[[other-{i}]]\n" for i in range(MAX_LINKS_PER_DOCUMENT))
    crowded += "[[target-c1]] at the end\n[t](target-c1.md)\n"
    await call(admin, "write_note", {"path": "handbook/cr/crowded-c1.md", "content": crowded})
    moved = await call(admin, "move_note", {"path": "handbook/cr/target-c1.md",
                                            "new_path": "handbook/cr/sub/renamed-c1.md"})
    assert moved["relinked"] == ["handbook/cr/crowded-c1.md:1001", "handbook/cr/crowded-c1.md:1002"], moved
    assert "unlinked" not in moved, moved
    lines = (world.vault / "handbook/cr/crowded-c1.md").read_text().split("\n")
    assert lines[1000:1002] == ["[[renamed-c1]] at the end", "[t](sub/renamed-c1.md)"], lines[1000:]
    kept = await call(admin, "move_note", {"path": "handbook/cr/sub/renamed-c1.md", "update_links": False,
                                           "new_path": "handbook/cr/sub/again-c1.md"})
    assert kept["unlinked"] == ["handbook/cr/crowded-c1.md:1001", "handbook/cr/crowded-c1.md:1002"], kept


async def test_a_move_by_a_token_that_reads_nothing_says_its_links_were_not_looked_for(server: ServerThread,
                                                                                        world: World) -> None:
    """A probe: knowledge:write alone moved team/t3.md and answered "moved, no line changed", with no relinked or
    unlinked, while [[t3]] in a note it may write was left naming nothing: the token sees no link (a hidden link
    is neither rewritten, counted nor named), and the agent was told nothing. The answer now says the links were
    not looked for and how to have them rewritten, naming no link and counting none."""
    vault = world.vault
    async with connect(server.url, world.tokens["alice_write"]) as alice:
        await call(alice, "write_note", {"path": "projects/u1/t3.md", "content": "# T3\n"})
        await call(alice, "write_note", {"path": "projects/u1/sub/other.md", "content": "see [[t3]]\n"})
        async with connect(server.url, world.tokens["alice_write_only"]) as writer:
            moved = await call(writer, "move_note", {"path": "projects/u1/t3.md", "new_path": "projects/u1/t6.md"})
        assert "relinked" not in moved and "unlinked" not in moved, moved
        assert "other.md" not in json.dumps(moved), moved
        assert moved["summary"] == (
            "moved, no line changed; links to and of the note were not looked for or rewritten: this token may not "
            "read the project projects, so it sees no link; to have them rewritten, undo this move and move the note "
            "again with a token that also holds knowledge:read"), moved
        assert (vault / "projects/u1/sub/other.md").read_text() == "see [[t3]]\n"
        back = await call(alice, "move_note", {"path": "projects/u1/t6.md", "new_path": "projects/u1/t3.md"})
        assert "not looked for" not in back["summary"], back  # a token that reads the project is told nothing more


async def test_an_undo_or_a_move_without_links_by_a_token_that_reads_nothing_gives_no_advice_to_move_again(
        server: ServerThread, world: World) -> None:
    """A review of 9d432cc: the undo of a move by a knowledge:write token moves the note back through the same
    move and was told "undo this move and move the note again with a token that also holds knowledge:read",
    which would redo the move it took back (the note is where its links name it again); a move with
    update_links false, which asked for no rewrite, was told so too. Both now say only that the links were not
    looked for."""
    vault = world.vault
    unread = ("links to and of the note were not looked for or rewritten: this token may not read the project "
              "projects, so it sees no link")
    async with connect(server.url, world.tokens["alice_write"]) as alice:
        await call(alice, "write_note", {"path": "projects/u1/t7.md", "content": "# T7\n"})
        await call(alice, "write_note", {"path": "projects/u1/sub/seven.md", "content": "see [[t7]]\n"})
        async with connect(server.url, world.tokens["alice_write_only"]) as writer:
            moved = await call(writer, "move_note", {"path": "projects/u1/t7.md", "new_path": "projects/u1/t8.md"})
            assert moved["summary"].endswith("undo this move and move the note again with a token that also holds "
                                             "knowledge:read"), moved
            back = await call(writer, "undo_note_write", {"journal_id": moved["journal_id"]})
            assert (vault / "projects/u1/t7.md").is_file() and not (vault / "projects/u1/t8.md").exists()
            assert back["summary"].endswith(f"; {unread}"), back
            assert "again" not in back["summary"], back
            kept = await call(writer, "move_note", {"path": "projects/u1/t7.md", "new_path": "projects/u1/t9.md",
                                                    "update_links": False})
            assert kept["summary"].endswith(f"; {unread}"), kept
            assert "again" not in kept["summary"], kept
        assert (vault / "projects/u1/sub/seven.md").read_text() == "see [[t7]]\n"
        await call(alice, "move_note", {"path": "projects/u1/t9.md", "new_path": "projects/u1/t7.md"})


async def test_a_meeting_note_moved_and_moved_back_keeps_its_action_items(admin: Client, world: World) -> None:
    """move_note of a meeting note to another folder of its project retired every action item and opened them
    again under new refs, so one a person resolved opened again; its undo did the same. Each item keeps its ref
    and state wherever the note goes in its project, a note whose items were all resolved too."""
    store = world.runtime.store
    note, archived = "meetings/2026-12-01-sync.md", "meetings/archive/2026-12-01-sync.md"

    def items(path: str) -> dict[str, tuple[str, bool, str | None]]:
        return {n.item.rule: (n.item.ref, n.item.live, n.retired_by)
                for n in store.brain.note_items("handbook", f"brain-actions/{path}")}

    await call(admin, "write_note", {"path": f"handbook/{note}",
                                     "content": "# Sync\n\n## Actions\n\n- [ ] book the room\n- [ ] draft the plan\n"})
    before = items(note)
    assert set(before) == {"book the room", "draft the plan"} and all(live for _, live, _ in before.values())
    staff = next(u for u in store.identity.users() if u.handle == "staff")
    for rule in ("book the room", "draft the plan"):
        store.brain.retire([before[rule][0]], staff.id, "resolved at the close of ses_x", "2026-12-02T00:00:00Z")
        resolved = {**before, rule: (before[rule][0], False, staff.id)}
        moved = await call(admin, "move_note", {"path": f"handbook/{note}", "new_path": f"handbook/{archived}"})
        assert items(note) == {} and items(archived) == resolved
        await call(admin, "undo_note_write", {"journal_id": moved["journal_id"]})
        assert items(archived) == {} and items(note) == resolved
        before = resolved
