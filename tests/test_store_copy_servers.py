"""A copy of a store (a SQLite backup file used as a store, a PostgreSQL dump restored into another database)
carries the source's `running_servers` rows, and the source's server still answers /healthz with their ids. The
copy's `doctor`, `user login-link` and `repair` took that server for their own (doctor: "this store's notewell
serve runs there"; login-link: a link to another store's server; repair: refused until "its" servers stopped).
A server's /healthz now says which store it opened, which a copy does not share; the source store still knows
its server, by another name for it too (a symlink, the TCP address of the same cluster). Real server processes,
both backends."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import run_cli
from mcp_world import free_port
from pg import BACKENDS, PG_BIN, PgCluster
from test_running_server import _doctor, _login_link, _serving, _store


def _copy_and_other_name(tmp_path: Path, backend: str, db: str, request: pytest.FixtureRequest) -> tuple[str, str]:
    """(a copy of the store taken while its server runs, another name for the store itself)."""
    backup = tmp_path / ("copied.db" if backend == "sqlite" else "p3.dump")
    made = run_cli("backup", str(backup), "--db", db, "--vault", str(tmp_path / "vault"))
    assert made.exit_code == 0, made.output
    if backend == "sqlite":
        alias = tmp_path / "alias.db"
        alias.symlink_to(Path(db))
        return str(backup), str(alias)
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    name = "nwd_" + urlsplit(db).path.lstrip("/")
    with cluster.admin() as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE template0")
    request.addfinalizer(lambda: cluster.drop_database(name))
    restored = subprocess.run([str(PG_BIN / "pg_restore"), "--no-owner", "--dbname", cluster.url(name), str(backup)],
                              capture_output=True, text=True, check=False)
    assert restored.returncode == 0, restored.stderr
    return cluster.url(name), cluster.tcp_url(urlsplit(db).path.lstrip("/"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_copy_of_the_store_does_not_take_the_sources_server_for_its_own(
        tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    url = str(tmp_path / "store" / "index.db") if backend == "sqlite" else str(request.getfixturevalue("pg_url"))
    vault, db = _store(tmp_path, url)
    port = free_port()
    with _serving(vault, db, port, tmp_path / "serve.log"):
        copy, other_name = _copy_and_other_name(tmp_path, backend, db, request)

        _code, checks = _doctor(vault, copy, "--port", str(port))
        assert checks["port"]["status"] == "fail", checks["port"]
        assert checks["port"]["found"] == f"127.0.0.1:{port} is in use by a notewell serve of another store"
        _code, checks = _doctor(vault, copy)  # the port it would check is not the source's server's
        assert not checks["port"]["found"].startswith(f"127.0.0.1:{port}"), checks["port"]
        link, note = _login_link(vault, copy)
        assert link.startswith("http://127.0.0.1:8765/signin/link/nwl_"), link
        assert note.startswith("No notewell serve runs on this store now"), note
        as_json = json.loads(run_cli("user", "login-link", "ada@example.com", "--json", "--vault", str(vault),
                                     "--db", copy).stdout)
        assert as_json["baseUrlFrom"] == "default", as_json
        repaired = run_cli("repair", "--vault", str(vault), "--db", copy)
        assert repaired.exit_code == 0, repaired.output

        for name in (db, other_name):  # the store itself, by its own name and another, still knows its server
            _code, checks = _doctor(vault, name, "--port", str(port))
            assert checks["port"]["status"] == "ok", checks["port"]
            assert checks["port"]["found"].startswith(f"127.0.0.1:{port}: this store's notewell serve runs there")
            link, _note = _login_link(vault, name)
            assert link.startswith(f"http://127.0.0.1:{port}/signin/link/nwl_"), link
            refused = run_cli("repair", "--vault", str(vault), "--db", name)
            flat = " ".join(refused.output.split())
            assert refused.exit_code == 1, flat
            assert f"http://127.0.0.1:{port}" in flat and "stop its servers first" in flat, flat
