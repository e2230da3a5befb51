"""The package builds as pip builds it for `make serve` / `make install` (an editable install, the build backend
pyproject.toml asks for), with no deprecation warning from setuptools: `project.license` as a table printed
one, three times, on every first `make serve`."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO_ROOT


def test_an_editable_install_builds_without_a_warning() -> None:
    built = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--editable",
                            str(REPO_ROOT)], capture_output=True, text=True, timeout=300, check=False)
    output = built.stdout + built.stderr
    assert built.returncode == 0, output
    assert "Would install notewell-" in output
    assert "Warning" not in output and "deprecated" not in output, output
