"""What the note and memory commands take from standard input (CONTENT '-') and user passwd reads there, in-process:
text that is not UTF-8 is refused naming the argument, and a NUL character in a note is refused as every door
refuses it; nothing is written."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from conftest import make_vault, run_cli
from notewell.cli import app


def _piped(data: bytes, *args: str) -> Result:
    return CliRunner().invoke(app, list(args), input=data, catch_exceptions=False)


def test_a_nul_character_from_standard_input_or_an_argument_is_refused(tmp_path: Path) -> None:
    """A probe: `printf 'a\\0b\\n' | notewell note write alpha/c.md -` wrote the NUL to disk and said it was done;
    the note was then binary to the index."""
    vault = make_vault(tmp_path, {"alpha/plan.md": "# Plan\n"})
    base = ["--vault", str(vault)]
    assert run_cli("index", *base).exit_code == 0
    written = _piped(b"a\x00b\n", "note", "write", "alpha/c.md", "-", *base)
    assert written.exit_code == 1 and written.stderr.startswith(
        "error: CONTENT: must not contain the NUL character (\\x00); remove it"), written.stderr
    assert not (vault / "alpha/c.md").exists()
    edited = _piped(b"a\x00b\n", "note", "edit", "alpha/plan.md", "append", "--content", "-", *base)
    assert edited.exit_code == 1 and edited.stderr.startswith("error: --content: must not contain the NUL"), \
        edited.stderr
    assert (vault / "alpha/plan.md").read_bytes() == b"# Plan\n"


def test_standard_input_that_is_not_utf8_is_refused_naming_the_argument(tmp_path: Path) -> None:
    """A probe: `printf '\\xff\\xfe bad\\n' | notewell note write alpha/bad.md -` ended with an internal error (exit
    70, UnicodeDecodeError)."""
    vault = make_vault(tmp_path, {"alpha/plan.md": "# Plan\n"})
    base = ["--vault", str(vault)]
    assert run_cli("index", *base).exit_code == 0
    for args, named in [(["note", "write", "alpha/bad.md", "-"], "CONTENT"),
                        (["note", "edit", "alpha/plan.md", "append", "-c", "-"], "--content"),
                        (["memory", "add", "-", "--project", "alpha"], "CONTENT")]:
        refused = _piped(b"ok\n\xff\xfe bad\n", *args, *base)
        assert refused.exit_code == 1, (args, refused.stderr)
        assert refused.stderr.startswith(f"error: {named}: standard input is not UTF-8 text (byte 0xff at "
                                         "offset 3)"), refused.stderr
    assert not (vault / "alpha/bad.md").exists() and (vault / "alpha/plan.md").read_bytes() == b"# Plan\n"
    assert run_cli("user", "add", "ada@example.com", "--role", "member", *base).exit_code == 0
    password = _piped(b"\xff\xfe long pass phrase\n", "user", "passwd", "ada@example.com", *base)
    assert password.exit_code == 1 and password.stderr.startswith(
        "error: password: standard input is not UTF-8 text (byte 0xff at offset 0)"), password.stderr
    crlf = _piped("café\r\nline\r\n".encode(), "note", "write", "alpha/ok.md", "-", *base)
    assert crlf.exit_code == 0, crlf.stderr
    assert (vault / "alpha/ok.md").read_bytes() == "café\nline\n".encode()  # line breaks read as before
