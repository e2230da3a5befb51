"""Where a note may be written (services/note_paths.py, note_files.py), through the writing service as the
local owner: ignore files, symlinks to files and folders, the vault root, names, types, sizes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import make_vault
from notewell.access.principal import LOCAL_OWNER
from notewell.errors import InvalidArgument
from notewell.runtime import Runtime, open_runtime


@pytest.fixture
def rt(tmp_path: Path) -> Iterator[Runtime]:
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n", "apollo/.gitignore": "drafts/\nsecret.md\n",
                                  "apollo/real.md": "real\n", "notewell.toml": "[index]\nmax_file_bytes = 100\n"})
    os.symlink(vault / "apollo" / "real.md", vault / "apollo" / "link.md")
    runtime = open_runtime(str(vault), str(tmp_path / "index.db"))
    runtime.indexing.sync()
    yield runtime
    runtime.close()


@pytest.mark.parametrize(("path", "words"), [
    ("apollo/drafts/x.md", "excluded by an ignore file"),
    ("apollo/secret.md", "excluded by an ignore file"),
    ("apollo/link.md", "symlink"),
    ("apollo/.gitignore", "hidden"),
    ("README.md", "names no file inside a project"),
    ("_root/x.md", "vault root"),
    ("apollo/" + "n" * 300 + ".md", "longer than 255 bytes"),
    ("apollo/tab\there.md", "control character"),
    ("apollo/plan.MD.exe", "type the vault indexes"),
    ("apollo/plan.md ", "starts or ends with a space"),  # it would overwrite apollo/plan.md
    (" apollo/plan.md", "starts or ends with a space"),
    ("apollo/drafts /x.md", "starts or ends with a space ('drafts ')"),
])
def test_a_write_is_refused_with_the_reason(rt: Runtime, path: str, words: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        rt.notes.write_note(LOCAL_OWNER, path, "x\n", tool="test", overwrite=True)
    assert err.value.field == "path" and words in str(err.value)
    assert (rt.settings.vault / "apollo/real.md").read_text() == "real\n"  # the link's target is untouched
    assert (rt.settings.vault / "apollo/plan.md").read_text() == "# Plan\n"


def test_a_note_over_the_index_limit_is_refused(rt: Runtime) -> None:
    with pytest.raises(InvalidArgument, match="over the 100 byte limit"):
        rt.notes.write_note(LOCAL_OWNER, "apollo/big.md", "x" * 101, tool="test")
    rt.notes.write_note(LOCAL_OWNER, "apollo/small.md", "x" * 100, tool="test")
    assert not [p for p in (rt.settings.vault / "apollo").iterdir() if p.name.startswith(".notewell-write-")]


def test_a_name_another_note_has_in_another_unicode_form_is_refused(rt: Runtime) -> None:
    """"Zoë" composed and "Zoe" with a combining mark look the same: a second note (or folder) by the other form
    is refused, for a write and for a move, and the first is written to by its own name."""
    composed, decomposed = "Zo\u00eb", "Zoe\u0308"
    rt.notes.write_note(LOCAL_OWNER, f"apollo/{composed}.md", "first\n", tool="test")
    rt.notes.write_note(LOCAL_OWNER, f"apollo/{composed}/inner.md", "in a folder\n", tool="test")
    for path in (f"apollo/{decomposed}.md", f"apollo/{decomposed}/other.md"):
        with pytest.raises(InvalidArgument, match="the same name in another Unicode form") as err:
            rt.notes.write_note(LOCAL_OWNER, path, "second\n", tool="test")
        assert err.value.field == "path"
    with pytest.raises(InvalidArgument, match="another Unicode form") as err:
        rt.notes.move_note(LOCAL_OWNER, "apollo/plan.md", f"apollo/{decomposed}.md", tool="test")
    assert err.value.field == "new_path"
    assert sorted(p.name for p in (rt.settings.vault / "apollo").iterdir() if p.name.startswith("Zo")) == [
        composed, f"{composed}.md"]
    rt.notes.write_note(LOCAL_OWNER, f"apollo/{composed}.md", "again\n", tool="test", overwrite=True,
                        expected_version=rt.notes.read_for_edit(LOCAL_OWNER, f"apollo/{composed}.md")[1])
    rt.notes.move_note(LOCAL_OWNER, f"apollo/{composed}.md", f"apollo/{decomposed}.md", tool="test")  # its own
    assert (rt.settings.vault / f"apollo/{decomposed}.md").read_text() == "again\n"  # name, in the other form
    assert not (rt.settings.vault / f"apollo/{composed}.md").exists()
