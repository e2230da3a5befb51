"""The systemd unit in deploy/systemd passes `systemd-analyze verify` and starts `notewell serve` with options
it has (docs/operations.md, "Install for a server")."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli

DEPLOY = Path(__file__).resolve().parents[1] / "deploy" / "systemd"
INSTALLED = "/opt/notewell/bin/notewell"


def exec_start() -> list[str]:
    line = next(x for x in (DEPLOY / "notewell.service").read_text().splitlines() if x.startswith("ExecStart="))
    return shlex.split(line.removeprefix("ExecStart="))


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_the_unit_verifies(tmp_path: Path) -> None:
    """verify checks the command exists, so the copy names this checkout's notewell; any warning fails."""
    notewell = Path(sys.executable).with_name("notewell")
    unit = tmp_path / "notewell.service"
    unit.write_text((DEPLOY / "notewell.service").read_text().replace(INSTALLED, str(notewell)))
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


def test_the_unit_starts_serve_with_options_it_has() -> None:
    command = exec_start()
    assert command[0] == INSTALLED and command[1] == "serve"
    result = run_cli(*command[1:], "--help")  # an unknown option fails before --help answers
    assert result.exit_code == 0, result.output
    env = dict(line.split("=", 1) for line in (DEPLOY / "notewell.env").read_text().splitlines()
               if line and not line.startswith("#"))
    assert {"NOTEWELL_VAULT", "NOTEWELL_DB", "NOTEWELL_METRICS_TOKEN"} <= set(env)
