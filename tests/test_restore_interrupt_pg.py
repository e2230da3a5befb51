"""Ctrl-C during a PostgreSQL restore whose psql waits on a lock another session holds (a reader's open
transaction), before the restore's COMMIT: a review found notewell held the Ctrl-C until psql had run the whole
script (it never ended while the lock was held), and a kill -9 then left a psql that committed the restore later,
with no one told; and a first fix's SIGKILL of psql left its statement running on the server, the store locked.
Now the Ctrl-C is passed to psql, which cancels its statement, and notewell says nothing was restored; psql dies
with notewell."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from conftest import run_cli
from pg import PgCluster


def _waiting_on_a_lock(admin: psycopg.Connection, db: str, seconds: float = 60.0) -> bool:
    """Whether a backend of ``db`` comes to wait on a lock (a condition, polled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if admin.execute("SELECT 1 FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'",
                         (db,)).fetchone():
            return True
        time.sleep(0.05)
    return False


def _alone(admin: psycopg.Connection, db: str, pid: int, seconds: float = 30.0) -> bool:
    """Whether the backend ``pid`` comes to be the only one of ``db`` (a condition, polled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if admin.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> %s",
                         (db, pid)).fetchone() == (0,):
            return True
        time.sleep(0.05)
    return False


def test_ctrl_c_while_psql_waits_on_a_lock_ends_the_restore_and_leaves_the_store_unlocked(
        pg_cluster: PgCluster, tmp_path: Path) -> None:
    source, target = pg_cluster.create_database(), pg_cluster.create_database()
    assert run_cli("user", "add", "new@example.com", "--role", "member", "--db", pg_cluster.url(source)).exit_code == 0
    backup = tmp_path / "store.backup"
    assert run_cli("backup", str(backup), "--db", pg_cluster.url(source)).exit_code == 0
    assert run_cli("user", "add", "old@example.com", "--role", "member", "--db", pg_cluster.url(target)).exit_code == 0
    reader = psycopg.connect(pg_cluster.url(target))
    reader.execute("SELECT count(*) FROM memories").fetchone()  # its transaction stays open: a lock on memories
    admin = psycopg.connect(pg_cluster.url("postgres"), autocommit=True)
    proc = subprocess.Popen([sys.executable, "-m", "notewell", "restore", str(backup), "--replace", "--db",
                             pg_cluster.url(target)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert _waiting_on_a_lock(admin, target), "the restore's psql never came to wait on the reader's lock"
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: its whole foreground group
        code = proc.wait(timeout=60)
        assert proc.stderr is not None
        said = proc.stderr.read()
        assert code == 130 and "notewell restore: interrupted; nothing was restored" in said, (code, said)
        # a backend whose client has gone ends a moment later (on a busy machine, after the check): but one left
        # running its statement would wait on the reader's lock, still held here, for ever
        assert _alone(admin, target, reader.info.backend_pid), \
            "the restore's backend is still there, its statement running"
        leftover = subprocess.run(["pgrep", "-f", f"psql.*{target}"], capture_output=True, text=True)
        assert leftover.stdout == "", leftover.stdout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.rollback()
        reader.close()
    with psycopg.connect(pg_cluster.url(target)) as conn:  # the old store, whole and readable
        assert conn.execute("SELECT email FROM users ORDER BY email").fetchall() == [("old@example.com",)]
    admin.close()
