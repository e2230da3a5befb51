"""Ctrl-C held over the step that makes a change final, so that what a command says it left is so."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) in the block is held until the block ends, then acted on as it would have been: the block
    (a commit, and the note that it was made) is never cut in two. Outside the main thread, where no signal
    handler runs, the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[FrameType | None] = []

    def hold(_signum: int, frame: FrameType | None) -> None:
        held.append(frame)

    before = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:  # (a failure of the block too gives way to the Ctrl-C held)
        signal.signal(signal.SIGINT, before)
        if held:
            if callable(before):
                before(signal.SIGINT, held[0])
            else:
                signal.raise_signal(signal.SIGINT)
