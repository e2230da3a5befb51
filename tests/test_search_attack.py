"""Document search attacked from the outside: what a probe found wrong, kept fixed, on both backends.

A command line hands over bytes that are not UTF-8 as lone surrogates (Python's surrogateescape: byte 0xff is
U+DCFF). `notewell search $'\\xff'` ended in "UnicodeEncodeError ...; Notewell did not expect this" on SQLite and
answered "No results" on PostgreSQL (`$'x\\xff' --path alpha`), a wrong answer; `--path`, `--type` and `--as` given such
bytes ended in the same internal error. Each is now refused, naming the argument, on both backends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import make_vault, run_cli

NOT_UTF8 = "\udcff"  # what `notewell search $'\xff'` receives in sys.argv


@pytest.fixture
def indexed(tmp_path: Path, store_url: str) -> list[str]:
    vault = make_vault(tmp_path, {"alpha/notes.md": "café 中文 plain\n", "alpha/sub/more.md": "more café\n"})
    base = ["--vault", str(vault), "--db", store_url]
    assert run_cli("index", *base).exit_code == 0
    return base


@pytest.mark.parametrize(("args", "field"), [
    ([NOT_UTF8], "query"),
    ([f"caf{NOT_UTF8}"], "query"),
    ([f"x{NOT_UTF8}", "--path", "alpha"], "query"),
    ([f"x{NOT_UTF8}", "--project", "alpha", "--all-lines"], "query"),
    ([NOT_UTF8, "--regex"], "query"),
    ([f"caf{NOT_UTF8}.", "--regex", "--case-sensitive"], "query"),
    (["caf", "--path", f"alpha/{NOT_UTF8}"], "path"),
    (["caf", "--path", f"alpha/sub{NOT_UTF8}"], "path"),
    (["caf", "--type", f"m{NOT_UTF8}"], "type"),
    (["caf", "--as", f"ada{NOT_UTF8}@example.com"], "--as"),
])
def test_bytes_not_utf8_are_refused_naming_the_argument(indexed: list[str], args: list[str], field: str) -> None:
    result = run_cli("search", *args, *indexed)
    assert result.exit_code != 0, result.stdout
    assert result.stdout == ""
    assert "did not expect" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert field in result.stderr and "not UTF-8" in result.stderr and "0xff" in result.stderr, result.stderr


def test_the_same_searches_in_utf8_still_answer(indexed: list[str]) -> None:
    """The refusal is of the bytes alone: the same arguments spelt in UTF-8 search as before."""
    for args in (["café"], ["caf", "--path", "alpha/sub"], ["caf", "--type", "md", "--all-lines"], ["中", "--regex"]):
        result = run_cli("search", *args, *indexed)
        assert result.exit_code == 0, result.stderr
        assert "alpha/" in result.stdout
