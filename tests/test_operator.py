"""Operator comforts on the command line: --version, the bind error, log levels, store file modes, progress."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

from conftest import make_vault, run_cli
from notewell import __version__


def test_version() -> None:
    result = run_cli("--version")
    assert result.exit_code == 0 and result.stdout.startswith(f"notewell {__version__} (Python 3.")


def test_a_port_in_use_is_one_error_line_before_any_serving_line(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "word\n"})
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        results = [run_cli(command, "--port", str(port), "--vault", str(vault), "--db", str(tmp_path / "i.db"))
                   for command in ("serve", "quickstart")]
    for result in results:  # quickstart says it before indexing or printing a token
        assert result.exit_code == 1 and result.stdout == ""
        assert result.stderr.strip().splitlines() == [
            f"error: --port: cannot listen on 127.0.0.1:{port} (Address already in use); stop what uses it, or "
            "pass another --port (make serve: PORT=...)"]


def test_an_address_not_of_this_machine_names_host_not_port(tmp_path: Path) -> None:
    """`--host 999.1.1.1` said "--port: cannot listen …; stop what uses it, or pass another --port"."""
    vault = make_vault(tmp_path, {"p/a.md": "word\n"})
    result = run_cli("serve", "--host", "999.1.1.1", "--port", "8815", "--vault", str(vault),
                     "--db", str(tmp_path / "i.db"))
    assert result.exit_code == 1 and result.stdout == "", result.output
    error = [line for line in result.stderr.splitlines() if line.startswith("error:")]  # after a note on hosts
    assert len(error) == 1 and error[0].startswith("error: --host: cannot listen on 999.1.1.1:8815 ("), result.stderr
    assert "pass an address of this machine" in " ".join(result.stderr.split()), result.stderr


def test_a_wrong_log_level_names_its_source(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "word\n"})
    flag = run_cli("serve", "--log-level", "loud", "--vault", str(vault), "--db", str(tmp_path / "i.db"))
    assert flag.exit_code == 1 and flag.stderr.startswith("error: --log-level: 'loud' is not a log level")
    env = run_cli("serve", "--vault", str(vault), "--db", str(tmp_path / "i.db"), env={"NOTEWELL_LOG_LEVEL": "loud"})
    assert env.exit_code == 1 and env.stderr.startswith("error: NOTEWELL_LOG_LEVEL: 'loud' is not a log level")


def test_the_store_is_created_0600_in_a_0700_folder(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "word\n"})
    assert run_cli("index", "--vault", str(vault)).exit_code == 0
    folder = vault / ".notewell"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = sorted(folder.iterdir())
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files), files


def test_index_off_a_terminal_prints_progress_lines_on_stderr(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {f"p/f{i}.md": "words\n" * 100 for i in range(5)})
    result = run_cli("index", "--vault", str(vault), "--db", str(tmp_path / "i.db"))
    assert result.exit_code == 0
    assert result.stderr.startswith("Indexing: 3.0 KB to read")
    assert result.stdout.startswith("Indexed: 5 added")


def test_the_progress_line_says_how_much_there_is_to_read_not_a_share_already_past(tmp_path: Path) -> None:
    """The line when reading starts says what is to read; it was "0.0 of 3.1 MB read (0%)", written after the
    first (small) file and never followed by another when the sync took less than 5 s."""
    vault = make_vault(tmp_path, {"notes/a.md": "tiny\n", "notes/survey.md": "A long survey line.\n" * 160_000,
                                  "notewell.toml": "[index]\nmax_file_bytes = 4_000_000\n"})
    result = run_cli("index", "--vault", str(vault), "--db", str(tmp_path / "i.db"))
    assert result.exit_code == 0 and result.stdout.startswith("Indexed: 2 added"), result.stdout
    first, *later = result.stderr.splitlines()
    assert first == "Indexing: 3.2 MB to read"
    assert all(line.startswith("Indexing: ") and not line.endswith("(0%)") for line in later), later
