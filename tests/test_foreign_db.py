"""A --db naming another program's database is refused before anything is written (store/shared/foreign.py).

An outside probe: `notewell doctor --db app.db` (and `token list`, `index`, `export`, `backup`) on a SQLite file
holding an application's `customers` table answered 0 and left 67 Notewell tables in it, switched to WAL; on
PostgreSQL a database with a `customers` table gained 40. A later `migrate --from` it blamed a newer Notewell.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from conftest import make_vault, run_cli
from notewell.errors import ConfigError
from notewell.store.shared.foreign import refuse_foreign
from pg import PgCluster


def test_a_sqlite_file_of_another_program_is_left_as_it_was(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    app = tmp_path / "app.db"
    with sqlite3.connect(app) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
        conn.execute("INSERT INTO customers VALUES (1, 'acme')")
    conn.close()
    before = app.read_bytes()
    for command in (["token", "list"], ["index"], ["memory", "search", "acme"]):
        refused = run_cli(*command, "--db", str(app), "--vault", str(vault))
        assert refused.exit_code != 0, (command, refused.stdout)
        assert f"--db: {app} holds tables that are not a Notewell store's (customers)" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
    doctor = run_cli("doctor", "--db", str(app), "--vault", str(vault))
    assert doctor.exit_code == 1 and "FAIL store: --db:" in doctor.stdout + doctor.stderr, doctor.stdout
    assert app.read_bytes() == before and not Path(f"{app}-wal").exists()


def test_a_new_file_and_a_store_still_open(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    empty = tmp_path / "empty.db"
    empty.touch()  # an empty file made beforehand becomes a store, as a path that does not exist yet
    for db in (empty, tmp_path / "new.db"):
        assert run_cli("index", "--db", str(db), "--vault", str(vault)).exit_code == 0
        assert run_cli("index", "--db", str(db), "--vault", str(vault)).exit_code == 0  # and opens again


def test_a_postgresql_database_of_another_program_is_left_as_it_was(pg_cluster: PgCluster, tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    name = pg_cluster.create_database()
    url = pg_cluster.url(name)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE customers (id integer, name text)")
            conn.execute("CREATE TABLE orders (id integer)")
        refused = run_cli("token", "list", "--db", url, "--vault", str(vault))
        assert refused.exit_code != 0 and "holds tables that are not a Notewell store's (customers, orders)" in \
            refused.stderr, refused.stderr
        doctor = run_cli("doctor", "--db", url, "--vault", str(vault))
        assert doctor.exit_code == 1 and "FAIL store: --db:" in doctor.stdout + doctor.stderr, doctor.stdout
        with psycopg.connect(url) as conn:
            tables = {t for (t,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()}
        assert tables == {"customers", "orders"}
    finally:
        pg_cluster.drop_database(name)


def test_the_refusal_names_a_few_tables_and_counts_the_rest() -> None:
    refuse_foreign([], "x.db")  # a new database
    refuse_foreign(["schema_migrations", "memories"], "x.db")  # a store
    with pytest.raises(ConfigError, match=r"\(a, b, c, d, e and 2 more\)"):
        refuse_foreign(["g", "f", "e", "d", "c", "b", "a"], "x.db")


def test_a_postgresql_role_that_may_not_make_the_tables_is_one_line_naming_it(pg_cluster: PgCluster,
                                                                              tmp_path: Path) -> None:
    """A probe: a role without CREATE on the schema got an internal error (exit 70, InsufficientPrivilege) from
    every command, doctor included, which printed no checklist."""
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n"})
    name = pg_cluster.create_plain_database()
    role = f"reader_{name}"
    with pg_cluster.admin() as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
    url = pg_cluster.url(name).replace("postgresql://postgres@", f"postgresql://{role}@", 1)
    try:
        refused = run_cli("token", "list", "--db", url, "--vault", str(vault))
        assert refused.exit_code == 1 and f"--db: the role {role} may not make or change Notewell's tables" in \
            refused.stderr and "connect as the database's owner" in refused.stderr, refused.stderr
        doctor = run_cli("doctor", "--db", url, "--vault", str(vault))
        assert doctor.exit_code == 1 and f"FAIL store: --db: the role {role}" in doctor.stdout, doctor.stdout
    finally:
        pg_cluster.drop_database(name)
        with pg_cluster.admin() as admin:
            admin.execute(f"DROP ROLE {role}")
