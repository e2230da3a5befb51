"""A server's malloc arenas, capped at two, and what they freed given back (glibc).

glibc gives a thread that finds the existing arenas busy an arena of its own, up to eight per core, and memory
freed in an arena goes back to the system only from its top. A server's threads (the doors, the embedding
runner and its model's pool, the query threads, the watcher, the job runner) each filled one, and what their
bursts freed stayed resident: `notewell serve` on the 1 GB vault with the model loaded held 330 MB idle after
embedding 1,000 memories at start, and 169 MB with two arenas, at the same speed (docs/performance.md,
"Meaning"). The cap is what ``MALLOC_ARENA_MAX=2`` does, set by the process itself; an operator's own
``MALLOC_ARENA_MAX`` or ``glibc.malloc.arena_max`` tunable wins, and on a C library without glibc's ``mallopt``
nothing changes.

Even so, memory freed in the middle of an arena stays resident until ``malloc_trim`` hands its pages back:
after 1,000 mixed calls from 8 clients on the 1 GB vault a server held 322 MB, and 298 MB with a trim every
few seconds (http/memory_task.py). A trim takes about 2 ms, and up to about 30 when much was freed.
"""

from __future__ import annotations

import ctypes
import os
import sys

ARENAS = 2
_M_ARENA_MAX = -8  # glibc's malloc.h


def cap_malloc_arenas() -> bool:
    """Cap this process's malloc arenas at ``ARENAS``, before the server starts its threads; whether it did."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if os.environ.get("MALLOC_ARENA_MAX") or "glibc.malloc.arena_max" in tunables or sys.platform != "linux":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(_M_ARENA_MAX, ARENAS))


def give_back_freed() -> bool:
    """Return the pages malloc holds free to the system (``malloc_trim(0)``); whether any went back. Nothing
    on a C library without it."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes = [ctypes.c_size_t]
    return bool(trim(0))
