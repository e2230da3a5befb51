"""Tokens: secrets that never land in the database or a log, and that stop working at once when revoked,
expired or their user deactivated; hidden and missing projects answered byte for byte alike."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import run_cli, runtime_over
from notewell.access.principal import LOCAL_OWNER, SCOPES
from notewell.access.token_secrets import hash_secret, mint_secret, parse_duration, since_from, token_id_of
from notewell.errors import Forbidden, InvalidArgument, NotFound, Unauthenticated
from notewell.records.identity import TokenRecord
from notewell.runtime import Runtime
from notewell.store import open_store
from notewell.store.base import Store


@dataclass
class Env:
    db: Path
    store: Store
    rt: Runtime


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    db = tmp_path / "index.db"
    store = open_store(str(db))
    rt = runtime_over(store, tmp_path)
    rt.administration.sync_vault_projects(["apollo", "zeta"])
    rt.administration.add_user(LOCAL_OWNER, "ada@example.com", "member")
    rt.administration.add_user(LOCAL_OWNER, "root@example.com", "admin")
    rt.administration.grant(LOCAL_OWNER, "ada@example.com", "apollo", "write")
    yield Env(db, store, rt)
    store.close()


def _db_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(db.parent.glob(db.name + "*")))


def test_a_secret_is_nowhere_in_the_database_nor_in_any_log(env: Env, caplog: pytest.LogCaptureFixture,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    minted = [
        env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read", "memory:write"],
                                         name="laptop"),
        env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"], project_id="apollo",
                              expires="90d"),
        env.rt.administration.mint_token(LOCAL_OWNER, "root@example.com", list(SCOPES)),
    ]
    for m in minted:
        env.rt.authentication.authenticate(m.secret)
    env.rt.administration.revoke_token(LOCAL_OWNER, minted[0].token.id)
    with pytest.raises(Unauthenticated) as caught:
        env.rt.authentication.authenticate(minted[0].secret)
    assert minted[0].secret not in str(caught.value)
    stored = _db_bytes(env.db)
    assert any(p.name.endswith("-wal") for p in env.db.parent.iterdir())  # the WAL was read too
    for m in minted:
        random_part = m.secret[len("nw_") + 13:]
        assert hash_secret(m.secret).encode() in stored  # proof that the bytes read hold the token rows
        for needle in (m.secret, random_part):
            assert needle.encode() not in stored
            assert needle not in caplog.text
        assert all(m.secret not in str(e.detail) for e in env.rt.administration.audit_log(LOCAL_OWNER))
    out, err = capsys.readouterr()
    assert not any(m.secret in out + err for m in minted)


def test_the_cli_prints_a_secret_once_and_never_stores_or_lists_it(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    db = tmp_path / "index.db"
    common = ["--vault", str(vault), "--db", str(db)]
    assert run_cli("user", "add", "ada@example.com", "--role", "member", *common).exit_code == 0
    minted = run_cli("token", "mint", "--user", "ada@example.com", "--scopes", "knowledge:read", *common)
    assert minted.exit_code == 0
    secret = minted.stdout.strip()
    assert secret.startswith("nw_") and "\n" not in secret
    assert secret not in minted.stderr
    listed = run_cli("token", "list", "--json", *common)
    audit = run_cli("audit", "--json", *common)
    assert secret not in listed.stdout + listed.stderr + audit.stdout + audit.stderr
    assert secret.encode() not in _db_bytes(db)


def test_secrets_are_long_random_and_recognizable() -> None:
    secrets_ = {mint_secret().secret for _ in range(200)}
    assert len(secrets_) == 200
    for secret in secrets_:
        assert secret.startswith("nw_")
        random_part = secret[len("nw_") + 13:]
        assert len(random_part) * math.log2(64) >= 256
        assert token_id_of(secret) == secret[3:15]
    assert token_id_of("nw_short") is None


def test_a_revoked_token_fails_on_its_very_next_call_in_every_process(env: Env) -> None:
    minted = env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"])
    other = runtime_over(open_store(str(env.db)), env.db.parent)
    other_process = other.authentication
    try:
        assert env.rt.authentication.authenticate(minted.secret).token_id == minted.token.id
        assert other_process.authenticate(minted.secret).user_id == minted.token.user_id
        env.rt.administration.revoke_token(LOCAL_OWNER, minted.token.id)
        for service in (env.rt.authentication, other_process):
            with pytest.raises(Unauthenticated, match="revoked"):
                service.authenticate(minted.secret)
    finally:
        other.close()


def test_an_expired_token_fails(env: Env) -> None:
    user = env.store.identity.user_by_email("ada@example.com")
    assert user is not None
    for expires_at, works in (("2000-01-01T00:00:00.000000Z", False), ("2999-01-01T00:00:00.000000Z", True)):
        raw = mint_secret()
        env.store.identity.add_token(TokenRecord(raw.token_id, user.id, "", ("knowledge:read",), None,
                                                 "1999-01-01T00:00:00.000000Z", expires_at), raw.secret_hash)
        if works:
            assert env.rt.authentication.authenticate(raw.secret).user_id == user.id
        else:
            with pytest.raises(Unauthenticated, match="expired"):
                env.rt.authentication.authenticate(raw.secret)
    minted = env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"], expires="30m")
    assert minted.token.expires_at is not None and minted.token.expires_at > minted.token.created_at


def test_a_deactivated_users_tokens_fail_until_reactivated(env: Env) -> None:
    minted = env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"])
    env.rt.administration.set_user_active(LOCAL_OWNER, "ada@example.com", False)
    with pytest.raises(Unauthenticated, match="deactivated"):
        env.rt.authentication.authenticate(minted.secret)
    with pytest.raises(InvalidArgument, match="deactivated"):
        env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"])
    env.rt.administration.set_user_active(LOCAL_OWNER, "ADA@example.com", True)
    assert env.rt.authentication.authenticate(minted.secret).email == "ada@example.com"


def test_bad_secrets_all_get_the_same_answer(env: Env) -> None:
    minted = env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"])
    forged = minted.secret[:-4] + ("AAAA" if not minted.secret.endswith("AAAA") else "BBBB")
    unknown = mint_secret().secret
    messages = set()
    for bad in ("nw_", "Bearer x", forged, unknown, minted.secret.upper()):
        with pytest.raises(Unauthenticated) as caught:
            env.rt.authentication.authenticate(bad)
        messages.add(str(caught.value))
    assert len(messages) == 1
    with pytest.raises(Unauthenticated, match="no token"):
        env.rt.authentication.authenticate("  ")


def test_authentication_builds_the_principal_and_records_last_use(env: Env) -> None:
    minted = env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["memory:read", "knowledge:read"],
                                   project_id="apollo", name="cursor")
    assert minted.token.scopes == ("knowledge:read", "memory:read")
    p = env.rt.authentication.authenticate(f"  {minted.secret}\n")
    assert (p.email, p.handle, p.role, p.bound_project, p.token_id) == (
        "ada@example.com", "ada", "member", "apollo", minted.token.id)
    assert p.scopes == frozenset({"knowledge:read", "memory:read"})
    token = env.store.identity.token(minted.token.id)
    assert token is not None and token.last_used_at is not None


def test_minting_checks_scopes_against_the_role_and_the_project_against_the_user(env: Env) -> None:
    with pytest.raises(Forbidden, match="member may not hold admin"):
        env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read", "admin"])
    with pytest.raises(Forbidden, match="user-scoped"):
        env.rt.administration.mint_token(LOCAL_OWNER, "root@example.com", ["admin"], project_id="apollo")
    with pytest.raises(InvalidArgument, match="unknown scope knowledge:delete"):
        env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:delete"])
    with pytest.raises(InvalidArgument, match="at least one"):
        env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", [" "])
    with pytest.raises(Forbidden, match="cannot see project zeta"):
        env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"], project_id="zeta")
    with pytest.raises(NotFound, match="no project has the id nowhere"):
        env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"], project_id="nowhere")
    with pytest.raises(InvalidArgument, match="expires"):
        env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"], expires="soon")
    ada = env.rt.authentication.authenticate(
        env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"]).secret)
    with pytest.raises(Forbidden):
        env.rt.administration.mint_token(ada, "ada@example.com", ["knowledge:read"])
    assert env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"], project_id="~ada")


def test_hidden_and_missing_projects_get_byte_identical_answers(env: Env, tmp_path: Path) -> None:
    """"zeta" exists here but Ada may not see it; in a second store it does not exist at all."""
    empty_store = open_store(str(tmp_path / "empty.db"))
    try:
        empty = runtime_over(empty_store, tmp_path)
        empty.administration.add_user(LOCAL_OWNER, "ada@example.com", "member")
        env.rt.administration.add_user(LOCAL_OWNER, "bob@example.com", "member", handle="bob")
        env.rt.administration.archive_project(LOCAL_OWNER, "apollo")
        member_scopes = [s for s in SCOPES if s != "admin"]
        ada_here = env.rt.authentication.authenticate(
            env.rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", member_scopes).secret)
        ada_there = empty.authentication.authenticate(
            empty.administration.mint_token(LOCAL_OWNER, "ada@example.com", member_scopes).secret)
        for project in ("zeta", "~bob", "apollo"):  # no grant; another member's home; archived
            here, there = [], []
            for service, p, answers in ((env.rt.authorization, ada_here, here),
                                        (empty.authorization, ada_there, there)):
                for action in ("knowledge:read", "knowledge:write", "memory:read", "memory:write", "project:list"):
                    with pytest.raises(NotFound) as caught:
                        service.authorize(p, action, project)  # type: ignore[arg-type]
                    answers.append((type(caught.value), caught.value.args, str(caught.value).encode()))
            assert here == there
            assert here[0][2] == f"Not found: {project}".encode()
    finally:
        empty_store.close()


def test_durations_and_since() -> None:
    assert parse_duration("90d").days == 90
    assert parse_duration("12h").total_seconds() == 12 * 3600
    assert parse_duration("30m").total_seconds() == 1800
    assert parse_duration("2w").days == 14
    for bad in ("", "0d", "90", "d", "-1d", "1y", "99999d"):
        with pytest.raises(InvalidArgument, match="--expires"):
            parse_duration(bad)
    assert since_from("2026-01-31") == "2026-01-31T00:00:00.000000Z"
    assert since_from("2026-01-31T12:00:00+01:00") == "2026-01-31T11:00:00.000000Z"
    with pytest.raises(InvalidArgument, match="--since"):
        since_from("last week")
