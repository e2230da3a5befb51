"""Each reader of the audit log reads it through an index, on both backends (issue 27): the table had an index on
``at`` alone, so /admin/audit filtered by user or by action, and a person's export, read every entry. The
statements are the ones the readers run (caught as the store runs them), planned by EXPLAIN QUERY PLAN (SQLite)
and EXPLAIN (PostgreSQL, whose planner scans a table this small whatever its indexes unless told not to):

- ``notewell audit`` (Administration.audit_log): the least id since the time given, off ``audit_log_at``; then
  each page a range of the primary key from there, in its order (no sort).
- /admin/audit (Administration.audit_page) by user: ``audit_log_user`` (user_id, id), newest first, no sort;
  by action, a prefix: a range of ``audit_log_action`` (action by code point, id), not a scan of ``substr``.
- a person's export (store/shared/person.py): ``audit_log_user``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conftest import make_vault
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import Runtime, open_runtime
from notewell.store.shared.audit import AUDIT_COLUMNS
from notewell.store.shared.person import person_rows

ACTIONS = ("user.role", "grant.set", "memory.remember", "project.set")
ENTRIES = 700
ADA = "ada@example.com"


@pytest.fixture
def rt(tmp_path: Path, store_url: str) -> Iterator[Runtime]:
    """A store whose log holds ENTRIES entries a second apart: ten actors and four actions, and every 23rd
    ada's, a token's mint (the only token.* entries: what a filter of the page picks is a few among many)."""
    runtime = open_runtime(str(make_vault(tmp_path, {"alpha/a.md": "# A\n"})), store_url)
    try:
        ada = runtime.administration.add_user(LOCAL_OWNER, ADA, "member", handle="ada")
        for i in range(ENTRIES):
            actor, action = (ada.id, "token.mint") if i % 23 == 0 else (f"user-{i % 10}", ACTIONS[i % len(ACTIONS)])
            runtime.audit.record_system(f"2026-03-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z", actor,
                                        action, f"target-{i}")
        yield runtime
    finally:
        runtime.close()


@contextmanager
def caught(rt: Runtime) -> Iterator[list[tuple[str, list[Any]]]]:
    """The audit store's reads (statement, parameters) while the block runs."""
    asked: list[tuple[str, list[Any]]] = []
    dialect = rt.store.audit.sql  # type: ignore[attr-defined]
    reading = dialect.reading

    class Spy:
        def __init__(self, conn: Any) -> None:
            self.conn = conn

        def execute(self, sql: str, params: Any = ()) -> Any:
            asked.append((sql, list(params)))
            return self.conn.execute(sql, params)

    @contextmanager
    def spied() -> Iterator[Any]:
        with reading() as conn:
            yield Spy(conn)

    dialect.reading = spied
    try:
        yield asked
    finally:
        del dialect.reading


def plan(rt: Runtime, sql: str, params: list[Any]) -> str:
    with rt.store.audit.sql.reading() as conn:  # type: ignore[attr-defined]
        if rt.store.url.startswith("postgres"):
            conn.execute("ANALYZE audit_log")
            conn.execute("SET enable_seqscan = off")
            try:
                return "\n".join(row[0] for row in conn.execute("EXPLAIN " + sql, params).fetchall())
            finally:
                conn.execute("RESET enable_seqscan")
        return "\n".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall())


def test_the_command_lines_walk_starts_off_the_at_index_and_pages_along_the_key(rt: Runtime) -> None:
    since = "2026-03-01T00:05:00Z"
    with caught(rt) as asked:
        entries = list(rt.administration.audit_log(LOCAL_OWNER, since))
    assert [e.target for e in entries if e.target.startswith("target-")] == [f"target-{i}" for i in range(300, ENTRIES)]
    (first, first_params), *pages = asked
    assert "min(id + 0)" in first and len(pages) == 1
    postgres = rt.store.url.startswith("postgres")
    shown = plan(rt, first, first_params)
    assert ("audit_log_at" in shown and "Seq Scan" not in shown) if postgres else \
        "USING COVERING INDEX audit_log_at (at>?)" in shown, shown
    shown = plan(rt, *pages[0])
    assert ("Index Scan using audit_log_pkey" in shown and "Sort" not in shown) if postgres else \
        ("USING INTEGER PRIMARY KEY (rowid>?)" in shown and "TEMP B-TREE" not in shown), shown


@pytest.mark.parametrize("how", ["user", "action", "both"])
def test_the_audit_pages_filters_read_an_index(rt: Runtime, how: str) -> None:
    email = ADA if how in ("user", "both") else ""
    action = "token." if how in ("action", "both") else ""
    with caught(rt) as asked:
        page = rt.administration.audit_page(LOCAL_OWNER, "2026-01-01T00:00:00Z", 20, 5, action=action, email=email)
    assert [e.target for e in page] == [f"target-{i}" for i in range(0, ENTRIES, 23)][::-1][5:25]
    [(sql, params)] = [(sql, params) for sql, params in asked if "FROM audit_log" in sql]
    shown = plan(rt, sql, params)
    index = "audit_log_user" if email else "audit_log_action"
    if rt.store.url.startswith("postgres"):
        assert index in shown and "Seq Scan" not in shown, shown
    else:
        assert (f"USING INDEX {index} (user_id=?)" if email else
                f"USING INDEX {index} (action>? AND action<?)") in shown, shown


def test_a_persons_export_reads_their_entries_off_the_user_index(rt: Runtime) -> None:
    shown = plan(rt, f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE {person_rows('audit_log')} ORDER BY id",
                 ["user-3"])
    if rt.store.url.startswith("postgres"):
        assert "audit_log_user" in shown and "Seq Scan" not in shown, shown
    else:
        assert "USING INDEX audit_log_user (user_id=?)" in shown and "TEMP B-TREE" not in shown, shown
