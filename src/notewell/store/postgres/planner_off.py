"""A query planned with one of the planner's ways turned off, in one round trip.

Some candidate queries must not let the planner choose a way it misjudges (a scan computing
``show_trgm`` on every region, or the trigram index where each document's own regions are cheaper).
``SET LOCAL`` inside an explicit transaction did that in five round trips (BEGIN, SET, the query, SET
back, COMMIT): 0.36 ms a query on a local socket against 0.08 ms for the query alone. Sent as one
simple-protocol string, ``SET LOCAL ...; query`` runs in PostgreSQL's implicit transaction block, so
the setting ends with the string; in a caller's open transaction (or on a connection that is not in
autocommit mode, where psycopg opens one first) it is set back to on at the end instead, and a failing
query aborts that transaction (no savepoint: the pool's connections are in autocommit, and no caller
runs a search inside a writer's transaction today).
The parameters are bound on the client (psycopg's ClientCursor quotes them as literals, so every plan
still sees its own values); the rows come back as text, fit for ids, names and paths, not for bytea.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import psycopg
from psycopg.pq import TransactionStatus

PlannerWay = Literal["enable_seqscan", "enable_bitmapscan"]


def rows_without(conn: psycopg.Connection, way: PlannerWay, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` (one SELECT, ``%s`` placeholders) planned with ``way`` off."""
    in_transaction = not conn.autocommit or conn.info.transaction_status != TransactionStatus.IDLE
    back = f"; SET LOCAL {way} = on" if in_transaction else ""
    with psycopg.ClientCursor(conn) as cur:
        cur.execute(f"SET LOCAL {way} = off; {sql}{back}", params)
        cur.nextset()
        return cur.fetchall()
