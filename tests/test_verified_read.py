"""VerifiedReader: the folders of the last path kept open change nothing of what is read, and a swap of a
kept folder or of a file for a symlink still never leads the read outside the vault."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import make_vault
from notewell.vault.verified_read import FileTooLarge, VerifiedReader

PATHS = ["a.md", "p/a.md", "p/b.md", "p/sub/c.md", "p/sub/deep/d.md", "p/sub2/e.md", "q/a.md", "q/sub/c.md"]


def content(rel: str) -> bytes:
    return f"{rel}\n".encode() * (len(rel) * 7)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(PATHS), max_size=30))
def test_reads_in_any_order_give_each_file_its_bytes(order: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        vault = make_vault(Path(tmp), {rel: content(rel) for rel in PATHS})
        with VerifiedReader(vault, 1 << 20) as reader:
            assert [reader.read(rel) for rel in order] == [content(rel) for rel in order]


def test_a_kept_folder_swapped_for_a_symlink_is_not_followed(tmp_path: Path) -> None:
    outside = make_vault(tmp_path, {"sub/c.md": "outside secret\n"}, "outside")
    vault = make_vault(tmp_path, {"p/sub/a.md": "first\n", "p/sub/c.md": "third\n", "p/sub/x.md": "x\n"})
    with VerifiedReader(vault, 1 << 20) as reader:
        assert reader.read("p/sub/a.md") == b"first\n"  # p and p/sub are now kept open
        (vault / "p" / "sub").rename(vault / "p" / "moved")
        (vault / "p" / "sub").symlink_to(outside / "sub", target_is_directory=True)
        assert reader.read("p/sub/c.md") == b"third\n"  # the folder verified before, never the link's target
        (vault / "p" / "moved" / "x.md").unlink()
        with pytest.raises(OSError):
            reader.read("p/sub/x.md")
        assert reader.read("p/moved/a.md") == b"first\n"  # a path that leaves the kept folder opens afresh
        with pytest.raises(OSError):  # ... and then checks every component again
            reader.read("p/sub/c.md")


def test_what_is_not_a_regular_file_below_the_vault_is_refused(tmp_path: Path) -> None:
    outside = make_vault(tmp_path, {"secret.md": "outside secret\n"}, "outside")
    vault = make_vault(tmp_path, {"p/a.md": "a\n", "p/empty.md": ""})
    (vault / "p" / "link.md").symlink_to(outside / "secret.md")
    os.mkfifo(vault / "p" / "fifo.md")
    with VerifiedReader(vault, 1 << 20) as reader:
        for rel in ["p/link.md", "p/fifo.md", "p/missing.md", "p/a.md/x", "p/../outside/secret.md", "/p/a.md"]:
            with pytest.raises(OSError):
                reader.read(rel)
        assert reader.read("p/empty.md") == b""
        assert reader.read("p/a.md") == b"a\n"


def test_the_size_limit_holds(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"p/ten.md": "0123456789", "p/nine.md": "012345678"})
    with VerifiedReader(vault, 9) as reader:
        with pytest.raises(FileTooLarge):
            reader.read("p/ten.md")
        assert reader.read("p/nine.md") == b"012345678"


def test_a_vault_gone_makes_the_read_fail_not_the_reader(tmp_path: Path) -> None:
    reader = VerifiedReader(tmp_path / "gone", 1 << 20)
    with pytest.raises(OSError):
        reader.read("p/a.md")
    reader.close()


def _hinted_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The real path of each file a hint asked the kernel to read ahead (the descriptor's /proc link)."""
    hinted: list[str] = []
    advise = os.posix_fadvise

    def spy(fd: int, offset: int, length: int, advice: int) -> None:
        hinted.append(os.readlink(f"/proc/self/fd/{fd}"))
        advise(fd, offset, length, advice)

    monkeypatch.setattr(os, "posix_fadvise", spy)
    return hinted


def test_a_hint_opens_what_a_read_would_and_nothing_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = make_vault(tmp_path, {"sub/c.md": "outside secret\n", "secret.md": "s\n"}, "outside")
    vault = make_vault(tmp_path, {"p/sub/a.md": "first\n", "p/sub/c.md": "third\n"})
    hinted = _hinted_paths(monkeypatch)
    with VerifiedReader(vault, 1 << 20) as reader:
        reader.hint("p/sub/a.md")
        (vault / "p" / "sub").rename(vault / "p" / "moved")
        (vault / "p" / "sub").symlink_to(outside / "sub", target_is_directory=True)
        reader.hint("p/sub/c.md")  # the folder verified before: the vault's file, never the link's target
        reader.hint("p/moved/a.md")
        reader.hint("p/sub/c.md")  # opened afresh: the symlink refuses it, silently
        (vault / "p" / "link.md").symlink_to(outside / "secret.md")
        os.mkfifo(vault / "p" / "pipe.md")
        for refused in ("p/link.md", "p/pipe.md", "p/missing.md", "../outside/secret.md", "p//a.md"):
            reader.hint(refused)  # returns at once, raises nothing: the read that follows reports it
        assert reader.read("p/moved/a.md") == b"first\n"
    assert hinted == [str(vault / "p/sub/a.md"), str(vault / "p/moved/c.md"), str(vault / "p/moved/a.md")]
