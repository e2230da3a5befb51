"""A server's malloc arenas, capped at two (glibc).

glibc gives a thread that finds the existing arenas busy an arena of its own, up to eight per core, and memory
freed in an arena goes back to the system only from its top. A server's threads (the doors, the embedding
runner and its model's pool, the query threads, the watcher, the job runner) each filled one, and what their
bursts freed stayed resident: `notewell serve` on the 1 GB vault with the model loaded held 330 MB idle after
embedding 1,000 memories at start, and 169 MB with two arenas, at the same speed (docs/performance.md,
"Meaning"). The cap is what ``MALLOC_ARENA_MAX=2`` does, set by the process itself; an operator's own
``MALLOC_ARENA_MAX`` or ``glibc.malloc.arena_max`` tunable wins, and on a C library without glibc's ``mallopt``
nothing changes.
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
