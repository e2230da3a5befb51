"""notewell note write | edit | move | delete, notewell journal and notewell undo, in-process, as the local owner
and as a person (--as) whose grants decide."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from conftest import make_vault, run_cli
from notewell.services.note_files import NoteFiles


def test_note_commands_journal_and_undo(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n\n## Steps\n- draft\n"})
    base = ["--vault", str(vault)]
    assert run_cli("index", *base).exit_code == 0
    made = run_cli("note", "write", "apollo/log.md", "# Log\n", *base, "--json")
    assert made.exit_code == 0, made.stderr
    version = json.loads(made.stdout)["version"]
    edited = run_cli("note", "edit", "apollo/plan.md", "insert_under_heading", "--heading", "## Steps",
                     "--content", "- wombat review", *base)
    assert edited.exit_code == 0 and "+- wombat review" in edited.stdout
    fields = run_cli("note", "edit", "apollo/plan.md", "set_front_matter", "--field", "status=done", *base)
    assert fields.exit_code == 0 and (vault / "apollo/plan.md").read_text().startswith("---\nstatus: done\n---\n")
    hits = json.loads(run_cli("search", "wombat", *base, "--json").stdout)
    assert [h["path"] for h in hits["matches"]] == ["apollo/plan.md"]
    stale = run_cli("note", "edit", "apollo/log.md", "append", "-c", "x", "--expected-version", "0" * 16, *base)
    assert stale.exit_code == 1 and f"it is at version {version}" in stale.stderr
    there = run_cli("note", "write", "apollo/plan.md", "x", *base)
    assert there.stderr.startswith("error: PATH: Conflict: apollo/plan.md exists already; edit it instead; to replace "
                                   "it whole, pass --overwrite (with --expected-version)"), there.stderr
    assert run_cli("note", "edit", "apollo/plan.md", "set_front_matter", "--field", "s=1", *base).exit_code == 0
    same = run_cli("note", "edit", "apollo/plan.md", "set_front_matter", "--field", "s=1", *base)
    assert same.stderr.startswith("error: --field: the edit changes nothing"), same.stderr
    assert run_cli("journal", "--since", "yesterday", *base).stderr.startswith("error: --since: ")
    moved = run_cli("note", "move", "apollo/plan.md", "apollo/../x.md", *base)
    assert moved.stderr.startswith("error: NEW_PATH: "), moved.stderr
    stray = run_cli("note", "edit", "apollo/plan.md", "append", "-c", "x", "--heading", "## Steps", *base)
    assert stray.exit_code == 1 and stray.stderr.startswith("error: --heading: append takes no heading")
    stray = run_cli("note", "edit", "apollo/plan.md", "append", "-c", "x", "--field", "a=1", *base)
    assert stray.exit_code == 1 and stray.stderr.startswith("error: --field: append takes no fields")
    fresh = run_cli("note", "write", "apollo/fresh.md", "x", "--expected-version", "0" * 16, *base)
    assert fresh.exit_code == 1 and "there is no note at apollo/fresh.md" in fresh.stderr
    assert "leave out --expected-version to create it" in fresh.stderr
    assert run_cli("note", "move", "apollo/log.md", "apollo/old/log.md", *base).exit_code == 0
    gone = run_cli("note", "delete", "apollo/old/log.md", *base, "--json")
    assert gone.exit_code == 0 and not (vault / "apollo/old/log.md").exists()
    listed = json.loads(run_cli("journal", "--path", "apollo/old/log.md", *base, "--json").stdout)
    assert [e["action"] for e in listed] == ["delete", "move"]
    first = run_cli("journal", "--path", "apollo/old/log.md", "--limit", "1", *base)
    assert f"older ones may follow: --before {listed[0]['id']}" in first.stderr
    older = json.loads(run_cli("journal", "--path", "apollo/old/log.md", "--before", str(listed[0]["id"]), *base,
                               "--json").stdout)
    assert [e["id"] for e in older] == [listed[1]["id"]]
    huge = run_cli("journal", "--before", str(2**63), *base)
    assert huge.exit_code == 1 and huge.stderr.startswith("error: --before: must be an entry's id")
    undone = run_cli("undo", str(json.loads(gone.stdout)["journalId"]), *base)
    assert undone.exit_code == 0 and (vault / "apollo/old/log.md").read_text() == "# Log\n"
    again = run_cli("undo", str(json.loads(gone.stdout)["journalId"]), *base)
    assert again.exit_code == 1 and "undone already" in again.stderr


def test_as_a_person_the_grant_decides(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n"})
    base = ["--vault", str(vault)]
    assert run_cli("user", "add", "ada@example.com", "--role", "admin", *base).exit_code == 0
    assert run_cli("index", *base).exit_code == 0
    refused = run_cli("note", "write", "apollo/ada.md", "x\n", "--as", "ada@example.com", *base)
    assert refused.exit_code == 1 and "write grant" in refused.stderr
    assert run_cli("grant", "ada@example.com", "apollo", "--write", *base).exit_code == 0
    assert run_cli("note", "write", "apollo/ada.md", "x\n", "--as", "ada@example.com", *base).exit_code == 0
    bad = run_cli("note", "write", "apollo/../../x.md", "x\n", *base)
    assert bad.exit_code == 1 and "inside the vault" in bad.stderr
    folded = run_cli("note", "write", "apollo/../beta/x.md", "x\n", *base)
    assert folded.exit_code == 1 and "without . or .." in folded.stderr and not (vault / "beta").exists()


def test_a_home_made_again_by_a_write_and_the_index_folder_are_private_whatever_the_umask(tmp_path: Path) -> None:
    """A home folder removed then made again by a note write was 0755 (its notes readable by anyone on the
    machine); .notewell and its locks, made by a note write's lock, followed the umask (0777 under 000)."""
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n"})
    base = ["--vault", str(vault), "--db", str(tmp_path / "index.db")]  # the store outside: .notewell unmade
    assert run_cli("user", "add", "cy@example.com", "--role", "member", *base).exit_code == 0
    (vault / "~cy").rmdir()
    before = os.umask(0)
    try:
        written = run_cli("note", "write", "~cy/secret.md", "private\n", "--as", "cy@example.com", *base)
        deep = run_cli("note", "write", "~cy/a/b.md", "x\n", "--as", "cy@example.com", *base)
    finally:
        os.umask(before)
    assert written.exit_code == 0 and deep.exit_code == 0, written.stderr + deep.stderr
    assert stat.S_IMODE((vault / "~cy").stat().st_mode) == 0o700
    for folder in (vault / ".notewell", vault / ".notewell" / "locks"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_note_move_rewrites_links_unless_told_to_keep_them(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n",
                                  "apollo/log.md": "See [[plan]] and `apollo/plan.md`.\n"})
    base = ["--vault", str(vault)]
    assert run_cli("index", *base).exit_code == 0
    moved = run_cli("note", "move", "apollo/plan.md", "apollo/old/roadmap.md", *base)
    assert moved.exit_code == 0, moved.stderr
    assert "1 line of 1 note rewritten" in moved.stdout and "link rewritten: apollo/log.md:1" in moved.stdout
    assert "to take it back with its links: notewell note move apollo/old/roadmap.md apollo/plan.md" in " ".join(
        moved.stdout.split())
    assert (vault / "apollo/log.md").read_text() == "See [[roadmap]] and `apollo/old/roadmap.md`.\n"
    kept = run_cli("note", "move", "apollo/old/roadmap.md", "apollo/plan.md", "--keep-links", *base, "--json")
    assert kept.exit_code == 0, kept.stderr
    assert json.loads(kept.stdout)["unlinked"] == ["apollo/log.md:1"] and json.loads(kept.stdout)["relinked"] == []
    assert (vault / "apollo/log.md").read_text() == "See [[roadmap]] and `apollo/old/roadmap.md`.\n"


def _moved(vault: Path, *args: str) -> dict[str, Any]:
    out = run_cli("note", "move", *args, "--vault", str(vault), "--json")
    assert out.exit_code == 0, out.stderr
    answer: dict[str, Any] = json.loads(out.stdout)
    return answer


@pytest.mark.parametrize(("files", "move", "expected"), [
    pytest.param({"p/plan.md": "# Plan\n", "p/log.md": "[[plan]] and [p](plan.md)\n"}, ("p/plan.md", "p/sub/plan.md"),
                 {"p/log.md": "[[plan]] and [p](sub/plan.md)\n"}, id="a link broken beside one that still works"),
    pytest.param({"p/a/plan.md": "See [up](../up.md) and [[up]]\n", "p/up.md": "# Up\n"},
                 ("p/a/plan.md", "p/a/b/plan.md"), {"p/a/b/plan.md": "See [up](../../up.md) and [[up]]\n"},
                 id="the note's own link beside a wikilink"),
    pytest.param({"p/a/plan.md": "see [[log]]\n", "p/a/log.md": "# a\n", "p/b/log.md": "# b\n"},
                 ("p/a/plan.md", "p/b/plan.md"), {"p/b/plan.md": "see [[a/log]]\n"},
                 id="the note's own wikilink that a namesake would capture"),
    pytest.param({"p/x.md": "# root x\n", "p/b/c/x.md": "# deep x\n", "p/a/log.md": "see `x.md`\n"},
                 ("p/b/c/x.md", "p/a/x.md"), {"p/a/log.md": "see `../x.md`\n"},
                 id="a mention the moved note would capture"),
    pytest.param({"p/a/log.md": "# a\n", "p/x/y/log.md": "# y\n", "p/n.md": "see [[log]]\n"},
                 ("p/x/y/log.md", "p/b/log.md"), {"p/n.md": "see [[a/log]]\n"},
                 id="a wikilink the move would make ambiguous"),
    pytest.param({"p/plan.md": "# Plan\n", "p/log.md": "[p](plan.md) [q](<plan.md>)\n"},
                 ("p/plan.md", "p/plan\u00a0v2 (draft).md"),
                 {"p/log.md": "[p](plan%C2%A0v2%20%28draft%29.md) [q](<plan%C2%A0v2 (draft).md>)\n"},
                 id="a name a bare path cannot hold"),
    pytest.param({"p/a/plan.md": "![chart](img/chart.png) and [spec](spec.pdf)\n", "p/a/img/chart.png": "png",
                  "p/a/spec.pdf": "pdf"}, ("p/a/plan.md", "p/b/plan.md"),
                 {"p/b/plan.md": "![chart](../a/img/chart.png) and [spec](../a/spec.pdf)\n"},
                 id="the note's own links to attachments"),
])
def test_a_move_mends_each_link_it_breaks(tmp_path: Path, files: dict[str, str], move: tuple[str, str],
                                          expected: dict[str, str]) -> None:
    """Cases a review found left broken (and unnamed), or written so that the link was no link any more."""
    vault = make_vault(tmp_path, files)
    assert run_cli("index", "--vault", str(vault)).exit_code == 0
    moved = _moved(vault, *move)
    assert "unlinked" not in moved or moved["unlinked"] == [], moved
    for path, text in expected.items():
        assert (vault / path).read_text() == text, moved
        assert f"{path}:1" in moved["relinked"], moved


def test_a_moves_answer_names_the_notes_version_after_its_own_links_were_rewritten(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"p/a/plan.md": "See [up](../up.md)\n", "p/up.md": "# Up\n"})
    assert run_cli("index", "--vault", str(vault)).exit_code == 0
    moved = _moved(vault, "p/a/plan.md", "p/a/b/plan.md")
    edited = run_cli("note", "edit", "p/a/b/plan.md", "append", "-c", "more", "--expected-version", moved["version"],
                     "--vault", str(vault))
    assert edited.exit_code == 0, edited.stderr


def test_a_move_reads_every_note_that_links_to_it_and_moving_back_mends_them_again(tmp_path: Path) -> None:
    many = "".join(f"[p{i}](plan.md)\n" for i in range(600))
    vault = make_vault(tmp_path, {"p/plan.md": "# Plan\n", "p/a.md": many, "p/b.md": "[p](plan.md)\n"})
    assert run_cli("index", "--vault", str(vault)).exit_code == 0
    moved = _moved(vault, "p/plan.md", "p/sub/plan.md")
    assert "601 lines of 2 notes rewritten" in moved["summary"], moved["summary"]
    assert (vault / "p/b.md").read_text() == "[p](sub/plan.md)\n"
    back = _moved(vault, "p/sub/plan.md", "p/plan.md")
    assert (vault / "p/a.md").read_text() == many and (vault / "p/b.md").read_text() == "[p](plan.md)\n", back


def test_a_note_that_cannot_be_written_is_named_and_the_move_answers(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault(tmp_path, {"p/plan.md": "# Plan\n", "p/a.md": "[p](plan.md)\n", "p/b.md": "[p](plan.md)\n"})
    assert run_cli("index", "--vault", str(vault)).exit_code == 0
    write = NoteFiles.write

    def refusing(self: NoteFiles, rel: str, data: bytes, *args: Any, **kwargs: Any) -> None:
        if rel == "p/b.md":
            raise PermissionError(13, "Permission denied", rel)  # a read-only file
        write(self, rel, data, *args, **kwargs)

    monkeypatch.setattr(NoteFiles, "write", refusing)
    moved = _moved(vault, "p/plan.md", "p/sub/plan.md")
    assert moved["relinked"] == ["p/a.md:1"] and moved["unlinked"] == ["p/b.md:1"], moved
    assert (vault / "p/b.md").read_text() == "[p](plan.md)\n"
