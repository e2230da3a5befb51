"""KEA's funnel in SQL both backends run: each run's counts added to its person's, brain project's, day's and
mode's row (brain_kea_funnel), in the caller's transaction (the job's completion: a failed or retried run adds
nothing, or once), and the sums since a day for the loop's health (store/shared/brain_health.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from notewell.records.brain import FunnelCount
from notewell.store.shared.dialect import Dialect, Executor, marks

_SUMS = ("runs", "submitted", "llm_findings", "filter_passed", "persisted")


class FunnelRows:
    dialect: Dialect

    def count_funnel(self, user_id: str, brain_project: str, day: str, mode: str, counts: FunnelCount) -> None:
        added = ", ".join(f"{c} = brain_kea_funnel.{c} + excluded.{c}" for c in _SUMS)
        with self.dialect.transaction() as conn:
            conn.execute(
                f"INSERT INTO brain_kea_funnel (user_id, brain_project, day, mode, {', '.join(_SUMS)}) VALUES"
                f" ({marks(9)}) ON CONFLICT (user_id, brain_project, day, mode) DO UPDATE SET {added}",
                (user_id, brain_project, day, mode, counts.runs, counts.submitted, counts.findings, counts.passed,
                 counts.persisted))


def funnel_sums(conn: Executor, since_day: str, where: str,
                params: Sequence[Any]) -> tuple[tuple[str, FunnelCount], ...]:
    """Per mode, the funnel summed over the days from ``since_day`` (``where``: the scope's conditions on the
    row ``f``, each starting with AND)."""
    rows = conn.execute(
        f"SELECT f.mode, {', '.join(f'sum(f.{c})' for c in _SUMS)} FROM brain_kea_funnel f WHERE f.day >= ?{where}"
        " GROUP BY f.mode ORDER BY f.mode", [since_day, *params]).fetchall()
    return tuple((str(r[0]), FunnelCount(submitted=int(r[2]), findings=int(r[3]), passed=int(r[4]),
                                         persisted=int(r[5]), runs=int(r[1]))) for r in rows)
