"""One writer per note across servers sharing a PostgreSQL database: a session advisory lock per note.

Each hold opens a connection of its own (never one of the pool: the write it guards needs the pool's
connections for its journal row and its index sync, and sixteen writers holding sixteen pool connections
while waiting for more would wait forever). The database server frees the lock when the connection ends,
so a server that dies mid-write holds nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from notewell.errors import Unavailable
from notewell.store.postgres.database import CONNECT_TIMEOUT_S
from notewell.store.postgres.url_secrets import reason, redact


def note_lock_key(path: str) -> int:
    """A signed 64-bit advisory lock key for the note at ``path`` (vault-relative)."""
    digest = hashlib.sha256(f"notewell:note:{path}".encode("utf-8", errors="surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class AdvisoryNoteLease:
    def __init__(self, url: str) -> None:
        self._url = url

    @contextmanager
    def holding(self, path: str) -> Iterator[None]:
        try:
            conn = psycopg.connect(self._url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                                   application_name="notewell-note-writer")
        except psycopg.OperationalError as exc:  # its text names hosts as libpq read the URL: a mistyped
            raise Unavailable(  # password's pieces (url_secrets.py); raised bare, the doors logged its traceback
                f"the database at {redact(self._url)} gave no connection for the note's lock "
                f"({reason(exc, self._url)}); nothing was written: retry") from None
        with conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (note_lock_key(path),))
            yield
