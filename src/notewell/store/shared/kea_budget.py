"""What KEA's language model has spent each day: its calls and tokens, against the daily budget.

``kea_budget`` holds one row per UTC day (the day comes from the caller's clock). A call is reserved before it
is made, in one statement that counts it only while both the calls and the tokens are under their budgets, so
two runners never overspend together; its tokens are added once the answer came. Rows older than
``KEEP_DAYS`` go as a new day's row is made.
"""

from __future__ import annotations

from datetime import date, timedelta

from notewell.store.shared.dialect import Dialect
from notewell.store.shared.migrations import Migration

KEEP_DAYS = 31
MIGRATIONS: list[Migration] = [
    ("CREATE TABLE kea_budget (day {key} PRIMARY KEY, calls {int64} NOT NULL, tokens {int64} NOT NULL)",),
]


class SqlKeaBudget:
    def __init__(self, dialect: Dialect) -> None:
        self.sql = dialect
        dialect.migrate("kea_budget", dialect.rendered(MIGRATIONS))

    def reserve(self, day: date, calls_max: int, tokens_max: int) -> bool:
        """Count one call on ``day`` if the day's calls and tokens are both under their budgets; whether it was."""
        with self.sql.transaction() as conn:
            conn.execute("INSERT INTO kea_budget (day, calls, tokens) VALUES (?, 0, 0) ON CONFLICT (day) DO NOTHING",
                         (day.isoformat(),))
            conn.execute("DELETE FROM kea_budget WHERE day < ?", ((day - timedelta(days=KEEP_DAYS)).isoformat(),))
            counted = conn.execute("UPDATE kea_budget SET calls = calls + 1 WHERE day = ? AND calls < ? AND tokens < ?",
                                   (day.isoformat(), calls_max, tokens_max))
            return counted.rowcount == 1

    def spend(self, day: date, tokens: int) -> None:
        """Add the tokens of a call reserved on ``day``."""
        with self.sql.transaction() as conn:
            conn.execute("UPDATE kea_budget SET tokens = tokens + ? WHERE day = ?", (max(0, tokens), day.isoformat()))

    def used(self, day: date) -> tuple[int, int]:
        """The calls and tokens spent on ``day``."""
        with self.sql.reading() as conn:
            row = conn.execute("SELECT calls, tokens FROM kea_budget WHERE day = ?", (day.isoformat(),)).fetchone()
        return (int(row[0]), int(row[1])) if row is not None else (0, 0)
