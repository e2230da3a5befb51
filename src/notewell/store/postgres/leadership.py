"""A role's lease on PostgreSQL (the documents writer, the job runner): a session advisory lock on a connection
of its own."""

from __future__ import annotations

from contextlib import suppress

import psycopg

from notewell.store.postgres.database import CONNECT_TIMEOUT_S, lock_key

LOCKS = {"watcher": lock_key("notewell:vault-watcher"), "jobs": lock_key("notewell:job-runner")}


class AdvisoryLockLeadership:
    def __init__(self, url: str, role: str = "watcher") -> None:
        self._url = url
        self._role = role
        self._lock = LOCKS[role]
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None
        self._held = False

    def try_acquire(self) -> bool:
        try:
            if self._conn is None or self._conn.closed:
                self._held = False
                self._conn = psycopg.connect(self._url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                                             application_name=f"notewell-{self._role}")
            if self._held:
                self._conn.execute("SELECT 1")  # the lock lives as long as this connection
                return True
            row = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (self._lock,)).fetchone()
            self._held = bool(row and row[0])
        except psycopg.Error:
            self.release()
        return self._held

    def release(self) -> None:
        held, self._held = self._held, False
        if self._conn is not None:
            with suppress(psycopg.Error):
                if held:  # at once: a closed connection's backend lets go of its locks only as it exits
                    self._conn.execute("SELECT pg_advisory_unlock(%s)", (self._lock,))
                self._conn.close()
            self._conn = None
