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


TRIM_PROBE = """
import re
from notewell.malloc_arenas import give_back_freed

def rss_kb():
    return int(re.search(r"VmRSS:\\s+(\\d+)", open("/proc/self/status").read()).group(1))

blocks = [bytearray(16384) for _ in range(12000)]  # about 200 MB, each block touched
kept = blocks[::8]  # every eighth stays: the freed ones lie between them, below the heap's top
del blocks
before = rss_kb()
given = give_back_freed()
print(given, before - rss_kb())
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_freed_memory_between_live_blocks_goes_back_to_the_system() -> None:
    given, freed_kb = subprocess.run([sys.executable, "-c", TRIM_PROBE], capture_output=True, text=True,
                                     check=True).stdout.split()
    assert given == "True" and int(freed_kb) > 100_000  # most of the 175 MB freed, none of it at the top
