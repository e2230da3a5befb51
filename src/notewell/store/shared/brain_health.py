"""The loop-health counts in SQL both backends run (records/brain.HealthCounts): sessions closed per day,
knowledge injected and used, rules captured by source, the rules' counts for their stages, open action items,
KEA's funnel per mode.
Action items are left out of every count but their own. ``user_id`` None counts the whole team."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from notewell.records.brain import HealthCounts
from notewell.store.brain_rows import tag_pattern
from notewell.store.shared.dialect import Dialect, Executor, marks
from notewell.store.shared.kea_funnel import funnel_sums

CAPTURE_SOURCES = ("close_capture", "mined", "cross")  # by tag; anything else was taught


def _scope(column_user: str, column_project: str, user_id: str | None,
           brain_projects: Sequence[str] | None) -> tuple[str, list[Any]]:
    where, params = [], []
    if user_id is not None:
        where.append(f"{column_user} = ?")
        params.append(user_id)
    if brain_projects is not None:
        where.append(f"{column_project} IN ({marks(len(brain_projects)) or 'NULL'})")
        params += list(brain_projects)
    return "".join(f" AND {w}" for w in where), params


def _captured(conn: Executor, since: str, user_id: str | None,
              brain_projects: Sequence[str] | None) -> tuple[tuple[str, int], ...]:
    cases = " ".join(f"WHEN m.tags LIKE ? ESCAPE '\\' THEN '{s}'" for s in CAPTURE_SOURCES)
    where, params = _scope("k.owner_user_id", "k.brain_project", user_id, brain_projects)
    rows = conn.execute(
        f"SELECT CASE {cases} ELSE 'taught' END, count(*) FROM brain_knowledge k JOIN memories m ON m.ref = k.ref"
        f" WHERE k.kind <> 'action_item' AND k.created >= ?{where} GROUP BY 1",
        [*(tag_pattern(s) for s in CAPTURE_SOURCES), since, *params]).fetchall()
    return tuple((str(r[0]), int(r[1])) for r in rows)


def health_counts(dialect: Dialect, since: str, user_id: str | None, brain_projects: Sequence[str] | None,
                  assignee_tag: str | None) -> HealthCounts:
    """The counts since ``since`` (ISO) for ``user_id`` in ``brain_projects`` (None: everyone, everywhere);
    open action items tagged ``assignee_tag`` (None: every open one)."""
    with dialect.reading() as conn:
        where, params = _scope("s.user_id", "s.brain_project", user_id, brain_projects)
        closed = conn.execute(f"SELECT substr(s.ended_at, 1, 10), count(*) FROM brain_sessions s WHERE"
                              f" s.ended_at >= ?{where} GROUP BY 1 ORDER BY 1", [since, *params]).fetchall()
        roles = dict(conn.execute(
            "SELECT a.role, count(*) FROM brain_applications a JOIN brain_sessions s ON s.id = a.session_id"
            f" WHERE s.started_at >= ?{where} GROUP BY a.role", [since, *params]).fetchall())
        kwhere, kparams = _scope("k.owner_user_id", "k.brain_project", user_id, brain_projects)
        rules = conn.execute("SELECT k.success_count, k.failure_count, k.confidence FROM brain_knowledge k"
                             f" WHERE k.kind <> 'action_item' AND k.retired_at IS NULL{kwhere}", kparams).fetchall()
        awhere, aparams = _scope("k.owner_user_id", "k.brain_project", None, brain_projects)
        if assignee_tag is not None:
            awhere += " AND m.tags LIKE ? ESCAPE '\\'"
            aparams.append(tag_pattern(assignee_tag))
        fwhere, fparams = _scope("f.user_id", "f.brain_project", user_id, brain_projects)
        funnel = funnel_sums(conn, since[:10], fwhere, fparams)
        items = conn.execute("SELECT count(*) FROM brain_knowledge k JOIN memories m ON m.ref = k.ref"
                             f" WHERE k.kind = 'action_item' AND k.retired_at IS NULL{awhere}", aparams).fetchone()
        return HealthCounts(
            closed_per_day=tuple((str(r[0]), int(r[1])) for r in closed),
            injected=int(roles.get("injected", 0)), used=int(roles.get("used", 0)),
            captured=_captured(conn, since, user_id, brain_projects),
            rules=tuple((int(r[0]), int(r[1]), float(r[2])) for r in rules),
            open_action_items=int(items[0]) if items else 0, funnel=funnel)
