"""Regions written in bulk on PostgreSQL: rows of several documents held back, then sent by one COPY.

A first build wrote each document's regions with its own INSERTs and waited for the server each time
(about 8 round trips a document). The rows of new and changed regions wait here instead and go in one binary
COPY (``flush``) when enough are held, before anything reads the transaction's connection (see
PostgresDatabase.hold_writes) and before the writer's commit, so nothing reads around them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import psycopg

RegionRow = tuple[int, int, bytes, str, list[str]]  # id, first_line, body, words, grams

_COPY = "COPY document_regions (id, first_line, body, words, grams) FROM STDIN (FORMAT BINARY)"
_TYPES = ["int8", "int4", "bytea", "text", "text[]"]
HELD_BYTES = 8 << 20  # the compressed bytes held before a COPY: few round trips, bounded memory
HELD_ROWS = 4096


def copy_regions(conn: psycopg.Connection, rows: Sequence[RegionRow]) -> None:
    """The rows into document_regions by one binary COPY (none: no round trip)."""
    if not rows:
        return
    with conn.cursor() as cur, cur.copy(_COPY) as copy:
        copy.set_types(_TYPES)
        for row in rows:
            copy.write_row(row)


class HeldRegions:
    """Rows for document_regions held back until ``flush`` (or until enough are held). ``on_much``, once, when
    the rows added come to as much as a COPY holds (whatever reads flushed meanwhile): a writer with that
    much to write may first choose where it goes (region_load.py)."""

    def __init__(self, conn: psycopg.Connection, on_much: Callable[[], None] | None = None) -> None:
        self.conn = conn
        self.on_much = on_much
        self._rows: list[RegionRow] = []
        self._bytes = 0
        self._added = (0, 0)  # rows and bytes added in all

    def add(self, rows: Iterable[RegionRow]) -> None:
        count, size = len(self._rows), self._bytes
        for row in rows:
            self._rows.append(row)
            self._bytes += len(row[2]) + len(row[3])
        self._added = (self._added[0] + len(self._rows) - count, self._added[1] + self._bytes - size)
        if self.on_much is not None and (self._added[1] >= HELD_BYTES or self._added[0] >= HELD_ROWS):
            on_much, self.on_much = self.on_much, None
            on_much()
        if self._bytes >= HELD_BYTES or len(self._rows) >= HELD_ROWS:
            self.flush()

    def flush(self) -> None:
        if not self._rows:
            return
        rows, self._rows, self._bytes = self._rows, [], 0
        copy_regions(self.conn, rows)
