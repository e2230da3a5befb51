"""notewell backup and restore through the command line, taken while a writer keeps writing (docs/operations.md).

A writer thread keeps a memory after memory, numbered in order, each acknowledged once its transaction has
committed. A backup taken meanwhile holds a prefix of them: every write acknowledged before the backup began,
none half-written, and the restored store's word index agrees with its rows.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import make_vault, run_cli
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from notewell.store.sqlite import database
from notewell.store.sqlite.database import SqliteDatabase
from pg import BACKENDS, PG_BIN, PgCluster

WRITES_AT_LEAST = 40  # the writer has kept this many before the backup starts, and goes on meanwhile


class Writer(threading.Thread):
    """Keeps numbered memories in project apollo until stopped; ``acknowledged`` counts the committed ones."""

    def __init__(self, vault: Path, db: str) -> None:
        super().__init__(daemon=True)
        self.rt = open_runtime(str(vault), db)
        self.rt.administration.add_project(LOCAL_OWNER, "apollo")
        self.acknowledged = 0
        self.stop = threading.Event()
        self.started_enough = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            db = getattr(self.rt.store, "db", None)
            if isinstance(db, SqliteDatabase):  # no checkpoint meanwhile: the writes are in the WAL alone, which
                db.conn.execute("PRAGMA wal_autocheckpoint=0")  # a copy of the database file would miss
            while not self.stop.is_set():
                n = self.acknowledged + 1
                self.rt.memory.remember(LOCAL_OWNER, f"writer note n{n}", project="apollo", path=f"n{n}")
                self.acknowledged = n
                if n >= WRITES_AT_LEAST:
                    self.started_enough.set()
        except BaseException as exc:  # reported by the test
            self.failure = exc
            self.started_enough.set()
        finally:
            self.rt.close()


@pytest.fixture(params=BACKENDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(the store written to, a new store to restore into) on the backend named."""
    if request.param == "postgres":
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        yield cluster.url(cluster.create_database()), cluster.url(cluster.create_database())
        return
    yield str(tmp_path / "index.db"), str(tmp_path / "restored.db")


def test_a_backup_taken_while_writing_restores_every_acknowledged_write(stores: tuple[str, str],
                                                                       tmp_path: Path) -> None:
    db, restored = stores
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    writer = Writer(vault, db)
    writer.start()
    assert writer.started_enough.wait(60) and writer.failure is None, writer.failure
    before = writer.acknowledged
    result = run_cli("backup", str(tmp_path / "store.backup"), "--db", db, "--vault", str(vault), "--json")
    after = writer.acknowledged
    writer.stop.set()
    writer.join(30)
    assert result.exit_code == 0, result.output
    assert writer.failure is None, writer.failure
    taken = json.loads(result.stdout)
    assert taken["path"] == str(tmp_path / "store.backup") and taken["bytes"] > 0

    result = run_cli("restore", str(tmp_path / "store.backup"), "--db", restored, "--vault", str(vault))
    assert result.exit_code == 0, result.output
    rt = open_runtime(str(vault), restored)
    try:
        kept = [m.content for m in rt.memory.export(LOCAL_OWNER)]
        k = len(kept)
        assert before <= k <= after
        assert kept == [f"writer note n{i}" for i in range(1, k + 1)]  # a prefix: nothing half-written, no gap
        for n in (1, k):
            hits = rt.memory.search_memory(LOCAL_OWNER, f"n{n}").results
            assert [h.memory.content for h in hits] == [f"writer note n{n}"]
    finally:
        rt.close()


def test_restore_refuses_a_store_that_holds_rows_and_a_file_that_is_not_a_backup(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    db = str(tmp_path / "index.db")
    assert run_cli("user", "add", "dana@example.org", "--role", "member", "--db", db, "--vault", str(vault)
                   ).exit_code == 0
    assert run_cli("backup", str(tmp_path / "b.db"), "--db", db, "--vault", str(vault)).exit_code == 0
    result = run_cli("backup", str(tmp_path / "b.db"), "--db", db, "--vault", str(vault))
    assert result.exit_code == 1 and "exists; name a new file" in result.output
    result = run_cli("restore", str(tmp_path / "b.db"), "--db", db, "--vault", str(vault))
    assert result.exit_code == 1
    assert "the store is not empty (audit_log (1), users (1), projects (1)); stop its servers" in result.output
    assert run_cli("user", "add", "erin@example.org", "--role", "member", "--db", db, "--vault", str(vault)
                   ).exit_code == 0
    result = run_cli("restore", str(tmp_path / "b.db"), "--db", db, "--vault", str(vault), "--replace")
    assert result.exit_code == 0, result.output
    listed = run_cli("user", "list", "--db", db, "--vault", str(vault), "--json").output
    assert "dana@example.org" in listed and "erin@example.org" not in listed  # the store as it was backed up
    (tmp_path / "notes.txt").write_text("not a database at all, just some text that is long enough" * 20)
    result = run_cli("restore", str(tmp_path / "notes.txt"), "--db", str(tmp_path / "new.db"), "--vault", str(vault))
    assert result.exit_code == 1 and "is not a SQLite database" in result.output
    assert not (tmp_path / "new.db").exists()  # no empty store is left where the restore was to be
    assert not list(tmp_path.glob("new.db*")), list(tmp_path.glob("new.db*"))  # nor its lease files (a probe)
    result = run_cli("restore", str(tmp_path / "gone.db"), "--db", str(tmp_path / "left.db"), "--vault", str(vault))
    assert result.exit_code == 1 and f"FILE: {tmp_path / 'gone.db'} is not there" in result.output, result.output
    assert not (tmp_path / "left.db").exists()
    # a probe: an export given to restore was "not a SQLite database", a missing file "not a backup file"
    for export in (tmp_path / "x.tar", tmp_path / "x-folder"):
        assert run_cli("export", str(export), "--db", db, "--vault", str(vault)).exit_code == 0
        result = run_cli("restore", str(export), "--db", str(tmp_path / "left.db"), "--vault", str(vault))
        assert result.exit_code == 1 and f"is an export, not a backup; load it with `notewell import {export}`" in \
            " ".join(result.output.split()), result.output
        assert not (tmp_path / "left.db").exists()
    result = run_cli("backup", str(tmp_path / "no" / "such" / "b.db"), "--db", db, "--vault", str(vault))
    assert result.exit_code == 1 and not (tmp_path / "no").exists()  # a typo in a folder is never made
    result = run_cli("export", str(tmp_path / "no" / "such"), "--db", db, "--vault", str(vault))
    assert result.exit_code == 1 and not (tmp_path / "no").exists()
    result = run_cli("import", str(tmp_path / "no-export"), "--db", str(tmp_path / "empty.db"), "--vault", str(vault))
    assert result.exit_code == 1 and "FOLDER: " in result.output and not (tmp_path / "empty.db").exists()


def _page_size(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)  # read only: the backup file stays as it was written
    try:
        size: int = conn.execute("PRAGMA page_size").fetchone()[0]
        return size
    finally:
        conn.close()


@pytest.mark.parametrize("older", ["backup", "store"])
def test_a_backup_and_a_store_of_different_page_sizes_restore(older: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A store made now has 16 KB pages, one an older version made 4 KB pages; SQLite's backup cannot change a
    WAL database's page size, so restore rewrites a backup of the other size to the store's first."""
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    source, target = tmp_path / "index.db", tmp_path / "restored.db"
    with monkeypatch.context() as old:
        old.setattr(database, "PAGE_BYTES", 4096)
        made_old = source if older == "backup" else target
        assert run_cli("user", "add", "dana@example.org", "--role", "member", "--db", str(made_old), "--vault",
                       str(vault)).exit_code == 0
    if older == "store":
        assert run_cli("user", "deactivate", "dana@example.org", "--db", str(target), "--vault", str(vault)
                       ).exit_code == 0
        assert run_cli("user", "add", "erin@example.org", "--role", "member", "--db", str(source), "--vault",
                       str(vault)).exit_code == 0
    expected = "dana@example.org" if older == "backup" else "erin@example.org"
    assert run_cli("backup", str(tmp_path / "b.db"), "--db", str(source), "--vault", str(vault)).exit_code == 0
    (tmp_path / "restored.db.restore").write_text("left by a restore killed midway")  # replaced, then removed
    result = run_cli("restore", str(tmp_path / "b.db"), "--db", str(target), "--vault", str(vault), "--replace")
    assert result.exit_code == 0, result.output
    assert expected in run_cli("user", "list", "--db", str(target), "--vault", str(vault), "--json").output
    assert (_page_size(target), _page_size(tmp_path / "b.db")) == ((16_384, 4096) if older == "backup" else
                                                                   (4096, 16_384))
    assert not list(tmp_path.glob("*.restore*"))  # the scratch copy is gone


def test_doctor_reports_the_last_backup(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    db = str(tmp_path / "index.db")
    assert run_cli("index", "--db", db, "--vault", str(vault)).exit_code == 0

    def backup_check() -> dict[str, str]:
        result = run_cli("doctor", "--db", db, "--vault", str(vault), "--json")
        return next(c for c in json.loads(result.stdout) if c["check"] == "backup")  # type: ignore[no-any-return]

    assert backup_check()["status"] == "warn" and "no backup" in backup_check()["found"]
    assert run_cli("backup", str(tmp_path / "b.db"), "--db", db, "--vault", str(vault)).exit_code == 0
    check = backup_check()
    assert check["status"] == "ok" and check["found"].startswith("last backup ")
    assert str(tmp_path / "b.db") in check["found"]
    (tmp_path / "b.db").unlink()  # reported as current though gone
    gone = backup_check()
    assert gone["status"] == "warn" and "no such file is here" in gone["found"], gone


def test_postgres_restores_as_the_databases_own_role_with_the_extensions_a_superuser_made(
        pg_cluster: PgCluster, tmp_path: Path) -> None:
    """docs/operations.md: a superuser creates pg_trgm and vector, the application's role owns the database.
    pg_restore --clean dropped and made the extensions again, which only their owner may: "must be owner of
    extension vector", whether into a new database or with --replace."""
    import psycopg

    from pg import TEMPLATE_DB

    role = "nwapp_" + tmp_path.name[-6:].replace("-", "_").lower()
    with pg_cluster.admin() as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        names = ["nw_" + role + suffix for suffix in ("_a", "_b")]
        for name in names:
            conn.execute(f"CREATE DATABASE {name} OWNER {role} TEMPLATE {TEMPLATE_DB}")  # extensions: postgres's
    source, target = (pg_cluster.url(name).replace("postgres@", f"{role}@", 1) for name in names)
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    rt = open_runtime(str(vault), source)
    try:
        rt.administration.add_project(LOCAL_OWNER, "apollo")
        rt.memory.remember(LOCAL_OWNER, "kept through a restore as the app role", project="apollo", path="p")
    finally:
        rt.close()
    backup = tmp_path / "store.dump"
    assert run_cli("backup", str(backup), "--db", source, "--vault", str(vault)).exit_code == 0
    for into, flags in ((target, []), (source, ["--replace"])):
        result = run_cli("restore", str(backup), "--db", into, "--vault", str(vault), *flags)
        assert result.exit_code == 0, result.output
        rt = open_runtime(str(vault), into)
        try:
            assert [m.content for m in rt.memory.export(LOCAL_OWNER)] == ["kept through a restore as the app role"]
        finally:
            rt.close()
    with psycopg.connect(target) as conn:  # the tables are the role's, the extensions still the superuser's
        owners = {row[0] for row in conn.execute("SELECT tableowner FROM pg_tables WHERE schemaname = 'public'")}
        assert owners == {role}
        assert conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'").fetchone() == (1,)


def test_restore_is_refused_while_a_server_answers_and_forgets_the_sources_servers(tmp_path: Path) -> None:
    """A restore --replace under a running server lost what it acknowledged meanwhile, without a word; a restored
    store kept the source's running servers, so doctor and sign-in links pointed at another store's server."""
    import http.server

    from notewell.services.servers import local_url

    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    db, other = str(tmp_path / "index.db"), str(tmp_path / "other.db")
    server_id = "0123456789abcdef"

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"status": "ok", "serverId": server_id}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            return None

    health = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=health.serve_forever, daemon=True).start()
    try:
        rt = open_runtime(str(vault), db)
        try:
            rt.servers.announce(server_id, local_url("127.0.0.1", health.server_address[1]))
        finally:
            rt.close()
        assert run_cli("backup", str(tmp_path / "b.db"), "--db", db, "--vault", str(vault)).exit_code == 0
        refused = run_cli("restore", str(tmp_path / "b.db"), "--db", db, "--vault", str(vault), "--replace")
        assert refused.exit_code == 1 and "notewell serve answers on this store at http://127.0.0.1:" in \
            refused.output and "stop its servers first" in refused.output
        restored = run_cli("restore", str(tmp_path / "b.db"), "--db", other, "--vault", str(vault))
        assert restored.exit_code == 0, restored.output
    finally:
        health.shutdown()
    rt = open_runtime(str(vault), other)
    try:
        assert rt.servers.recorded() == []  # the source's server is not this store's
    finally:
        rt.close()


def test_a_backup_of_the_other_backend_is_named_as_such(pg_cluster: PgCluster, tmp_path: Path) -> None:
    """A PostgreSQL dump restored into SQLite was "not a SQLite database", a SQLite backup restored into PostgreSQL
    "pg_restore failed (input file does not appear to be a valid archive)"."""
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    sqlite_db, pg_db = str(tmp_path / "index.db"), pg_cluster.url(pg_cluster.create_database())
    for db, name in ((sqlite_db, "lite.backup"), (pg_db, "pg.dump")):
        assert run_cli("user", "add", "dana@example.org", "--role", "member", "--db", db, "--vault", str(vault)
                       ).exit_code == 0
        assert run_cli("backup", str(tmp_path / name), "--db", db, "--vault", str(vault)).exit_code == 0
    into_sqlite = run_cli("restore", str(tmp_path / "pg.dump"), "--db", str(tmp_path / "new.db"), "--vault",
                          str(vault))
    flat = " ".join(into_sqlite.output.split())
    assert into_sqlite.exit_code == 1 and "FILE: " in flat and "is a PostgreSQL store's backup" in flat, flat
    assert "notewell migrate" in flat and not (tmp_path / "new.db").exists()
    into_pg = run_cli("restore", str(tmp_path / "lite.backup"), "--db", pg_cluster.url(pg_cluster.create_database()),
                      "--vault", str(vault))
    flat = " ".join(into_pg.output.split())
    assert into_pg.exit_code == 1 and "is a SQLite store's backup: restore it into a SQLite store" in flat, flat


def test_a_store_locked_by_another_process_at_open_is_one_line_not_a_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bringing the schema up to date needs the write lock: held by another process past the busy timeout, every
    command (serve --stdio too) ended in a traceback ("database is locked"). Since a store whose schema is
    current opens with a read, a command that only reads answers meanwhile; one that writes says the lock."""
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    db = tmp_path / "index.db"
    assert run_cli("index", "--db", str(db), "--vault", str(vault)).exit_code == 0
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 200)
    holder = sqlite3.connect(db, isolation_level=None, timeout=1)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # the write lock (WAL: readers go on)
        read = run_cli("user", "list", "--db", str(db), "--vault", str(vault))
        result = run_cli("user", "add", "dana@example.org", "--role", "member", "--db", str(db), "--vault", str(vault))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert read.exit_code == 0 and "No users" in read.output, read.output
    assert result.exit_code == 1 and "stayed locked by another process" in result.output, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("role", ["watcher", "jobs"])
def test_restore_is_refused_while_a_process_holds_one_of_the_stores_leases(
        stores: tuple[str, str], tmp_path: Path, role: str) -> None:
    """A server on another machine sharing the PostgreSQL database is not seen at its recorded (local) address:
    its lease is what says it works on the store."""
    from notewell.store.leadership import open_leadership

    db, _ = stores
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    assert run_cli("user", "add", "dana@example.org", "--role", "member", "--db", db, "--vault", str(vault)
                   ).exit_code == 0
    assert run_cli("backup", str(tmp_path / "b.backup"), "--db", db, "--vault", str(vault)).exit_code == 0
    elsewhere = open_leadership(db, role)  # as another machine's serve holds it
    assert elsewhere.try_acquire()
    try:
        refused = run_cli("restore", str(tmp_path / "b.backup"), "--db", db, "--vault", str(vault), "--replace")
    finally:
        elsewhere.release()
    flat = " ".join(refused.output.split())
    assert refused.exit_code == 1 and f"a process holds this store's {role} lease" in flat, flat
    restored = run_cli("restore", str(tmp_path / "b.backup"), "--db", db, "--vault", str(vault), "--replace")
    assert restored.exit_code == 0, restored.output


def test_a_failed_restore_into_a_new_postgres_database_leaves_no_store_behind(pg_cluster: PgCluster,
                                                                               tmp_path: Path) -> None:
    """The store's schema is made when the command opens it; a restore that failed after that left an empty
    store where none was (a SQLite file is removed in that case), which the next restore took for a store: the
    tables the command made go."""
    import psycopg

    source, target = pg_cluster.url(pg_cluster.create_database()), pg_cluster.url(pg_cluster.create_database())
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    rt = open_runtime(str(vault), source)
    rt.close()
    backup = tmp_path / "store.dump"
    assert run_cli("backup", str(backup), "--db", source, "--vault", str(vault)).exit_code == 0
    broken = tmp_path / "broken.dump"
    broken.write_bytes(backup.read_bytes()[:200])  # the magic and a header, then nothing
    failed = run_cli("restore", str(broken), "--db", target, "--vault", str(vault))
    assert failed.exit_code != 0 and "pg_restore failed" in failed.output, failed.output
    with psycopg.connect(target) as conn:
        tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert tables == set()
    assert run_cli("restore", str(backup), "--db", target, "--vault", str(vault)).exit_code == 0


def _backed_up_store_with_a_memory(pg_cluster: PgCluster, tmp_path: Path) -> tuple[str, Path, Path]:
    """A PostgreSQL store holding one memory in apollo, and its backup: (its URL, its vault, the backup)."""
    url = pg_cluster.url(pg_cluster.create_database())
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    rt = open_runtime(str(vault), url)
    rt.administration.add_project(LOCAL_OWNER, "apollo")
    rt.memory.remember(LOCAL_OWNER, "a memory that must survive", project="apollo")
    rt.close()
    backup = tmp_path / "store.dump"
    assert run_cli("backup", str(backup), "--db", url, "--vault", str(vault)).exit_code == 0
    return url, vault, backup


def test_a_failed_restore_over_an_upgraded_postgres_store_keeps_the_tables_its_upgrade_made(
        pg_cluster: PgCluster, tmp_path: Path) -> None:
    """Opening an older store makes the tables its upgrade adds; a restore refused (or failing) then dropped
    them, as if the command had made the whole store, while schema_migrations said the step ran (a review
    found it). Only a database that held no table at all is taken for a new store."""
    import psycopg

    url, vault, backup = _backed_up_store_with_a_memory(pg_cluster, tmp_path)
    with psycopg.connect(url, autocommit=True) as conn:  # the store as a version before brain step 4 left it
        conn.execute("DROP TABLE brain_kea_funnel")
        conn.execute("DELETE FROM schema_migrations WHERE component = 'brain' AND version >= 4")
    refused = run_cli("restore", str(backup), "--db", url, "--vault", str(vault))
    assert refused.exit_code != 0 and "the store is not empty" in refused.output, refused.output
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('brain_kea_funnel')").fetchone() != (None,)
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (1,)


def test_a_backup_an_older_version_made_restores_into_a_new_or_upgraded_postgres_store(
        pg_cluster: PgCluster, tmp_path: Path) -> None:
    """A store this version makes (a restore's target is opened, so made, first) or upgrades has tables an
    older backup has not, some with keys into its tables (web_sessions into users): the dump's --clean could
    not drop users' key and every such restore failed, into a new database and over the upgraded store alike.
    A backup cut short is still refused and leaves the store as it was."""
    import psycopg

    old = pg_cluster.url(pg_cluster.create_database())
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    rt = open_runtime(str(vault), old)
    rt.administration.add_project(LOCAL_OWNER, "apollo")
    rt.administration.add_user(LOCAL_OWNER, "ada@example.com", "member")
    rt.memory.remember(LOCAL_OWNER, "a memory from before the upgrade", project="apollo")
    rt.close()
    with psycopg.connect(old, autocommit=True) as conn:  # the store as a version before credentials step 3 left it
        conn.execute("DROP TABLE web_sessions, sign_in_secrets")
        conn.execute("CREATE TABLE web_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("DELETE FROM schema_migrations WHERE component = 'credentials' AND version >= 3")
    backup = tmp_path / "older.dump"  # as an older version's backup wrote it (this version's would upgrade first)
    subprocess.run([shutil.which("pg_dump") or "pg_dump", "--format=custom", "--no-owner", "--file", str(backup),
                    "--dbname", old], check=True, capture_output=True)
    upgraded = pg_cluster.url(pg_cluster.create_database())
    for target, args in ((pg_cluster.url(pg_cluster.create_database()), ()), (old, ("--replace",))):
        if args:  # the older store upgraded in place, then the backup taken before the upgrade put back
            open_runtime(str(vault), old).close()
        restored = run_cli("restore", str(backup), "--db", target, "--vault", str(vault), *args)
        assert restored.exit_code == 0, restored.output
        rt = open_runtime(str(vault), target)  # upgraded again on opening
        try:
            assert [m.content for m in rt.store.memories.all(["apollo"])] == ["a memory from before the upgrade"]
            assert rt.store.identity.user_by_email("ada@example.com") is not None
        finally:
            rt.close()
        with psycopg.connect(target) as conn:
            assert conn.execute("SELECT to_regclass('web_sessions'), to_regclass('web_keys')").fetchone() \
                == ("web_sessions", None)
    broken = tmp_path / "broken.dump"
    broken.write_bytes(backup.read_bytes()[: len(backup.read_bytes()) // 2])
    failed = run_cli("restore", str(broken), "--db", upgraded, "--vault", str(vault))
    assert failed.exit_code != 0 and "failed" in failed.output, failed.output
    with psycopg.connect(upgraded) as conn:
        assert conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall() == []


def test_a_restore_psql_refuses_names_the_error_and_changes_nothing(pg_cluster: PgCluster, tmp_path: Path) -> None:
    """A view an operator made on a table the restore must drop: psql stops at the DROP; the message is
    PostgreSQL's ERROR line (not the first line psql printed), and the store is as it was."""
    import psycopg

    url, vault, backup = _backed_up_store_with_a_memory(pg_cluster, tmp_path)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE VIEW operators_view AS SELECT id FROM memories")
    refused = run_cli("restore", str(backup), "--db", url, "--vault", str(vault), "--replace")
    assert refused.exit_code != 0 and "psql failed (" in refused.output and "ERROR:" in refused.output, \
        refused.output
    assert "set_config" not in refused.output
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (1,)
        assert conn.execute("SELECT to_regclass('operators_view')").fetchone() == ("operators_view",)


def _password_role(pg_cluster: PgCluster, tmp_path: Path, password: str) -> tuple[str, str]:
    """A role that must give ``password`` over TCP (the cluster trusts everyone else) and a database it owns
    whose name needs escaping in a URL: (the role, the database)."""
    import psycopg

    from pg import TEMPLATE_DB

    suffix = tmp_path.name[-6:].replace("-", "_").lower()
    role, name = f"nw@pw:{suffix}", f"nw db%{suffix}"
    hba = pg_cluster.data / "pg_hba.conf"
    hba.write_text(f'host all "{role}" 127.0.0.1/32 scram-sha-256\n' + hba.read_text())  # before "trust"
    with pg_cluster.admin() as conn:
        conn.execute("SET password_encryption = 'scram-sha-256'")
        conn.execute(psycopg.sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(psycopg.sql.Identifier(role),
                                                                                 psycopg.sql.Literal(password)))
        conn.execute(psycopg.sql.SQL("CREATE DATABASE {} OWNER {} TEMPLATE {}").format(
            psycopg.sql.Identifier(name), psycopg.sql.Identifier(role), psycopg.sql.Identifier(TEMPLATE_DB)))
        conn.execute("SELECT pg_reload_conf()")
    return role, name


def test_postgres_backup_and_restore_decode_a_percent_encoded_password(
        pg_cluster: PgCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A password (and a user and database name) with characters a URL must escape: pg_dump and pg_restore got
    the password still escaped ("password authentication failed") while every other command worked, and the
    failed backup left its .part file behind."""
    from urllib.parse import quote

    password = "p@ss:w/rd%#?"
    role, name = _password_role(pg_cluster, tmp_path, password)
    url = f"postgresql://{quote(role, safe='')}:{quote(password, safe='')}@127.0.0.1:{pg_cluster.port}/" \
          f"{quote(name, safe='')}"
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    assert run_cli("user", "add", "dana@example.org", "--role", "member", "--db", url, "--vault", str(vault)
                   ).exit_code == 0
    backup = tmp_path / "x.dump"
    result = run_cli("backup", str(backup), "--db", url, "--vault", str(vault))
    assert result.exit_code == 0 and backup.stat().st_size > 0, result.output
    restored = run_cli("restore", str(backup), "--db", url, "--vault", str(vault), "--replace")
    assert restored.exit_code == 0, restored.output
    assert "dana@example.org" in run_cli("user", "list", "--db", url, "--vault", str(vault)).output
    assert not list(tmp_path.glob("*.part"))
    tools = tmp_path / "bin"  # a pg_dump that fails half-way, as on a dropped connection
    tools.mkdir()
    (tools / "pg_dump").write_text("#!/bin/sh\necho 'pg_dump: error: simulated' >&2\nexit 1\n")
    (tools / "pg_dump").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    failed = run_cli("backup", str(tmp_path / "y.dump"), "--db", url, "--vault", str(vault))
    assert failed.exit_code == 1 and "pg_dump failed (pg_dump: error: simulated)" in failed.output, failed.output
    assert not list(tmp_path.glob("y.dump*"))  # no .part left by a failed dump


def test_the_tools_connection_string_holds_no_secret_of_the_url(tmp_path: Path) -> None:
    """A password in a ``?password=`` parameter (or ``sslpassword``) went on pg_dump's, pg_restore's and psql's
    command lines, where ``ps`` shows it: the --dbname Notewell builds holds none, and the secrets go in the
    environment (PGPASSWORD) or a service file only its user reads, gone afterwards."""
    from psycopg.conninfo import conninfo_to_dict

    from notewell.store.postgres.backups import SERVICE, connection

    for url in ("postgresql://nw@/nw?host=/tmp/x&port=5432&password=S3cret",
                "postgresql://nw:S3cret@db.internal:5433/nw?sslmode=require",
                "postgresql://nw:wrong@db.internal/nw?password=S3cret&sslpassword=K3yPass&application_name=a%20b"):
        with connection(url) as (dbname, env):
            assert "S3cret" not in dbname and "K3yPass" not in dbname and "password" not in dbname, dbname
            assert env["PGPASSWORD"] == "S3cret"
            params = conninfo_to_dict(dbname)
            assert params["user"] == "nw" and params["dbname"] == "nw"
            if "sslpassword" in url:
                assert params["service"] == SERVICE and params["application_name"] == "a b"
                service_file = Path(env["PGSERVICEFILE"])
                assert service_file.read_text() == f"[{SERVICE}]\nsslpassword=K3yPass\n"
                assert service_file.stat().st_mode & 0o077 == 0
            else:
                assert "service" not in params and env.get("PGSERVICEFILE") == os.environ.get("PGSERVICEFILE")
        if "sslpassword" in url:
            assert not service_file.exists()


def test_postgres_backup_and_restore_keep_a_query_password_off_the_command_line(
        pg_cluster: PgCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``?password=`` (and ``sslpassword``) reached pg_dump's and psql's argv, which any user of the machine can read:
    a real backup and restore as a role that must give its password, every tool started watched."""
    from urllib.parse import quote

    password = "S3cret-pw"
    role, name = _password_role(pg_cluster, tmp_path, password)
    url = f"postgresql://{quote(role, safe='')}@127.0.0.1:{pg_cluster.port}/{quote(name, safe='')}" \
          f"?password={password}&sslpassword=K3yPass"
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    assert run_cli("user", "add", "dana@example.org", "--role", "member", "--db", url, "--vault", str(vault)
                   ).exit_code == 0
    started: list[list[str]] = []

    class Watched(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, args: list[str], *rest: object, **kwargs: object) -> None:
            started.append([str(arg) for arg in args])
            super().__init__(args, *rest, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(subprocess, "Popen", Watched)
    backup = tmp_path / "x.dump"
    result = run_cli("backup", str(backup), "--db", url, "--vault", str(vault))
    assert result.exit_code == 0, result.output
    restored = run_cli("restore", str(backup), "--db", url, "--vault", str(vault), "--replace")
    assert restored.exit_code == 0, restored.output
    monkeypatch.undo()
    tools = {Path(args[0]).name for args in started}
    assert {"pg_dump", "pg_restore", "psql"} <= tools, started
    for args in started:
        assert not any(password in arg or "K3yPass" in arg for arg in args), args
    assert "dana@example.org" in run_cli("user", "list", "--db", url, "--vault", str(vault)).output


def test_a_postgres_backup_cut_short_is_named_damaged_not_by_psqls_words(pg_cluster: PgCluster,
                                                                         tmp_path: Path) -> None:
    """A dump cut short (head -c) failed with what psql said of the half row it got ("missing data for column
    \"grams\"", or the row quoted): one line naming FILE, damaged or incomplete, and the store as it was."""
    import psycopg

    url = pg_cluster.url(pg_cluster.create_database())
    vault = make_vault(tmp_path, {f"apollo/n{i}.md": f"# Note {i}\n" + " ".join(f"word{j * i % 9973}"
                                                                             for j in range(400)) + "\n"
                                  for i in range(200)})
    assert run_cli("index", "--db", url, "--vault", str(vault)).exit_code == 0
    rt = open_runtime(str(vault), url)
    rt.memory.remember(LOCAL_OWNER, "a memory that must survive", project="apollo")
    rt.close()
    good = tmp_path / "good.dump"
    assert run_cli("backup", str(good), "--db", url, "--vault", str(vault)).exit_code == 0
    whole = good.read_bytes()
    for fraction in (0.3, 0.5, 0.8):
        cut = tmp_path / f"cut-{fraction}.dump"
        cut.write_bytes(whole[: int(len(whole) * fraction)])
        failed = run_cli("restore", str(cut), "--db", url, "--vault", str(vault), "--replace")
        assert failed.exit_code == 1, failed.output
        begun, message = failed.stderr.strip().split("\n", 1)  # (the line saying it has begun, then the error)
        assert begun.startswith("Restoring ") and not failed.stdout, failed.output
        assert "\n" not in message and message.startswith(f"error: FILE: {cut} is damaged or incomplete"), message
        assert "name a file 'notewell backup' wrote" in message, message
        assert "psql" not in message and "missing data" not in message and "word" not in message, message
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM memories").fetchone() == (1,)
            assert conn.execute("SELECT count(*) FROM documents").fetchone() == (200,)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_restore_records_the_backup_it_restored_not_the_backups_history(backend: str, tmp_path: Path,
                                                                          request: pytest.FixtureRequest) -> None:
    """backup A, mv A A2, backup B, restore B --replace: the doctor warned that A was gone, the restored store
    holding B's source's history. After a restore, the store's record is B: its file and the time it was taken."""
    from notewell.timestamps import parse_iso

    if backend == "postgres":
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        db, fresh = cluster.url(cluster.create_database()), cluster.url(cluster.create_database())
    else:
        db, fresh = str(tmp_path / "index.db"), str(tmp_path / "fresh.db")
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    assert run_cli("index", "--db", db, "--vault", str(vault)).exit_code == 0
    a, b = tmp_path / "a.backup", tmp_path / "b.backup"
    assert run_cli("backup", str(a), "--db", db, "--vault", str(vault)).exit_code == 0
    a.rename(tmp_path / "a2.backup")
    taken = json.loads(run_cli("backup", str(b), "--db", db, "--vault", str(vault), "--json").stdout)
    for into, flags in ((db, ["--replace"]), (fresh, [])):
        restored = run_cli("restore", str(b), "--db", into, "--vault", str(vault), *flags)
        assert restored.exit_code == 0, restored.output
        checks = json.loads(run_cli("doctor", "--db", into, "--vault", str(vault), "--json").stdout)
        check = next(c for c in checks if c["check"] == "backup")
        assert check["status"] == "ok", check
        assert f"{b.resolve()} ({b.stat().st_size} bytes)" in check["found"] and "a.backup" not in check["found"], check
        at = check["found"].partition(", at ")[2].partition(": ")[0]
        assert abs((parse_iso(at) - parse_iso(taken["at"])).total_seconds()) < 2, (at, taken)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_backup_an_older_notewell_took_restores_into_a_new_and_a_current_store(
        backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A probe: the restore replaced the store, then its clean-up (DELETE FROM backups) met the older schema and
    the command ended 70 "no such table: backups", a new store removed (SQLite) or left filled (PostgreSQL). The
    restored store is brought to this version's schema first: it answers as the upgrade tests expect, and its
    record of backups is the one restored."""
    from test_upgrade import COMMIT, EXPECTED, FIXTURES, answers

    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    if backend == "postgres":
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        old = cluster.url(cluster.create_database())
        subprocess.run([str(PG_BIN / "psql"), "--quiet", "--set", "ON_ERROR_STOP=1", "--file",
                        str(FIXTURES / f"store-{COMMIT}.sql"), old], check=True, capture_output=True)
        backup = tmp_path / "old.dump"
        subprocess.run([str(PG_BIN / "pg_dump"), "--format=custom", "--no-owner", "--file", str(backup), "--dbname",
                        old], check=True, capture_output=True)
        new, current = cluster.url(cluster.create_database()), cluster.url(cluster.create_database())
    else:
        backup = tmp_path / "old.db"
        shutil.copyfile(FIXTURES / f"store-{COMMIT}.db", backup)
        new, current = str(tmp_path / "new.db"), str(tmp_path / "current.db")
    assert run_cli("index", "--db", current, "--vault", str(vault)).exit_code == 0
    for into, flags in ((new, []), (current, ["--replace"])):
        restored = run_cli("restore", str(backup), "--db", into, "--vault", str(vault), *flags)
        assert restored.exit_code == 0, restored.output
        users = run_cli("user", "list", "--db", into, "--vault", str(vault))
        assert users.exit_code == 0 and "alice@example.test" in users.stdout, users.output
        assert answers(vault, into) == EXPECTED
        rt = open_runtime(str(vault), into)
        try:
            latest = rt.backups.latest()
            assert latest is not None and latest.path == str(backup.resolve()), latest
        finally:
            rt.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_backup_to_a_read_only_filesystem_is_refused_as_such_on_both_backends(
        backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A probe: on PostgreSQL the clean-up of the partial copy (unlinking it) raised EROFS in its turn, and the
    command ended 70 "OSError: Read-only file system: 'ro/p.dump.part'", where SQLite named the refusal."""
    if os.geteuid() != 0:
        pytest.skip("a read-only filesystem is a tmpfs mounted read-only, which root alone mounts")
    if backend == "postgres":
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        db = cluster.url(cluster.create_database())
    else:
        db = str(tmp_path / "index.db")
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    assert run_cli("index", "--db", db, "--vault", str(vault)).exit_code == 0
    shelf = tmp_path / "ro"
    shelf.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro", "tmpfs", str(shelf)], check=True, capture_output=True)
    try:
        refused = run_cli("backup", str(shelf / "b.backup"), "--db", db, "--vault", str(vault))
    finally:
        subprocess.run(["umount", str(shelf)], check=True, capture_output=True)
    assert refused.exit_code == 1, refused.output
    assert f"backup: cannot write {shelf / 'b.backup'}: its filesystem is read-only" in refused.stderr, refused.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_restore_whose_upgrade_fails_says_so_and_keeps_the_backup_restored(
        backend: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The upgrade after the restore's commit failing (here made to): one line saying the backup was restored and
    what is left, never exit 70; the new store holds the backup whole, and opening it upgrades it
    (docs/operations.md, "Backup and restore")."""
    from notewell.store.postgres.store import PostgresStore
    from notewell.store.sqlite.store import SqliteStore
    from test_upgrade import COMMIT, FIXTURES

    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    if backend == "postgres":
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        new = cluster.url(cluster.create_database())
        backup = tmp_path / "old.dump"
        old = cluster.url(cluster.create_database())  # the fixture's store loaded, then dumped as the older one
        subprocess.run([str(PG_BIN / "psql"), "--quiet", "--set", "ON_ERROR_STOP=1", "--file",
                        str(FIXTURES / f"store-{COMMIT}.sql"), old], check=True, capture_output=True)
        subprocess.run([str(PG_BIN / "pg_dump"), "--format=custom", "--no-owner", "--file", str(backup), "--dbname",
                        old], check=True, capture_output=True)
    else:
        backup = tmp_path / "old.db"
        shutil.copyfile(FIXTURES / f"store-{COMMIT}.db", backup)
        new = str(tmp_path / "new.db")

    def fails(_store: object) -> None:
        raise sqlite3.OperationalError("a migration step failed")

    with monkeypatch.context() as patched:
        patched.setattr(SqliteStore if backend == "sqlite" else PostgresStore, "upgrade", fails)
        failed = run_cli("restore", str(backup), "--db", new, "--vault", str(vault))
    assert failed.exit_code == 1, failed.output
    assert (f"{backup} was restored, but bringing it to this version's schema failed (OperationalError: a migration "
            "step failed): the store holds the backup") in " ".join(failed.stderr.split()), failed.stderr
    users = run_cli("user", "list", "--db", new, "--vault", str(vault))
    assert users.exit_code == 0 and "alice@example.test" in users.stdout, users.output
