"""notewell index: syncing a vault into the store, what is indexed and skipped, titles, brains, settings."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from conftest import IndexedVault, index_into, make_vault, run_cli, run_module, run_on_terminal
from notewell.access.principal import LOCAL_OWNER
from notewell.config import DEFAULT_MAX_FILE_BYTES, load_settings
from notewell.errors import ConfigError, NotFound

MB2 = 2 * 1024 * 1024


def paths(indexed: IndexedVault) -> set[str]:
    """Every indexed document as "project/path"."""
    return {f"{project}/{path}" for project, path in indexed.store.documents.state()}


def skipped(indexed: IndexedVault) -> dict[str, str]:
    return {f"{s.project}/{s.path}": s.reason for s in indexed.store.documents.skipped()}


def age(vault: Path, seconds: int = 3600) -> None:
    """Date every file of the vault back: a file edited in the last seconds is hashed again at each sync."""
    then = time.time_ns() - seconds * 1_000_000_000
    for path in vault.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(then, then))


def found(indexed: IndexedVault, query: str, **kw: object) -> list[tuple[str, int]]:
    return [(m.vault_path, m.line) for m in indexed.search(query, all_lines=True, **kw).matches]  # type: ignore[arg-type]


# --- sync: add, change, delete, rename ---------------------------------------------------------------


def test_sync_add_change_delete_rename(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {
        "p/a.md": "# A\nalpha apple\n",
        "p/b.md": "# B\nbravo banana\n",
        "q/c.txt": "charlie cherry\n",
    })
    nv = index_vault(vault)
    r = nv.report
    assert (r.added, r.changed, r.removed, r.renamed) == (3, 0, 0, 0)
    assert paths(nv) == {"p/a.md", "p/b.md", "q/c.txt"}
    assert found(nv, "banana") == [("p/b.md", 2)]

    (vault / "p/b.md").write_text("# B\nbravo blueberry, longer now\n")
    r = nv.sync()
    assert (r.added, r.changed, r.removed, r.renamed) == (0, 1, 0, 0)
    assert found(nv, "banana") == []
    assert found(nv, "blueberry") == [("p/b.md", 2)]

    (vault / "p/a.md").unlink()
    r = nv.sync()
    assert (r.added, r.changed, r.removed, r.renamed) == (0, 0, 1, 0)
    assert found(nv, "apple") == []
    assert paths(nv) == {"p/b.md", "q/c.txt"}

    make_vault(tmp_path, {"q/new.md": "delta date\n"})
    r = nv.sync()
    assert (r.added, r.changed, r.removed, r.renamed) == (1, 0, 0, 0)
    assert found(nv, "date") == [("q/new.md", 1)]


def test_rename_keeps_the_row_and_second_run_does_no_work(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/old.md": "# Old\nthe renamed words\n", "p/other.md": "other\n"})
    nv = index_vault(vault)
    row_id = nv.store.documents.state()[("p", "old.md")].id
    (vault / "p/sub").mkdir()
    (vault / "p/old.md").rename(vault / "p/sub/new.md")
    age(vault)
    r = nv.sync()
    assert (r.added, r.changed, r.removed, r.renamed) == (0, 0, 0, 1)
    state = nv.store.documents.state()
    assert ("p", "old.md") not in state
    assert state[("p", "sub/new.md")].id == row_id
    assert found(nv, "renamed words") == [("p/sub/new.md", 2)]
    assert nv.store.documents.meta("p", "sub/new.md").title == "Old"  # type: ignore[union-attr]

    again = nv.sync()
    assert not again.did_work
    assert again.bytes_read == 0
    assert again.summary().startswith("Up to date")


def test_rename_updates_a_title_taken_from_the_file_name(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/old-name.md": "no heading here\n", "p/titled.md": "# Kept\nbody\n"})
    nv = index_vault(vault)
    ids = {key: st.id for key, st in nv.store.documents.state().items()}
    (vault / "p/old-name.md").rename(vault / "p/new-name.md")
    (vault / "p/titled.md").rename(vault / "p/titled.txt")  # a text file has no markdown headings
    r = nv.sync()
    assert (r.added, r.removed, r.renamed) == (0, 0, 2)
    state = nv.store.documents.state()
    assert state[("p", "new-name.md")].id == ids[("p", "old-name.md")]
    assert state[("p", "titled.txt")].id == ids[("p", "titled.md")]
    assert nv.store.documents.meta("p", "new-name.md").title == "new-name"  # type: ignore[union-attr]
    assert nv.store.documents.meta("p", "titled.txt").title == "titled"  # type: ignore[union-attr]
    assert found(nv, "no heading") == [("p/new-name.md", 1)]
    assert not nv.sync().did_work


def test_rename_into_another_project(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/doc.md": "moving text\n", "q/keep.md": "kept\n"})
    nv = index_vault(vault)
    (vault / "p/doc.md").rename(vault / "q/doc.md")
    r = nv.sync()
    assert r.renamed == 1 and r.removed == 0 and r.added == 0
    assert found(nv, "moving text") == [("q/doc.md", 1)]
    assert found(nv, "moving text", projects=["p"]) == []


def test_cli_index_summary_then_up_to_date(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "hello\n", "p/b.txt": "world\n"})
    db = str(tmp_path / "i.db")
    first = run_cli("index", "--vault", str(vault), "--db", db)
    assert first.exit_code == 0, first.stderr
    lines = first.stdout.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("Indexed: 2 added, 0 changed, 0 removed")
    assert " MB in " in lines[0] and lines[0].endswith(" s")
    second = run_cli("index", "--vault", str(vault), "--db", db)
    assert second.exit_code == 0
    assert second.stdout.strip().startswith("Up to date")


def test_touched_but_identical_file_is_not_reindexed(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "same words\n"})
    age(vault)
    nv = index_vault(vault)
    before = nv.store.documents.state()[("p", "a.md")]
    later = before.mtime_ns + 5_000_000_000
    os.utime(vault / "p/a.md", ns=(later, later))
    r = nv.sync()
    assert not r.did_work
    assert r.summary().startswith("Up to date")
    after = nv.store.documents.state()[("p", "a.md")]
    assert after.id == before.id and after.mtime_ns == later and after.sha256 == before.sha256
    third = nv.sync()
    assert third.bytes_read == 0  # the new mtime was stored: no need to read the file again


def test_same_size_edit_in_the_same_clock_tick_is_detected(tmp_path: Path, index_vault) -> None:
    """An edit that keeps the size and lands in the same mtime tick as the indexed version (racy clean)."""
    vault = make_vault(tmp_path, {"p/a.md": "cat\n"})
    tick = (vault / "p/a.md").stat().st_mtime_ns
    nv = index_vault(vault)
    (vault / "p/a.md").write_text("dog\n")
    os.utime(vault / "p/a.md", ns=(tick, tick))
    r = nv.sync()
    assert r.changed == 1 and found(nv, "dog") == [("p/a.md", 1)]
    assert not nv.sync().did_work
    old = tick - 3_000_000_000  # once the file is old enough, its size and mtime suffice again
    os.utime(vault / "p/a.md", ns=(old, old))
    nv.sync()
    assert nv.sync().bytes_read == 0


def test_same_size_edit_is_detected(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "cat\n"})
    nv = index_vault(vault)
    st = (vault / "p/a.md").stat()
    (vault / "p/a.md").write_text("dog\n")
    os.utime(vault / "p/a.md", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert nv.sync().changed == 1
    assert found(nv, "dog") == [("p/a.md", 1)]


# --- size limit, binary and broken text --------------------------------------------------------------


def test_files_over_2_mb_are_skipped_and_never_searched(tmp_path: Path, index_vault) -> None:
    line = "filler text that goes on and on\n"
    big = ("needle in the big file\n" + line * (MB2 // len(line) + 1))
    assert len(big.encode()) > MB2
    exact = "needle at the limit\n" + "x" * (MB2 - len("needle at the limit\n"))
    assert len(exact.encode()) == MB2
    vault = make_vault(tmp_path, {"p/big.md": big, "p/exact.md": exact, "p/small.md": "needle small\n"})
    nv = index_vault(vault)
    assert DEFAULT_MAX_FILE_BYTES == MB2
    assert paths(nv) == {"p/exact.md", "p/small.md"}
    reason = skipped(nv)["p/big.md"]
    assert "limit" in reason and str(MB2) in reason
    assert nv.report.skipped == 1
    assert [p for p, _ in found(nv, "needle")] == ["p/exact.md", "p/small.md"]
    assert [p for p, _ in found(nv, "ne")] == ["p/exact.md", "p/small.md"]  # the scan path too


def test_file_growing_past_the_limit_leaves_the_index(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"notewell.toml": "[index]\nmax_file_bytes = 100\n", "p/a.md": "grows later\n"})
    nv = index_vault(vault)
    assert found(nv, "grows") == [("p/a.md", 1)]
    (vault / "p/a.md").write_text("grows later\n" + "y" * 200)
    r = nv.sync()
    assert r.removed == 1
    assert found(nv, "grows") == []
    assert "p/a.md" in skipped(nv)


def test_max_file_bytes_is_configurable(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {
        "notewell.toml": "[index]\nmax_file_bytes = 100\n",
        "p/small.md": "tiny findme\n",
        "p/large.md": "findme " * 30,
    })
    nv = index_vault(vault)
    assert paths(nv) == {"p/small.md"}
    assert "100 byte" in skipped(nv)["p/large.md"]
    assert found(nv, "findme") == [("p/small.md", 1)]


def test_binary_file_is_skipped_with_reason(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {
        "p/data.txt": b"findme\x00\x01\x02binary\xff\xfe",
        "p/text.txt": "findme as text\n",
    })
    nv = index_vault(vault)
    assert paths(nv) == {"p/text.txt"}
    assert skipped(nv) == {"p/data.txt": "binary file"}
    assert found(nv, "findme") == [("p/text.txt", 1)]


def test_invalid_utf8_is_decoded_with_replacement_and_noted(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/latin1.md": b"# Caf\xe9\ncaf\xe9 cr\xe8me latte\n", "p/ok.md": "fine\n"})
    nv = index_vault(vault)
    assert paths(nv) == {"p/latin1.md", "p/ok.md"}
    meta = nv.store.documents.meta("p", "latin1.md")
    assert meta is not None and "UTF-8" in meta.note and "replacement" in meta.note
    assert nv.store.documents.meta("p", "ok.md").note == ""  # type: ignore[union-attr]
    [m] = nv.search("latte").matches
    assert (m.path, m.line, m.text) == ("latin1.md", 2, "caf\ufffd cr\ufffdme latte")


def test_utf8_bom_is_removed(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/bom.md": b"\xef\xbb\xbf# Title\nbody\n"})
    nv = index_vault(vault)
    assert nv.store.documents.meta("p", "bom.md").title == "Title"  # type: ignore[union-attr]
    assert nv.search("^# Title$", regex=True).matches[0].line == 1


def test_crlf_lines(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/win.txt": "first line\r\nsecond line\r\n"})
    nv = index_vault(vault)
    [m] = nv.search("second").matches
    assert (m.line, m.text) == (2, "second line")
    assert [x.line for x in nv.search("line$", regex=True, all_lines=True).matches] == [1, 2]


# --- what is walked: hidden files, ignore files, symlinks, file types ---------------------------------


def test_hidden_files_and_folders_are_skipped(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {
        "p/visible.md": "secret word\n",
        "p/.hidden.md": "secret word\n",
        "p/.obsidian/app.json": '{"secret word": 1}\n',
        "p/sub/.private/notes.md": "secret word\n",
        ".hiddenproject/doc.md": "secret word\n",
        ".notewell/stray.md": "secret word\n",
    })
    nv = index_vault(vault)
    assert paths(nv) == {"p/visible.md"}
    assert skipped(nv) == {}
    assert nv.store.documents.vault_projects() == ["p"]
    assert found(nv, "secret") == [("p/visible.md", 1)]


def test_root_files_are_the_root_project(tmp_path: Path, index_vault) -> None:
    """The usual Obsidian layout: notes at the vault root are documents of the project "_root"."""
    vault = make_vault(tmp_path, {"Welcome.md": "# Welcome\nroot words\n", "p/a.md": "project words\n",
                                  "empty/x.bin": b"\x00", "notewell.toml": "[index]\n"})
    nv = index_vault(vault)
    assert paths(nv) == {"_root/Welcome.md", "p/a.md"}
    assert nv.store.documents.vault_projects() == ["_root", "empty", "p"]
    assert found(nv, "root words") == [("_root/Welcome.md", 2)]
    (vault / "Welcome.md").unlink()
    nv.sync()
    assert nv.store.documents.vault_projects() == ["empty", "p"]


def test_search_notes_takes_a_root_note_by_its_path_on_disk(tmp_path: Path, index_vault) -> None:
    """Major Vault's path is relative to the vault root: "Welcome.md" is the root note, which Notewell names
    _root/Welcome.md; a project of that name would still come first."""
    vault = make_vault(tmp_path, {"Welcome.md": "root words\n", "Other.md": "root words\n", "p/a.md": "root words\n"})
    knowledge = index_vault(vault).runtime.knowledge
    for path in ("Welcome.md", "_root/Welcome.md"):
        page = knowledge.search_notes(LOCAL_OWNER, "root", path=path)
        assert [m.path for m in page.matches] == ["_root/Welcome.md"], path
    assert [m.path for m in knowledge.search_notes(LOCAL_OWNER, "root", path="p").matches] == ["p/a.md"]
    for missing in ("notse", "Welcome"):  # neither a project nor a root note: Not found, not an empty page
        with pytest.raises(NotFound):
            knowledge.search_notes(LOCAL_OWNER, "root", path=missing)


def test_a_vault_of_root_notes_only_is_searchable(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"Daily.md": "standup notes\n", "Ideas.md": "standup ideas\n"})
    nv = index_vault(vault)
    assert nv.report.added == 2
    assert found(nv, "standup") == [("_root/Daily.md", 1), ("_root/Ideas.md", 1)]


def test_a_folder_named_like_the_root_project_is_left_out(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"_root/a.md": "word\n", "b.md": "word\n"})
    nv = index_vault(vault)
    assert paths(nv) == {"_root/b.md"}
    assert [(x.path, x.why) for x in nv.report.left_out] == [("_root/", "ignored")]


def test_extensionless_text_files_are_indexed_and_binary_ones_left_out(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {
        "p/README": "Plain text without an extension\n",
        "p/base-passwd-README": "é accents " * 1000 + "\n",  # a character cut at the 8 KB mark is still text
        "p/blob": b"\x7fELF\x00\x01binary",
        "p/latin1": "caf\xe9\n".encode("latin-1"),
        "LICENSE": "MIT License\n",
    })
    nv = index_vault(vault)
    assert paths(nv) == {"p/README", "p/base-passwd-README", "_root/LICENSE"}
    assert found(nv, "without an extension") == [("p/README", 1)]
    assert nv.store.documents.meta("p", "README").title == "README"  # type: ignore[union-attr]
    assert {(x.path, x.why) for x in nv.report.left_out} == {("p/blob", "type"), ("p/latin1", "type")}


def test_index_reports_what_it_left_out_as_counts_and_verbose_lists_them(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {
        ".gitignore": "drafts/\n",
        "p/doc.md": "word\n",
        "p/image.png": b"\x89PNG",
        "p/drafts/d.md": "word\n",
        "p/.obsidian/app.json": "{}",
        "p/big.md": "x" * 200,
        "p/data.txt": b"\x00\x01",
        "notewell.toml": "[index]\nmax_file_bytes = 100\n",
    })
    db = str(tmp_path / "i.db")
    plain = run_cli("index", "--vault", str(vault), "--db", db)
    assert plain.exit_code == 0, plain.stderr
    lines = plain.stdout.strip().splitlines()
    assert lines[0].startswith("Indexed: 1 added")
    assert lines[1] == "Left out: 2 type, 1 size, 3 ignored (--verbose lists them)"
    verbose = run_cli("index", "--vault", str(vault), "--db", db, "--verbose")
    assert verbose.stdout.splitlines()[1] == "Left out: 2 type, 1 size, 3 ignored"  # listed below, not pointed to
    listed = verbose.stdout.strip().splitlines()[2:]
    assert [line.split()[:2] for line in listed] == [
        ["ignored", "notewell.toml"], ["ignored", "p/.obsidian/"], ["size", "p/big.md"], ["type", "p/data.txt"],
        ["ignored", "p/drafts/"], ["type", "p/image.png"]]
    as_json = run_cli("index", "--vault", str(vault), "--db", db, "--json")
    assert json.loads(as_json.stdout)["leftOut"] == {"type": 2, "size": 1, "ignored": 3, "unreadable": 0}


def test_ignore_files_at_several_levels(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {
        ".notewellignore": "drafts/\n*.secret.md\n",
        ".gitignore": "ignored-project/\n",
        "ignored-project/doc.md": "word\n",
        "p/.gitignore": "/local.md\nbuild/\n*.tmp.md\n",
        "p/doc.md": "word\n",
        "p/local.md": "word\n",
        "p/sub/local.md": "word\n",  # "/local.md" is anchored to p/, so this one stays
        "p/build/out.md": "word\n",
        "p/drafts/draft.md": "word\n",
        "p/x.secret.md": "word\n",
        "p/a.tmp.md": "word\n",
        "p/sub/.notewellignore": "only-here.md\n!keep.tmp.md\n",
        "p/sub/only-here.md": "word\n",
        "p/sub/keep.tmp.md": "word\n",  # a deeper ignore file re-includes it, as git does
        "p/sub/other.tmp.md": "word\n",
        "p/other/only-here.md": "word\n",
        "q/drafts/also.md": "word\n",
        "q/ok.md": "word\n",
    })
    nv = index_vault(vault)
    assert paths(nv) == {"p/doc.md", "p/sub/local.md", "p/sub/keep.tmp.md", "p/other/only-here.md", "q/ok.md"}
    assert nv.store.documents.vault_projects() == ["p", "q"]
    assert skipped(nv) == {}


def test_ignoring_an_indexed_file_removes_it(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "word\n", "p/b.md": "word\n"})
    nv = index_vault(vault)
    make_vault(tmp_path, {"p/.notewellignore": "b.md\n"})
    assert nv.sync().removed == 1
    assert paths(nv) == {"p/a.md"}


def test_symlinks_outside_the_vault_are_not_followed(tmp_path: Path, index_vault) -> None:
    outside = make_vault(tmp_path, {"secret.md": "outside secret\n", "dir/inner.md": "outside secret\n"}, "outside")
    vault = make_vault(tmp_path, {"p/real.md": "inside words\n"})
    (vault / "p/link-out.md").symlink_to(outside / "secret.md")
    (vault / "p/dir-out").symlink_to(outside / "dir", target_is_directory=True)
    (vault / "p/link-in.md").symlink_to(vault / "p/real.md")
    nv = index_vault(vault)
    assert found(nv, "outside secret") == []
    assert "p/link-out.md" in skipped(nv)
    assert "outside the vault" in skipped(nv)["p/link-out.md"]
    assert not any(p.startswith("p/dir-out") for p in paths(nv))
    assert paths(nv) == {"p/real.md", "p/link-in.md"}  # a link that stays inside is followed


def test_broken_and_looping_symlinks_are_recorded(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "words\n"})
    (vault / "p/loop.md").symlink_to("loop.md")
    (vault / "p/dangling.md").symlink_to("nowhere.md")
    (vault / "p/dir-link.md").symlink_to(vault / "p", target_is_directory=True)
    nv = index_vault(vault)
    assert paths(nv) == {"p/a.md"}
    assert skipped(nv) == {"p/loop.md": "broken symlink", "p/dangling.md": "broken symlink"}


def test_file_names_that_are_not_utf8(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/ok.md": "fine words\n"})
    (vault / "p").joinpath(os.fsdecode(b"bad\xff.md")).write_text("bad name words\n")
    (vault / os.fsdecode(b"proj\xfe")).mkdir()
    (vault / os.fsdecode(b"proj\xfe") / "x.md").write_text("words\n")
    nv = index_vault(vault)
    assert paths(nv) == {"p/ok.md"}
    assert skipped(nv) == {"p/bad\ufffd.md": "file name is not valid UTF-8"}
    assert nv.store.documents.vault_projects() == ["p"]


def test_default_file_types(tmp_path: Path, index_vault) -> None:
    indexed_types = ["md", "markdown", "txt", "rst", "org", "csv", "json", "yaml", "yml", "toml", "MD"]
    other_types = ["py", "html", "pdf", "docx", "log", "mdx"]
    vault = make_vault(tmp_path, {f"p/f.{ext}": "word\n" for ext in indexed_types + other_types}
                       | {"p/noext": "word\n"})
    nv = index_vault(vault)
    assert paths(nv) == {f"p/f.{ext}" for ext in indexed_types} | {"p/noext"}  # text without an extension
    assert skipped(nv) == {}


def test_configured_file_types(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {
        "notewell.toml": '[index]\nfile_types = ["md", ".PY"]\n',
        "p/a.md": "word\n", "p/b.py": "word\n", "p/c.txt": "word\n",
    })
    nv = index_vault(vault)
    assert paths(nv) == {"p/a.md", "p/b.py"}
    assert [p for p, _ in found(nv, "word", file_types=[".py"])] == ["p/b.py"]


# --- titles, summaries, brains -----------------------------------------------------------------------


def test_setext_headings_and_readme_banners(tmp_path: Path, index_vault) -> None:
    """A setext heading is a title; a README's banner (HTML, images, badges, a row of links) is no summary."""
    vault = make_vault(tmp_path, {
        "p/setext.md": "Testing\n=======\n\nHow we test.\n",
        "p/later.md": "Intro first.\n\nSecond Title\n------------\n\nMore.\n",
        "p/rule.md": "---\n\nText after a rule.\n",
        "p/README.md": ('<p align="center"><img src="logo.png" alt="logo"></p>\n\n'
                        "[![CI](https://ci.example/badge.svg)](https://ci.example) [![PyPI](https://b.example/v.svg)]"
                        "(https://pypi.example)\n\n"
                        '<h1 align="center">Heron</h1>\n\n[Docs](https://docs.example) | [API](https://api.example)\n'
                        "\n<!--\na comment\n-->\nHeron keeps notes ![icon](i.png) in one <b>place</b>.\n"),
    })
    nv = index_vault(vault)
    meta = {path: nv.store.documents.meta("p", path) for path in ("setext.md", "later.md", "rule.md", "README.md")}
    assert {path: (m.title, m.summary) for path, m in meta.items() if m} == {
        "setext.md": ("Testing", "How we test."),
        "later.md": ("Second Title", "Intro first."),
        "rule.md": ("rule", "Text after a rule."),
        "README.md": ("Heron", "Heron keeps notes in one place."),
    }


def test_lines_that_made_the_title_and_summary_rules_backtrack_are_read_at_once(tmp_path: Path,
                                                                                   index_vault) -> None:
    """Runs of blanks in a heading, of "[", "![", "[a](" and "<!--" in a paragraph once cost time quadratic or
    cubic in the line (minutes for a line of a few thousand spaces): each file here is read in one pass, or
    the suite's timeout ends the test. A link whose address holds parentheses still leaves the summary."""
    vault = make_vault(tmp_path, {
        "p/blanks.md": "# Long" + " " * 100_000 + "title\n\nBody.\n",
        "p/brackets.md": "[" * 100_000 + "\n",
        "p/images.md": "# T\n\n" + "![" * 50_000 + "\n",
        "p/links.md": "# T\n\n" + "[a](" * 25_000 + "\n",
        "p/comments.md": "# T\n\n" + "<!--" * 25_000 + " words\n",
        "p/wiki.md": "# T\n\n[Foo](https://en.wikipedia.org/wiki/Foo_(bar)) | [Bar](b.md)\n\nBody.\n",
    })
    nv = index_vault(vault)
    meta = {m.path: m for m in nv.store.documents.metas("p")}
    assert meta["blanks.md"].title == "Long title" and meta["blanks.md"].summary == "Body."
    assert meta["brackets.md"].summary.startswith("[[[")
    assert meta["wiki.md"].summary == "Body."  # a line of links only, one address holding "(bar)"


def test_title_and_summary_rules(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {
        "p/front.md": "---\ntitle: Front Title\nsummary: The front summary.\n---\n# Heading\n\nBody text.\n",
        "p/heading.md": "Intro line before.\n\n## First  Heading ##\n\nThe first paragraph\ncontinues here.\n\nMore.\n",
        "p/plain-name.md": "just some text\n",
        "p/notes.txt": "# not a heading in a text file\nsecond\n",
        "p/badyaml.md": "---\ntitle: [unclosed\n---\n# Fallback\n",
        "p/desc.md": "---\ndescription: Described.\n---\ntext\n",
        # thirty anchors of two aliases: a title of a billion words, were the aliases read
        "p/aliases.md": "---\na0: &a0 [x, x]\n" + "".join(f"a{n}: &a{n} [*a{n - 1}, *a{n - 1}]\n" for n in range(1, 30))
                        + "title: *a29\n---\n# Plain title\n",
    })
    nv = index_vault(vault)
    meta = {m.path: m for m in nv.store.documents.metas("p")}
    assert (meta["front.md"].title, meta["front.md"].summary) == ("Front Title", "The front summary.")
    assert meta["heading.md"].title == "First Heading"
    assert meta["heading.md"].summary == "Intro line before."
    assert meta["plain-name.md"].title == "plain-name"
    assert meta["plain-name.md"].summary == "just some text"
    assert meta["notes.txt"].title == "notes"
    assert meta["badyaml.md"].title == "Fallback"
    assert meta["desc.md"].summary == "Described."
    assert meta["aliases.md"].title == "Plain title"  # front matter with an alias is read as none


def test_a_summary_is_a_paragraph_never_a_list_items_continuation(tmp_path: Path, index_vault) -> None:
    """A list item's wrapped line (and, after a blank line, its indented ones) is part of the list: the summary
    is the first real paragraph after it (the handbook's leave policy began "ahead for longer. Tell ...")."""
    vault = make_vault(tmp_path, {
        "p/leave.md": ("# Leave\n\n## Annual\n\n- 27 days a year.\n- Book leave two weeks ahead, and a month\n"
                       "  ahead for longer.\n- Carry over\nup to 5 days.\n\n  still the last item.\n\n"
                       "We want you to take your leave.\n"),
        "p/steps.md": "1. Open the form.\n   Fill it in.\n2) Send it.\n\nThat is all.\n",
        "p/numbers.md": "1.5 million people use it.\n",
    })
    nv = index_vault(vault)
    meta = {m.path: m.summary for m in nv.store.documents.metas("p")}
    assert meta == {"leave.md": "We want you to take your leave.", "steps.md": "That is all.",
                    "numbers.md": "1.5 million people use it."}


def test_summary_is_cut(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, {"p/long.md": "# T\n\n" + "word " * 200 + "\n"})
    nv = index_vault(vault)
    summary = nv.store.documents.meta("p", "long.md").summary  # type: ignore[union-attr]
    assert len(summary) <= 200 and summary.endswith("…")


BRAINS = {
    "p/brains/business/brain.md": (
        "---\ntitle: Business\n---\n# Business brain\n\n"
        "- [Commercial logic](commercial-logic.md)\n- [Day rates](./day-rates.md#table)\n"
        "- [Outside](https://example.com/x.md)\n- [Escapes](../../../other.md)\n"
    ),
    "p/brains/business/commercial-logic.md": "---\nsummary: Logic.\n---\n# Commercial\n",
    "p/brains/business/day-rates.md": "# Rates\n",
    "p/brains/website/brain.md": (
        "---\ntitle: Website\nparent: brains/business\n---\n"
        "The website says:\n\n* [Offer](offer.md)\n* [About us](about.md)\n* [Offer again](offer.md)\n"
        "* [Street plan](<straße plan.md>)\n"
    ),
    "p/brains/website/offer.md": "# Offer page\n",
    "p/brains/website/straße plan.md": "# Street\n",
    "p/brains/website/about.md": "# About\n",
    "p/brains/website/blog/brain.md": "# Blog\n\n1. [Why](2026-why.md)\n",
    "p/brains/website/blog/2026-why.md": "# Why\n",
    "p/brains/website/blog/deep/more/brain.md": "# Deep\n",
    "p/brains/bad-parent/brain.md": "---\nparent: brains/does-not-exist\n---\n# Bad parent\n",
    "p/brains/by-id/brain.md": "---\nparent: p/brains/business\n---\n# Parent named by its brain id\n",
    "p/brain.md": "# Root brain\n",
    "q/solo/brain.md": "# Solo\n",
    "q/child/brain.md": "---\nparent: p/brains/business\n---\n# A brain whose parent is another project's\n",
    "q/root-child/brain.md": "---\nparent: p\n---\n# Its parent is project p's root brain\n",
}


def test_brain_parsing(tmp_path: Path, index_vault) -> None:
    nv = index_vault(make_vault(tmp_path, BRAINS))
    brains = {b.id: b for b in nv.store.documents.brains()}
    assert set(brains) == {"p", "p/brains/business", "p/brains/website", "p/brains/website/blog",
                           "p/brains/website/blog/deep/more", "p/brains/bad-parent", "p/brains/by-id", "q/solo",
                           "q/child", "q/root-child"}
    business = brains["p/brains/business"]
    assert business.title == "Business"
    assert business.documents == (("brains/business/commercial-logic.md", "Commercial logic"),
                                  ("brains/business/day-rates.md", "Day rates"))
    website = brains["p/brains/website"]
    assert website.title == "Website"
    assert website.documents == (("brains/website/offer.md", "Offer"), ("brains/website/about.md", "About us"),
                                 ("brains/website/straße plan.md", "Street plan"))
    assert website.parent == "p/brains/business"  # declared: a sibling folder; a parent is named by its id
    assert brains["p/brains/website/blog"].parent == "p/brains/website"  # nearest enclosing brain
    assert brains["p/brains/website/blog/deep/more"].parent == "p/brains/website/blog"
    assert brains["p/brains/bad-parent"].parent == "p"  # an unknown declared parent: the enclosing brain
    assert brains["p/brains/by-id"].parent == "p/brains/business"  # "<project>/<folder>", as listBrains names it
    assert brains["q/child"].parent == "p/brains/business"  # a brain of another project, by its id
    assert brains["q/root-child"].parent == "p"
    assert brains["p"].parent is None
    assert brains["q/solo"].parent is None


def test_brains_follow_changes(tmp_path: Path, index_vault) -> None:
    vault = make_vault(tmp_path, BRAINS)
    nv = index_vault(vault)
    (vault / "p/brains/website/brain.md").write_text("# Website\n\n- [Offer](offer.md)\n")
    nv.sync()
    website = {b.id: b for b in nv.store.documents.brains()}["p/brains/website"]
    assert website.parent == "p"  # no declaration now: the enclosing brain is the project root p/brain.md
    assert website.documents == (("brains/website/offer.md", "Offer"),)
    (vault / "p/brains/website/blog/brain.md").unlink()
    nv.sync()
    assert "p/brains/website/blog" not in {b.id for b in nv.store.documents.brains()}
    deep = {b.id: b for b in nv.store.documents.brains()}["p/brains/website/blog/deep/more"]
    assert deep.parent == "p/brains/website"


def test_northwind_brains(northwind: IndexedVault) -> None:
    brains = {b.id: b for b in northwind.store.documents.brains("northwind-advisory")}
    website = brains["northwind-advisory/brains/website"]
    assert website.parent == "northwind-advisory/brains/business"
    assert brains["northwind-advisory/brains/website/blog"].parent == "northwind-advisory/brains/website"
    assert ("brains/website/offer.md", "Offer") in website.documents
    business = brains["northwind-advisory/brains/business"]
    assert ("brains/business/commercial-logic.md", "Commercial logic") in business.documents
    meta = northwind.store.documents.meta("northwind-advisory", "brains/business/commercial-logic.md")
    assert meta is not None and "maximum" in meta.summary


def test_northwind_ignore_and_hidden(northwind: IndexedVault) -> None:
    docs = paths(northwind)
    assert "northwind-advisory/drafts/unfinished.md" not in docs
    assert not any("/." in p or p.startswith(".") for p in docs)
    assert northwind.store.documents.vault_projects() == ["handbook", "northwind-advisory", "projects"]


# --- settings: flags, environment, notewell.toml ------------------------------------------------------


def test_settings_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_vault = make_vault(tmp_path, {"p/a.md": "x\n"}, "env-vault")
    flag_vault = make_vault(tmp_path, {"p/a.md": "x\n", "notewell.toml": 'db = "from-toml.db"\n'}, "flag-vault")
    cwd_vault = make_vault(tmp_path, {"p/a.md": "x\n"}, "cwd-vault")
    monkeypatch.chdir(cwd_vault)

    assert load_settings().vault == cwd_vault.resolve()
    assert load_settings().db == str(cwd_vault.resolve() / ".notewell" / "index.db")
    monkeypatch.setenv("NOTEWELL_VAULT", str(env_vault))
    assert load_settings().vault == env_vault.resolve()
    assert load_settings(vault=str(flag_vault)).vault == flag_vault.resolve()

    # db: notewell.toml (relative to the vault) < NOTEWELL_DB < --db (relative to the working folder)
    assert load_settings(vault=str(flag_vault)).db == str(flag_vault.resolve() / "from-toml.db")
    monkeypatch.setenv("NOTEWELL_DB", str(tmp_path / "env.db"))
    assert load_settings(vault=str(flag_vault)).db == str(tmp_path / "env.db")
    assert load_settings(vault=str(flag_vault), db="flag.db").db == str(cwd_vault.resolve() / "flag.db")
    assert load_settings(vault=str(flag_vault), db="postgresql://h/db").db == "postgresql://h/db"


def test_db_takes_a_path_sqlite_path_or_a_postgresql_url_and_refuses_the_rest(tmp_path: Path) -> None:
    """A libpq key=value string or another scheme was taken as a file name: a SQLite store named after it, its
    password in the name."""
    vault = make_vault(tmp_path, {"p/a.md": "x\n"})
    assert load_settings(vault, f"sqlite:{tmp_path / 'm.db'}").db == str(tmp_path / "m.db")
    for bad in ("host=localhost port=1 user=nw password=KVsecret dbname=nw", "mysql://x@y/z", "sqlite:"):
        with pytest.raises(ConfigError, match="--db: "):
            load_settings(vault, bad)
    assert sorted(p.name for p in Path.cwd().iterdir() if "KVsecret" in p.name) == []
    refused = run_cli("migrate", "--from", "sqlite:", "--to", str(tmp_path / "to.db"), "--vault", str(vault))
    assert refused.exit_code != 0 and "--from: names no store" in refused.stderr


def test_cli_uses_environment_and_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = make_vault(tmp_path, {"p/a.md": "only in vault a\n"}, "a")
    b = make_vault(tmp_path, {"p/b.md": "only in vault b\n"}, "b")
    monkeypatch.setenv("NOTEWELL_VAULT", str(a))
    monkeypatch.setenv("NOTEWELL_DB", str(tmp_path / "env.db"))
    assert run_cli("index").exit_code == 0
    assert (tmp_path / "env.db").exists()
    assert not (a / ".notewell").exists()
    res = run_cli("search", "only in", "--json")
    assert '"p/a.md"' in res.stdout and '"p/b.md"' not in res.stdout

    assert run_cli("index", "--vault", str(b), "--db", str(tmp_path / "flag.db")).exit_code == 0
    res = run_cli("search", "only in", "--json", "--vault", str(b), "--db", str(tmp_path / "flag.db"))
    assert '"p/b.md"' in res.stdout and '"p/a.md"' not in res.stdout

    monkeypatch.delenv("NOTEWELL_DB")
    assert run_cli("index", "--vault", str(b)).exit_code == 0
    assert (b / ".notewell" / "index.db").exists()  # the default store; hidden, so never indexed itself
    assert run_cli("index", "--vault", str(b)).stdout.startswith("Up to date")


def test_missing_vault_is_one_clear_line(tmp_path: Path) -> None:
    res = run_cli("index", "--vault", str(tmp_path / "nope"), "--db", str(tmp_path / "i.db"))
    assert res.exit_code != 0
    assert "Traceback" not in res.stderr + res.stdout
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1
    assert "--vault" in err and "not a folder" in err


@pytest.mark.parametrize(("toml", "names"), [
    ("[index\nmax_file_bytes = 1\n", "not valid TOML"),
    ("[index]\nmax_file_bytes = \"big\"\n", "max_file_bytes"),
    ("[index]\nmax_file_bytes = 0\n", "max_file_bytes"),
    ("[index]\nfile_types = \"md\"\n", "file_types"),
    ("index = 3\n", "[index]"),
    ("db = 5\n", "db"),
    ("semantik = false\n", "no setting semantik; it takes db, semantic, [index], [writing]"),
    ("[index]\nsemantic = false\n", "[index] has no setting semantic; it takes max_file_bytes, file_types"),
])
def test_bad_notewell_toml_is_one_clear_line(tmp_path: Path, toml: str, names: str) -> None:
    vault = make_vault(tmp_path, {"notewell.toml": toml, "p/a.md": "x\n"})
    with pytest.raises(ConfigError, match=r"notewell\.toml"):
        load_settings(vault)
    res = run_cli("index", "--vault", str(vault), "--db", str(tmp_path / "i.db"))
    assert res.exit_code != 0
    assert "Traceback" not in res.stderr + res.stdout
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert names in err


def test_errors_through_a_real_process(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"notewell.toml": "[index]\nmax_file_bytes = -1\n", "p/a.md": "x\n"})
    proc = run_module("index", "--vault", str(vault), "--db", str(tmp_path / "i.db"))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "max_file_bytes" in proc.stderr
    proc = run_module("search", "word", "--vault", str(tmp_path / "missing"))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and "--vault" in proc.stderr


def test_index_through_a_real_process(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "hello process\n"})
    db = tmp_path / "i.db"
    first = run_module("index", "--vault", str(vault), "--db", str(db))
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("Indexed: 1 added")
    nv = index_into(vault, db)
    try:
        assert not nv.report.did_work
        assert found(nv, "hello process") == [("p/a.md", 1)]
    finally:
        nv.runtime.close()


def test_bad_db_is_one_clear_line(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "x\n", "not-a-db.db": "plain text, not SQLite\n"})
    for args in (("index", "--db", str(vault / "not-a-db.db")), ("index", "--db", str(tmp_path)),
                 ("search", "word", "--db", str(tmp_path / "never-indexed.db"))):
        res = run_cli(*args, "--vault", str(vault))
        assert res.exit_code != 0, args
        err = res.stderr.strip()
        assert "Traceback" not in err and len(err.splitlines()) == 1 and err.startswith("error: --db:"), err
    assert not (tmp_path / "never-indexed.db").exists()  # a search does not create an empty index


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    """On a terminal the index shows a Rich progress bar, then the one summary line."""
    vault = make_vault(tmp_path, {f"p/f{i}.md": "words\n" * 50 for i in range(20)})
    code, output = run_on_terminal(["index", "--vault", str(vault), "--db", str(tmp_path / "i.db")],
                                   {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100"})
    assert code == 0
    text = output.decode("utf-8", "replace")
    assert "Indexing" in text and "\x1b[" in text  # the bar, drawn for a terminal
    assert "Indexed: 20 added" in text
    assert "Traceback" not in text
