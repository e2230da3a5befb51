"""The connection pool's own log lines never print the --db password (docs/security.md): psycopg_pool says "error
connecting in 'notewell': …" with psycopg's text, which names a host that could not be resolved as libpq read the
URL. A password with an unencoded "@" and "," (Leak@localhost:PORT,Pw9z) is read as the password Leak and the hosts
localhost and Pw9z@127.0.0.1; on a server that trusts local connections the store opens through localhost, and
once names stop resolving the pool's lines quoted 'Pw9z@127.0.0.1'. Through the CLI: `python -m notewell serve` in
a real process, its stderr read, on the session's real PostgreSQL; the name service is made to fail by a
sitecustomize of the server's own (socket.getaddrinfo refuses every name once a file exists)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from mcp_world import free_port
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from pg import PgCluster

SECRETS = ("Leak", "Pw9z")
NAMES_FAIL = '''import os
import socket

_resolve = socket.getaddrinfo


def getaddrinfo(host, *args, **kwargs):
    if os.path.exists(os.environ["NW_TEST_NAMES_FAIL"]):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return _resolve(host, *args, **kwargs)


socket.getaddrinfo = getaddrinfo
'''


def _until(lines: list[str], seen: str, server: subprocess.Popen[str], within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while not any(seen in line for line in list(lines)):
        assert server.poll() is None and time.monotonic() < deadline, f"no {seen} line:\n" + "".join(lines)
        time.sleep(0.2)


@contextmanager
def serving(pg_cluster: PgCluster, tmp_path: Path, name: str, vault: Path,
            http_port: int) -> Iterator[tuple[subprocess.Popen[str], list[str], Path]]:
    """`python -m notewell serve` on ``vault`` and the database ``name`` through the --db URL whose password libpq
    reads as a host, in a real process whose names stop resolving once the file it yields exists; its stderr lines
    gathered as they come. The server is stopped and the database dropped at the end."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(NAMES_FAIL, encoding="utf-8")
    failing = tmp_path / "names-fail"
    port = pg_cluster.port
    db = f"postgresql://postgres:Leak@localhost:{port},Pw9z@127.0.0.1:{port}/{name}"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}, "NOTEWELL_DB": db,
           "NW_TEST_NAMES_FAIL": str(failing),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(shim), os.environ.get("PYTHONPATH")]))}
    server = subprocess.Popen([sys.executable, "-m", "notewell", "serve", "--vault", str(vault), "--port",
                               str(http_port)], env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(server.stderr or []), daemon=True).start()
    try:
        yield server, lines, failing
    finally:
        server.terminate()
        try:
            server.wait(timeout=90)
        finally:
            pg_cluster.drop_database(name)


def test_the_pools_lines_never_print_a_password_libpq_read_as_a_host(pg_cluster: PgCluster, tmp_path: Path) -> None:
    name = pg_cluster.create_database()
    (tmp_path / "vault" / "notes").mkdir(parents=True)
    (tmp_path / "vault" / "notes" / "a.md").write_text("# A\n", encoding="utf-8")
    with serving(pg_cluster, tmp_path, name, tmp_path / "vault", free_port()) as (server, lines, failing):
        _until(lines, "op=serve.listening", server, 90)
        failing.touch()
        with pg_cluster.admin() as admin:  # the pool's connections end: it connects again, and no name resolves
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
        _until(lines, "op=store.pool", server, 60)
    said = "".join(lines)
    assert "failed to resolve host '***'" in said, said
    leaked = [secret for secret in SECRETS if secret in said]
    assert not leaked, f"{leaked} printed:\n{said}"


def test_a_note_writes_lock_connection_never_prints_a_password_libpq_read_as_a_host(pg_cluster: PgCluster,
                                                                                       tmp_path: Path) -> None:
    """A note write on PostgreSQL takes its lock on a connection of its own (store/postgres/note_lease.py), outside
    the pool: once names stopped resolving it failed with psycopg's text, which named the host 'Pw9z@127.0.0.1',
    and the write was a 500 whose traceback in the log printed it. It is now the store being unavailable (503),
    its reason masked, with no traceback."""
    name = pg_cluster.create_database()
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "a.md").write_text("# A\n", encoding="utf-8")
    rt = open_runtime(str(vault), pg_cluster.tcp_url(name))
    try:
        rt.indexing.sync()
        rt.indexing.sync_projects()
        rt.administration.add_user(LOCAL_OWNER, "ana@northwind.test", "member", handle="ana")
        rt.administration.grant(LOCAL_OWNER, "ana@northwind.test", "notes", "write")
        token = rt.administration.mint_token(LOCAL_OWNER, "ana@northwind.test",
                                             ["knowledge:read", "knowledge:write"]).secret
    finally:
        rt.close()
    http_port = free_port()
    with serving(pg_cluster, tmp_path, name, vault, http_port) as (server, lines, failing):
        _until(lines, "op=serve.listening", server, 90)
        failing.touch()  # the pool's connections stay open: only a new connection resolves names
        written = httpx.put(f"http://127.0.0.1:{http_port}/api/v1/projects/notes/documents/b.md",
                            json={"content": "b\n"}, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        assert written.status_code == 503, written.text
        assert "failed to resolve host '***'" in written.json()["detail"], written.text
    said = "".join(lines) + written.text
    leaked = [secret for secret in SECRETS if secret in said]
    assert not leaked, f"{leaked} printed:\n{said}"
    assert not (vault / "notes" / "b.md").exists()
