"""What the daily cross-session extraction keeps: how far it has read each person's closed sessions.

``kea_cross_marks`` holds, per person, the close time of the last session a daily run read; a run reads the
sessions closed after it (and at or before the run's own time), and moves the mark in the transaction of the
knowledge it writes (the job's completion), so a run cut off reads the same sessions again.
"""

from __future__ import annotations

from notewell.records.brain import SessionRecord
from notewell.store.brain_rows import SESSION_COLUMNS, session_from_row
from notewell.store.shared.dialect import Dialect
from notewell.store.shared.migrations import Migration

MIGRATIONS: list[Migration] = [
    ("CREATE TABLE kea_cross_marks (user_id {key} PRIMARY KEY, through_at {key} NOT NULL)",),
]

_UNREAD = ("LEFT JOIN kea_cross_marks m ON m.user_id = s.user_id WHERE s.ended_at IS NOT NULL AND s.ended_at <= ?"
           " AND (m.through_at IS NULL OR s.ended_at > m.through_at)")
"""The sessions closed after their owner's mark and at or before the run's time (the one parameter)."""


class SqlKea:
    def __init__(self, dialect: Dialect) -> None:
        self.sql = dialect
        dialect.migrate("kea", dialect.rendered(MIGRATIONS))

    def new_sessions(self, through: str, per_user: int, users_max: int) -> dict[str, tuple[int, list[SessionRecord]]]:
        """Per person (at most ``users_max``, by id): how many sessions they closed after their mark and at or
        before ``through``, and the latest ``per_user`` of them (newest first)."""
        with self.sql.reading() as conn:
            counts = conn.execute(
                f"SELECT s.user_id, count(*) FROM brain_sessions s {_UNREAD} GROUP BY s.user_id ORDER BY s.user_id"
                " LIMIT ?", (through, users_max)).fetchall()
            found: dict[str, tuple[int, list[SessionRecord]]] = {}
            for user_id, n in counts:
                rows = conn.execute(
                    f"SELECT {SESSION_COLUMNS} FROM brain_sessions s {_UNREAD} AND s.user_id = ?"
                    " ORDER BY s.ended_at DESC, s.id LIMIT ?", (through, user_id, per_user)).fetchall()
                found[str(user_id)] = (int(n), [session_from_row(r) for r in rows])
        return found

    def mark(self, user_id: str, through: str) -> None:
        """The person's sessions up to ``through`` are read (in the caller's transaction)."""
        with self.sql.transaction() as conn:
            conn.execute("INSERT INTO kea_cross_marks (user_id, through_at) VALUES (?, ?) ON CONFLICT (user_id)"
                         " DO UPDATE SET through_at = excluded.through_at", (user_id, through))
