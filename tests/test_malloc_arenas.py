"""`notewell serve` caps glibc's malloc arenas (malloc_arenas.py); an operator's MALLOC_ARENA_MAX wins."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

PROBE = "from notewell.malloc_arenas import cap_malloc_arenas; print(cap_malloc_arenas())"


def _probe(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("MALLOC_ARENA_MAX", "GLIBC_TUNABLES")}
    return subprocess.run([sys.executable, "-c", PROBE], env={**clean, **env}, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the cap is glibc's mallopt")
def test_the_arenas_are_capped_on_glibc() -> None:
    assert _probe() == "True"


def test_an_operators_own_setting_wins() -> None:
    assert _probe(MALLOC_ARENA_MAX="4") == "False"
    assert _probe(GLIBC_TUNABLES="glibc.malloc.arena_max=4") == "False"
