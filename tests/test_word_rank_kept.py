"""A PostgreSQL store keeps each phrase's count of rows across writes (word_rank.Ranker, word_totals.py's log of
changes): a later search brings a kept count to its own snapshot by the changes logged since, instead of counting
the phrase's rows again, and ranks as SQLite does after the same writes: writes of another server, a write in
flight while a count was taken, a count older than the log's start (trimmed, or started anew by a restore)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from conftest import captured_lines, run_cli
from notewell.store import Store, open_store
from notewell.store.postgres import word_rank, word_totals
from pg import PG_BIN, PgCluster, _free_port
from test_word_rank import NOW, _answers, _memory, _queries, _same


@pytest.fixture()
def asked(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The phrases each search asked the database to count (the rest were kept)."""
    seen: list[list[str]] = []
    window = word_rank.Ranker._window

    def spied(self: word_rank.Ranker, column: str, asking: Sequence[str], *rest: Any) -> Any:
        seen.append(list(asking))
        return window(self, column, asking, *rest)
    monkeypatch.setattr(word_rank.Ranker, "_window", spied)
    return seen


def _filled(*stores: Store) -> None:
    """The same 60 memories in each store."""
    for store in stores:
        rng = random.Random(11)
        for i in range(60):
            store.memories.add(_memory(i, rng, "apollo"))


@pytest.fixture()
def stores(pg_url: str, tmp_path: Path) -> Iterator[tuple[Store, Store, Store]]:
    """SQLite, a PostgreSQL store that searches and another on the same database, each with the same 60
    memories; the searching one has counted the queries' phrases."""
    lite, served, other = open_store(str(tmp_path / "index.db")), open_store(pg_url), open_store(pg_url)
    try:
        _filled(lite, served)
        yield lite, served, other
    finally:
        for store in (lite, served, other):
            store.close()


QUERIES = _queries(random.Random(5))[:20]


def _writes(*on: Store, first: int = 60, count: int = 20) -> None:
    for store in on:
        rng = random.Random(first)
        for i in range(first, first + count):
            store.memories.add(_memory(i, rng, "apollo"))
        store.memories.forget("mem_0004", "u1", "test", NOW)


def test_another_servers_writes_are_added_to_the_kept_counts_without_counting_again(
        stores: tuple[Store, Store, Store], asked: list[list[str]]) -> None:
    lite, served, other = stores
    _same(_answers(lite, QUERIES), _answers(served, QUERIES), QUERIES)
    assert any(asked)  # counted once
    asked.clear()
    _writes(lite, other)
    _same(_answers(lite, QUERIES), _answers(served, QUERIES), QUERIES)
    assert asked and not any(asked)  # every count brought up to date from the log


def test_a_write_in_flight_while_a_count_is_kept_is_added_once_it_commits(
        stores: tuple[Store, Store, Store], pg_url: str) -> None:
    lite, served, _ = stores
    _answers(served, QUERIES)
    with psycopg.connect(pg_url) as conn:  # a transaction: the forget commits below
        conn.execute("UPDATE memories SET deleted_at = %s, deleted_by = 'u1', delete_reason = 'test'"
                     " WHERE ref IN ('mem_0004', 'mem_0007')", (NOW,))
        _answers(served, QUERIES)  # the counts kept again, in a snapshot where the forget is in flight
        conn.commit()
    for ref in ("mem_0004", "mem_0007"):
        lite.memories.forget(ref, "u1", "test", NOW)
    _same(_answers(lite, QUERIES), _answers(served, QUERIES), QUERIES)


def test_a_count_older_than_the_logs_start_is_counted_again(
        stores: tuple[Store, Store, Store], pg_url: str, asked: list[list[str]]) -> None:
    lite, served, other = stores
    _answers(served, QUERIES)
    _writes(lite, other)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as a load or a restore does: the log starts after it
        conn.execute(word_totals.RESTORED)
    asked.clear()
    _same(_answers(lite, QUERIES), _answers(served, QUERIES), QUERIES)
    assert any(asked)


def test_the_trigger_trims_its_log_and_the_counts_it_leaves_behind_are_counted_again(
        stores: tuple[Store, Store, Store], pg_url: str) -> None:
    lite, served, other = stores
    _answers(served, QUERIES)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for _ in range(word_totals.KEPT_XIDS + 10):  # transaction ids pass: the 60 memories' changes are old
            conn.execute("SELECT pg_current_xact_id()")
        conn.execute("UPDATE word_totals SET changes = %s", (word_totals.TRIM_EVERY - 1,))  # the next write trims
        before = conn.execute("SELECT since::text::bigint FROM word_changes_kept WHERE word_index = 'memories'"
                              ).fetchone()
        _writes(lite, other, count=3)
        since = conn.execute("SELECT since::text::bigint FROM word_changes_kept WHERE word_index = 'memories'"
                             ).fetchone()
        left = conn.execute("SELECT count(*), count(*) FILTER (WHERE xid::text::bigint < %s) FROM word_changes"
                            " WHERE word_index = 'memories'", (since[0] if since else 0,)).fetchone()
    assert before and since and since[0] > before[0]
    assert left == (4, 0)  # the 3 memories and the forget: the 60 older ones trimmed
    _same(_answers(lite, QUERIES), _answers(served, QUERIES), QUERIES)


def test_a_restore_starts_the_log_anew(pg_url: str, tmp_path: Path) -> None:
    """A backup's log rows (and the start it names) are of the transaction ids of the cluster it was made on: a
    restore drops them and starts the log after its own transaction."""
    vault = tmp_path / "vault"
    vault.mkdir()
    store = open_store(pg_url)
    try:
        _writes(store, count=5)
        result = run_cli("backup", str(tmp_path / "store.backup"), "--db", pg_url, "--vault", str(vault))
        assert result.exit_code == 0, result.output
        with psycopg.connect(pg_url, autocommit=True) as conn:
            before = conn.execute("SELECT pg_current_xact_id()::text::bigint").fetchone()
        result = run_cli("restore", str(tmp_path / "store.backup"), "--db", pg_url, "--vault", str(vault),
                         "--replace")
        assert result.exit_code == 0, result.output
        with psycopg.connect(pg_url, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM word_changes").fetchone() == (0,)
            since = conn.execute("SELECT min(since::text::bigint) FROM word_changes_kept").fetchone()
        assert before and since and since[0] > before[0]
    finally:
        store.close()


@pytest.fixture()
def standby(pg_cluster: PgCluster, plain_pg_url: str) -> Iterator[tuple[str, Callable[[], None]]]:
    """A hot standby of the session cluster, streaming from it: the URL of ``pg_url``'s database there, and what
    waits until it has replayed everything the cluster has written."""
    root = Path(tempfile.mkdtemp(prefix="nwstandby-"))
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_postgres:
        shutil.chown(root, "postgres", "postgres")
    port = _free_port()

    def run(*args: str) -> None:
        subprocess.run([*as_postgres, str(PG_BIN / args[0]), *args[1:]], check=True, capture_output=True,
                       timeout=120, cwd=root)
    run("pg_basebackup", "--dbname", f"host={pg_cluster.root} port={pg_cluster.port} user=postgres",
        "-D", str(root / "data"), "--write-recovery-conf", "--wal-method=stream", "--checkpoint=fast", "--no-sync")
    run("pg_ctl", "-D", str(root / "data"), "-l", str(root / "server.log"), "-w", "-t", "60",
        "-o", f"-p {port} -k {root}", "start")
    url = f"postgresql://postgres@/{conninfo_to_dict(plain_pg_url)['dbname']}?host={root}&port={port}"

    def replayed() -> None:
        with pg_cluster.admin() as conn:
            written = conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()
        with psycopg.connect(url, autocommit=True) as conn:
            for _ in range(600):
                if conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", written).fetchone() == (True,):
                    return
                conn.execute("SELECT pg_sleep(0.05)")
        raise AssertionError("the standby did not replay the cluster's writes in 30 s")
    try:
        yield url, replayed
    finally:
        run("pg_ctl", "-D", str(root / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def test_a_server_reading_a_standby_adds_a_write_in_flight_once_it_commits(
        plain_pg_url: str, tmp_path: Path, standby: tuple[str, Callable[[], None]]) -> None:
    """A standby's snapshot (pg_current_snapshot()) lists no transaction in flight: it says a write in flight is
    seen where its rows are not. A count kept in it must not be brought on by what that snapshot says it saw."""
    url, replayed = standby
    lite, primary = open_store(str(tmp_path / "index.db")), open_store(plain_pg_url)
    try:
        _filled(lite, primary)
        replayed()
        reader = open_store(url)
        try:
            _answers(reader, QUERIES)
            with psycopg.connect(plain_pg_url) as conn:  # a transaction: the forget commits below
                conn.execute("UPDATE memories SET deleted_at = %s, deleted_by = 'u1', delete_reason = 'test'"
                             " WHERE ref IN ('mem_0004', 'mem_0007')", (NOW,))
                for store in (lite, primary):  # a later transaction commits: the standby's snapshots pass the forget
                    store.memories.add(_memory(60, random.Random(60), "apollo"))
                replayed()
                _answers(reader, QUERIES)  # counted on the standby while the forget is in flight
                conn.commit()
            for ref in ("mem_0004", "mem_0007"):
                lite.memories.forget(ref, "u1", "test", NOW)
            replayed()
            _same(_answers(lite, QUERIES), _answers(reader, QUERIES), QUERIES)
        finally:
            reader.close()
    finally:
        lite.close()
        primary.close()


@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
def test_a_dump_restored_by_hand_into_a_cluster_behind_its_own_starts_the_log_anew(
        pg_cluster: PgCluster, pg_url: str, tmp_path: Path, read_only: bool) -> None:
    """A dump restored with pg_restore (docs/operations.md's drill) carries the log and its start, in the
    transaction ids of the cluster it was made on. Restored into one that has not counted as far, its rows would
    read as writes this cluster makes later, and be added to the counts kept then: the store's first open starts
    the log anew. A database that refuses writes (default_transaction_read_only) cannot: the store opens all the
    same, says so, and keeps no count."""
    ahead = 300  # the transaction ids the dump's cluster had counted past this one's
    vault = tmp_path / "vault"
    vault.mkdir()
    lite, source = open_store(str(tmp_path / "index.db")), open_store(pg_url)
    try:
        _filled(lite, source)
    finally:
        source.close()
    result = run_cli("backup", str(tmp_path / "store.backup"), "--db", pg_url, "--vault", str(vault))
    assert result.exit_code == 0, result.output
    target = pg_cluster.url(pg_cluster.create_database())
    subprocess.run([str(PG_BIN / "pg_restore"), "--no-owner", "--dbname", target, str(tmp_path / "store.backup")],
                   check=True, capture_output=True, timeout=120)
    with psycopg.connect(target, autocommit=True) as conn:  # as a cluster ahead of this one numbered them
        conn.execute("UPDATE word_changes SET xid = (xid::text::bigint + %s)::text::xid8", (ahead,))
        conn.execute("UPDATE word_changes_kept SET since = (since::text::bigint + %s)::text::xid8", (ahead,))

    def passed(xid: int) -> None:
        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute("SET default_transaction_read_only = off")  # another role's writes, say
            while int(conn.execute("SELECT pg_current_xact_id()::text::bigint").fetchone()[0]) < xid:
                pass

    with psycopg.connect(target, autocommit=True) as conn:
        logged = conn.execute("SELECT min(xid::text::bigint), max(xid::text::bigint) FROM word_changes").fetchone()
        start = conn.execute("SELECT max(since::text::bigint) FROM word_changes_kept").fetchone()
        assert logged[0] is not None and conn.execute(word_totals.FOREIGN_LOG).fetchone() == (True,)
        if read_only:
            conn.execute(sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on").format(
                sql.Identifier(conninfo_to_dict(target)["dbname"])))
    with captured_lines("notewell.store") as lines:
        served = open_store(target)
    assert any("cannot be started anew" in line for line in lines) is read_only, lines
    try:
        if start and start[0]:
            passed(int(start[0]))
        _answers(served, QUERIES)  # kept past the dump's start, before most of its rows' ids
        if logged and logged[1]:
            passed(int(logged[1]) + 1)
        _same(_answers(lite, QUERIES), _answers(served, QUERIES), QUERIES)
    finally:
        served.close()
        lite.close()
        pg_cluster.drop_database(conninfo_to_dict(target)["dbname"])


class _Undone(Exception):
    pass


def test_a_search_inside_a_write_transaction_keeps_no_count_its_end_would_belie(
        stores: tuple[Store, Store, Store]) -> None:
    """A snapshot taken inside a transaction that writes says that transaction is seen, whatever it writes after
    and whether it commits: a count kept in it would hold a write rolled back, and miss one made after it."""
    lite, served, _ = stores
    with pytest.raises(_Undone), served.together():
        served.memories.forget("mem_0004", "u1", "test", NOW)
        _answers(served, QUERIES)  # sees its own forget, which is then rolled back
        raise _Undone
    with served.together():
        served.memories.forget("mem_0007", "u1", "test", NOW)
        _answers(served, QUERIES)
        served.memories.forget("mem_0009", "u1", "test", NOW)  # after the search, committed with it
    for ref in ("mem_0007", "mem_0009"):
        lite.memories.forget(ref, "u1", "test", NOW)
    for store in (lite, served):  # a later write of another transaction
        store.memories.add(_memory(60, random.Random(60), "apollo"))
    _same(_answers(lite, QUERIES), _answers(served, QUERIES), QUERIES)
