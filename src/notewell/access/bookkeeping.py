"""Writes a request makes only to keep books (when a token was last used, a browser session's renewal, the
message a page has shown): a store refusing writes (its disk full, it read-only) must not refuse the request
for them. Such a write is skipped, and a warning says so at most once a ``LOG_EVERY_S`` per kind of write
(/readyz and doctor name the cause), never a line per request."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from notewell.errors import StoreCannotWrite
from notewell.log_lines import line

LOG_EVERY_S = 60.0
_log = logging.getLogger("notewell.access")


class Bookkeeping:
    """The bookkeeping writes of one service, and when each kind was last said to be skipped."""

    def __init__(self) -> None:
        self._logged_at: dict[str, float] = {}
        self._lock = threading.Lock()

    def kept(self, op: str, write: Callable[[], None], **fields: object) -> bool:
        """Run ``write``; False (and a warning ``op``, now and then) when the store refused it."""
        try:
            write()
        except StoreCannotWrite as exc:
            now = time.monotonic()
            with self._lock:
                last = self._logged_at.get(op)
                if last is not None and now - last < LOG_EVERY_S:
                    return False
                self._logged_at[op] = now
            _log.warning(line(op, **fields, outcome="skipped", reason=exc.detail))
            return False
        return True
