"""A throwaway PostgreSQL 15 cluster for the test session, and the fixtures built on it.

The cluster lives in a fresh temporary folder (initdb, pg_ctl), listens on a free port of 127.0.0.1
and on a unix socket in that folder, and is stopped and removed when the session ends. As root,
PostgreSQL refuses to run, so the folder is given to the ``postgres`` system user and the binaries
run through ``runuser``. Each test gets its own database, cloned from a template that already has
pg_trgm, and pgvector's ``vector`` extension where it is installed (the store then searches meaning through
its index: store/postgres/pgvector.py). Where the binaries are missing the PostgreSQL tests skip, except in
CI (CI=true), where they fail: a PostgreSQL test must never pass silently there. pgvector missing skips only
the tests that need it (``pgvector`` fixture), and fails them in CI too.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

PG_BIN = Path(os.environ.get("NOTEWELL_PG_BIN", "/usr/lib/postgresql/15/bin"))
TEMPLATE_DB = "notewell_template"
BACKENDS = ("sqlite", "postgres")
_SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "max_connections": "300",
    "shared_buffers": "'128MB'",
    "fsync": "off",  # throwaway data: durability costs time and buys nothing here
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "log_min_messages": "warning",
}


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgCluster:
    """A running throwaway cluster; ``create_database()`` hands out fresh databases as URLs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.port = _free_port()
        self._as_postgres = os.geteuid() == 0
        self.pgvector = False  # whether the template (so every test database) has the vector extension

    def _run(self, *args: str) -> None:
        cmd = [str(PG_BIN / args[0]), *args[1:]]
        if self._as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        # cwd: the postgres user may not enter the caller's folder (a clone under /root, say)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False, cwd=self.root)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")

    def start(self) -> None:
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--encoding=UTF8",
                  "--locale=C.UTF-8", "--no-sync")
        with (self.data / "postgresql.conf").open("a") as conf:
            settings = {**_SETTINGS, "port": str(self.port), "unix_socket_directories": f"'{self.root}'"}
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w", "-t", "60", "start")
        with self.admin() as conn:
            conn.execute(f"CREATE DATABASE {TEMPLATE_DB}")
        with psycopg.connect(self.url(TEMPLATE_DB), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pg_trgm")
            if conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone():
                conn.execute("CREATE EXTENSION vector")
                self.pgvector = True

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, dbname: str) -> str:
        return f"postgresql://postgres@/{dbname}?host={self.root}&port={self.port}"

    def tcp_url(self, dbname: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def admin(self) -> psycopg.Connection:
        return psycopg.connect(self.url("postgres"), autocommit=True)

    def create_database(self) -> str:
        name = "nw_" + uuid.uuid4().hex[:12]
        with self.admin() as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE_DB}")
        return name

    def create_plain_database(self) -> str:
        """A fresh database without the vector extension (as on a server without pgvector)."""
        name = self.create_database()
        with psycopg.connect(self.url(name), autocommit=True) as conn:
            conn.execute("DROP EXTENSION IF EXISTS vector")
        return name

    def drop_database(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _unavailable(reason: str) -> None:
    if _in_ci():
        pytest.fail(f"PostgreSQL tests cannot run in CI: {reason}; .ci/run must install postgresql-15", pytrace=False)
    pytest.skip(f"PostgreSQL 15 is not available ({reason}); .ci/run installs it")


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """The session's throwaway PostgreSQL cluster (started on first use)."""
    if not (PG_BIN / "initdb").exists():
        _unavailable(f"no initdb in {PG_BIN}")
    sharedir = subprocess.run([str(PG_BIN / "pg_config"), "--sharedir"], capture_output=True, text=True,
                              check=False).stdout.strip()
    if not (Path(sharedir) / "extension" / "pg_trgm.control").exists():
        _unavailable(f"the pg_trgm extension is not installed in {sharedir}")
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            _unavailable("running as root without runuser to switch to the postgres user")
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            _unavailable("running as root and there is no postgres system user to run the cluster as")
    cluster = PgCluster(Path(tempfile.mkdtemp(prefix="nwpg-")))
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> Iterator[str]:
    """A URL to a fresh, empty database (pg_trgm installed) of the session cluster; dropped after the test."""
    name = pg_cluster.create_database()
    yield pg_cluster.url(name)
    pg_cluster.drop_database(name)


@pytest.fixture
def pgvector(pg_cluster: PgCluster) -> PgCluster:
    """The session cluster, whose test databases have pgvector; its tests skip where pgvector is not installed,
    except in CI, where they fail (.ci/run builds it)."""
    if not pg_cluster.pgvector:
        reason = "the vector extension (pgvector) is not installed for PostgreSQL 15"
        if _in_ci():
            pytest.fail(f"pgvector tests cannot run in CI: {reason}; .ci/run must build it", pytrace=False)
        pytest.skip(f"{reason}; .ci/run builds it from Debian's source package")
    return pg_cluster


@pytest.fixture
def plain_pg_url(pg_cluster: PgCluster) -> Iterator[str]:
    """A URL to a fresh database without the vector extension; dropped after the test."""
    name = pg_cluster.create_plain_database()
    yield pg_cluster.url(name)
    pg_cluster.drop_database(name)


@contextmanager
def module_store(request: pytest.FixtureRequest, folder: Path) -> Iterator[str]:
    """A --db value for a module fixture on the backend ``request.param`` names ("sqlite" or "postgres"): a
    SQLite file in ``folder``, or a fresh database of the session's cluster, dropped when the block ends."""
    if request.param != "postgres":
        yield str(folder / "index.db")
        return
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    name = cluster.create_database()
    try:
        yield cluster.url(name)
    finally:
        cluster.drop_database(name)


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A --db value for a fresh, empty store: a SQLite file path, or a PostgreSQL URL."""
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "store" / "index.db")
