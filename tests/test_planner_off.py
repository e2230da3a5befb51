"""A query planned with a planner way off, in one round trip (store/postgres/planner_off.py), on a real
PostgreSQL: the way is off for the query alone, in autocommit as inside a caller's open transaction."""

from __future__ import annotations

import psycopg
import pytest

from notewell.store.postgres.planner_off import PlannerWay, rows_without

WAYS: list[PlannerWay] = ["enable_seqscan", "enable_bitmapscan"]


def _setting(conn: psycopg.Connection, way: str) -> str:
    row = conn.execute("SELECT current_setting(%s)", (way,)).fetchone()
    assert row is not None
    return str(row[0])


@pytest.mark.parametrize("way", WAYS)
def test_the_way_is_off_for_the_query_alone_in_autocommit(pg_url: str, way: PlannerWay) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = rows_without(conn, way, "SELECT current_setting(%s), %s::int + 1", [way, 41])
        assert rows == [("off", 42)]
        assert _setting(conn, way) == "on"
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE  # nothing left open


@pytest.mark.parametrize("way", WAYS)
def test_inside_an_open_transaction_the_way_is_set_back_and_the_transaction_goes_on(pg_url: str,
                                                                                     way: PlannerWay) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE held (n int)")
        with conn.transaction():
            conn.execute("INSERT INTO held VALUES (7)")
            rows = rows_without(conn, way, "SELECT current_setting(%s), (SELECT n FROM held)", [way])
            assert rows == [("off", 7)]  # the transaction's own uncommitted row is seen
            assert _setting(conn, way) == "on"
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        row = conn.execute("SELECT count(*) FROM held").fetchone()
        assert row is not None and row[0] == 1  # committed by its owner, not by the query


def test_on_a_connection_outside_autocommit_the_way_is_set_back_in_the_transaction_psycopg_opens(
        pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE  # psycopg sends BEGIN first
        assert rows_without(conn, "enable_seqscan", "SELECT current_setting(%s)", ["enable_seqscan"]) == [("off",)]
        assert _setting(conn, "enable_seqscan") == "on"
        conn.rollback()


@pytest.mark.parametrize("value", ["it's", "back\\slash", "%s", "$1", "'; DROP TABLE x; --", "中文 é", "a\nb"])
def test_parameters_are_data(pg_url: str, value: str) -> None:
    """Bound on the client as quoted literals: a value that looks like SQL or a placeholder stays a value."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = rows_without(conn, "enable_seqscan", "SELECT %s::text, %s::text[] COLLATE \"C\"", [value, [value, "x"]])
        assert rows == [(value, [value, "x"])]


def test_a_failed_query_leaves_the_connection_usable_and_the_way_on(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            rows_without(conn, "enable_seqscan", "SELECT 1 / %s", [0])
        assert _setting(conn, "enable_seqscan") == "on"
        assert conn.execute("SELECT 1").fetchone() == (1,)
