"""The last MCP tool each token called (the token pages show it), written beside the calls, not inside them.

A call used to write its token's row before it ran. Agents that share one token (64 sessions of a team's
load) then queued on that row's lock on PostgreSQL: 60 ms a call on average, 3 of every 4 calls, as the
tool changes from call to call. Now a call only notes its tool here; one thread per process writes the
latest tool of each token, so calls never wait for the row, writes that pile up while one is being made
are merged, and the row holds the last call within milliseconds of it (the web install wizard reads it
as its close). A tool already written for the token less than ``SAME_TOOL_INTERVAL`` ago is not written
again. A write never moves ``last_tool_at`` back (servers on one store write the same row).
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from functools import partial

from notewell.access.bookkeeping import Bookkeeping
from notewell.log_lines import line
from notewell.store.base import IdentityRepository
from notewell.timestamps import iso

SAME_TOOL_INTERVAL = timedelta(seconds=60)
_log = logging.getLogger("notewell.access")


class ToolCalls:
    def __init__(self, identity: IdentityRepository) -> None:
        self.identity = identity
        self._written: dict[str, tuple[str, datetime]] = {}  # token id -> the last tool noted for writing
        self._pending: dict[str, tuple[str, str]] = {}  # token id -> (tool, at) not written yet
        self._writing = False  # a writer thread runs
        self._changed = threading.Condition()
        self._books = Bookkeeping()

    def note(self, token_id: str, tool: str, now: datetime) -> None:
        """Note ``tool`` as the token's last call; returns at once."""
        with self._changed:
            written = self._written.get(token_id)
            if written is not None and written[0] == tool and now - written[1] < SAME_TOOL_INTERVAL:
                return
            self._written[token_id] = (tool, now)
            self._pending[token_id] = (tool, iso(now))
            if not self._writing:
                self._writing = True
                threading.Thread(target=self._write, name="notewell-tool-calls", daemon=True).start()

    def _write(self) -> None:
        """Write what is pending until nothing is, then end (a new thread starts with the next note)."""
        while True:
            with self._changed:
                if not self._pending:
                    self._writing = False
                    self._changed.notify_all()
                    return
                batch, self._pending = self._pending, {}
            for token_id, (tool, at) in batch.items():
                try:  # bookkeeping: a store refusing writes skips it (bookkeeping.py), said once a minute
                    self._books.kept("token.last_tool", partial(self.identity.record_tool_call, token_id, tool, at),
                                     token=token_id)
                except Exception as exc:  # the call it records has its answer already
                    _log.warning(line("token.last_tool", token=token_id, error=type(exc).__name__))

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every noted call is written (a closing runtime, a test); False if ``timeout`` passed."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._writing, timeout)
