"""A PostgreSQL password never printed, however the --db URL is mistyped (docs/operations.md): a password holding
an unencoded "@", "/", "#", "?" or "%" made libpq read the URL in pieces, and the messages quoted libpq's text
(the whole URL, or the piece of the password it stopped at) or a URL urlsplit had read otherwise. Through the CLI
(doctor, search, serve with NOTEWELL_DB in a real process, as under systemd), on the session's real PostgreSQL
where the URL connects."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_cli, run_module
from notewell.errors import Unavailable
from notewell.store.postgres.database import PostgresDatabase
from pg import PgCluster

CLOSED = "127.0.0.1:1"  # nothing listens there: a URL libpq reads fails at once

# (--db, what must never be printed: the password, its pieces, its decoded form)
MISTYPED = [
    (f"postgresql://nw:Leak/Pw9@{CLOSED}/nwa", ["Leak", "Pw9"]),
    (f"postgresql://nw:Leak#Pw9@{CLOSED}/nwa", ["Leak", "Pw9"]),
    (f"postgresql://nw:Leak%zzPw@{CLOSED}/nwa", ["Leak", "zzPw"]),
    ("postgresql://nw:Sp%20ace@[::1:54470/nwa", ["Sp%20ace", "Sp ace", "Sp%20"]),
    (f"postgresql://nw:Leak@Pw9@{CLOSED}/nwa", ["Leak", "Pw9"]),
    (f"postgresql://nw:Leak?Pw9@{CLOSED}/nwa", ["Leak", "Pw9"]),
    (f"host={CLOSED.split(':')[0]} port=1 user=nw password=LeakPw9", ["Leak", "Pw9"]),
]


def shown(result: object) -> str:
    return f"{getattr(result, 'stdout', '')}\n{getattr(result, 'stderr', '')}"


def assert_hidden(output: str, secrets: list[str]) -> None:
    leaked = [secret for secret in secrets if secret in output]
    assert not leaked, f"{leaked} printed:\n{output}"


@pytest.mark.parametrize(("db", "secrets"), MISTYPED, ids=[db for db, _ in MISTYPED])
def test_a_mistyped_url_never_prints_its_password(db: str, secrets: list[str], tmp_path: os.PathLike[str]) -> None:
    for command in (["doctor"], ["search", "anything"]):
        result = run_cli(*command, "--vault", str(tmp_path), "--db", db)
        assert result.exit_code != 0
        assert_hidden(shown(result), secrets)


@pytest.mark.parametrize(("db", "secrets"), MISTYPED[3:5] + MISTYPED[6:], ids=["ipv6", "at-sign", "key-value"])
def test_serve_with_notewell_db_never_prints_the_password(db: str, secrets: list[str],
                                                          tmp_path: os.PathLike[str]) -> None:
    env = {**os.environ, "NOTEWELL_DB": db}
    ended = run_module("serve", "--vault", str(tmp_path), "--port", "54473", env=env)  # the store fails first
    assert ended.returncode == 1 and "--db:" in ended.stderr, ended.stderr
    assert_hidden(ended.stdout + ended.stderr, secrets)


def test_an_unreadable_url_is_named_with_its_fix_not_quoted(tmp_path: os.PathLike[str]) -> None:
    result = run_cli("search", "x", "--vault", str(tmp_path), "--db", f"postgresql://nw:Leak%zzPw@{CLOSED}/nwa")
    assert result.exit_code == 1
    assert "not a valid PostgreSQL URL" in result.stderr and "percent-encoded" in result.stderr
    assert "~/.pgpass or PGPASSWORD" in result.stderr and "postgresql://nw" not in result.stderr


def test_an_unencoded_at_sign_is_masked_where_libpq_cut_it(tmp_path: os.PathLike[str]) -> None:
    """libpq read the host as "Pw9@127.0.0.1": the mask was nw:***@127.0.0.1 while its error quoted the tail."""
    result = run_cli("search", "x", "--vault", str(tmp_path), "--db", f"postgresql://nw:Leak@Pw9@{CLOSED}/nwa")
    assert "nw:***@127.0.0.1:1/nwa" in result.stderr and "'***'" in result.stderr, result.stderr
    assert "percent-encoded (@ as %40" in result.stderr  # libpq read another password than the URL's text


@pytest.mark.parametrize("password", ["Leak#Pw9", "Leak?Pw9"])
def test_a_url_that_connects_shows_its_password_masked(password: str, pg_cluster: PgCluster,
                                                       tmp_path: os.PathLike[str]) -> None:
    """libpq reads these passwords whole (the cluster trusts local connections: carried, never checked), and the
    store opens; urlsplit cut the URL at "#" or "?", and doctor printed the password with the host."""
    name = pg_cluster.create_database()
    try:
        db = pg_cluster.tcp_url(name).replace("postgres@", f"postgres:{password}@")
        result = run_cli("doctor", "--vault", str(tmp_path), "--db", db)
        assert f"postgresql://postgres:***@127.0.0.1:{pg_cluster.port}/{name}: opens" in result.stdout, shown(result)
        assert_hidden(shown(result), ["Leak", "Pw9"])
    finally:
        pg_cluster.drop_database(name)


SPECIAL = "@/#?%:&=,[] "
LETTERS = "XJZ"  # in no message's own text, so a piece of them printed is the password's


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(password=st.text(alphabet=SPECIAL + LETTERS, min_size=4, max_size=14).filter(
    lambda p: sum(c in LETTERS for c in p) >= 2))
def test_no_password_of_url_special_characters_is_printed(password: str, pg_cluster: PgCluster,
                                                          tmp_path: os.PathLike[str]) -> None:
    """On the real server (a database that does not exist, so libpq's reading of the URL reaches it)."""
    db = f"postgresql://nw:{password}@127.0.0.1:{pg_cluster.port}/nw_absent"
    result = run_cli("search", "x", "--vault", str(tmp_path), "--db", db)
    assert result.exit_code == 1
    pieces = [piece for piece in re.split(r"[^XJZ]+", password) if len(piece) >= 4]
    assert_hidden(shown(result), [password, *pieces])


@pytest.mark.parametrize(("db", "secrets"), [(db, secrets) for db, secrets in MISTYPED[:-1]
                                             if "%zz" not in db and "[" not in db])  # those a store never opens
def test_a_connection_of_its_own_not_made_never_shows_the_password(db: str, secrets: list[str], pg_url: str) -> None:
    """A PostgreSQL store's connection outside its pool (a bulk load's own step) not made is Unavailable, its
    reason scrubbed of the URL as libpq read it; raised bare, a door logged its traceback, pieces of the password
    in it."""
    database = PostgresDatabase(pg_url)
    try:
        database.url = db  # the database went away, under a URL whose password libpq reads in pieces
        with pytest.raises(Unavailable) as refused:
            database.own_connection()
        assert_hidden(str(refused.value), secrets)
    finally:
        database.close()
