"""The word vectors of a bulk load (import, migrate) computed ahead, in worker processes.

Tokenizing with FTS5 and writing tsvector text (lexemes.py) is most of a PostgreSQL migration's time and is
pure computation on each row alone, so it spreads over processes: a few batches are handed out ahead, and each
batch is taken back in its order while the loader writes the one before. A load of one batch or less computes
in the loader's own process (no process is started for a small import), and so does a load on a machine with
one core. Worker processes are started fresh ("spawn": the loader's process holds database connections and
threads that a fork would copy); each holds its own in-memory tokenizers. As with any use of multiprocessing, a
program of its own that calls the import or migrate service must guard its entry point with ``if __name__ ==
"__main__":`` (a spawned process imports the program's main module); the notewell command needs nothing.

A worker ends when the loader's process is gone: a loader killed outright (kill -9, the OOM killer) left its
workers running for good, one blocked writing a result nobody would read (about 117 MB each). Each worker
watches its parent's pid (every PARENT_CHECK_S) and exits once it changes.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

from notewell.store.shared.tables import Batch, Computed

Compute = Callable[[Batch], list[Any]]
MAX_WORKERS = 4
AHEAD_PER_WORKER = 2  # batches in flight per worker: enough to keep each busy, few enough to bound memory
PARENT_CHECK_S = 1.0


def _end_with(parent: int) -> None:
    """A worker's initializer: a thread that ends the worker's process once ``parent`` is no longer its parent.
    Ctrl-C, which a terminal sends to every process of the command, is left to the loader: it stops the load and
    the pool with it (a worker it reached printed its traceback and broke the pool under the loader)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(1)  # the loader is gone: nobody will take what this worker computes

    threading.Thread(target=watch, name="notewell-parent-watch", daemon=True).start()


def workers() -> int:
    """As many workers as the machine has cores, at most MAX_WORKERS."""
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def computed_ahead(computes: Sequence[Compute], batches: Iterator[Batch]) -> Iterator[tuple[Batch, Computed]]:
    """Each batch with the values of each of ``computes`` (picklable: module-level functions or partials of
    them), in the batches' order."""
    head = list(itertools.islice(batches, 2))
    count = workers()
    if len(head) < 2 or count < 2:
        for batch in itertools.chain(head, batches):
            yield batch, [compute(batch) for compute in computes]
        return
    pool = ProcessPoolExecutor(max_workers=count, mp_context=get_context("spawn"), initializer=_end_with,
                               initargs=(os.getpid(),))
    try:
        pending: deque[tuple[Batch, list[Future[list[Any]]]]] = deque()
        for batch in itertools.chain(head, batches):
            pending.append((batch, [pool.submit(compute, batch) for compute in computes]))
            if len(pending) >= count * AHEAD_PER_WORKER:
                done, futures = pending.popleft()
                yield done, [f.result() for f in futures]
        while pending:
            done, futures = pending.popleft()
            yield done, [f.result() for f in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
