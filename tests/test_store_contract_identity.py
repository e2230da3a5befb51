"""Users, projects, grants, tokens and the audit log: the same answers on SQLite and PostgreSQL.

One script of repository calls runs against each backend; every answer (and every Conflict) must be
the same on both. The services then run on each backend: a revoked token fails.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import runtime_over
from notewell.access.principal import LOCAL_OWNER
from notewell.errors import Conflict, Unauthenticated
from notewell.records.identity import Grant, Project, TokenRecord, User
from notewell.runtime import Runtime
from notewell.store import Store, open_store

T0 = "2026-11-29T10:00:00.000000Z"


def user(handle: str, email: str, role: str = "member") -> User:
    return User(id=f"u_{handle}", email=email, name=handle.title(), handle=handle, role=role,  # type: ignore[arg-type]
                created_at=T0)


def project(pid: str, kind: str = "ordinary", owner: str | None = None) -> Project:
    return Project(id=pid, name=pid.title(), description=f"about {pid}", kind=kind, status="active",  # type: ignore[arg-type]
                   owner_user_id=owner, created_at=T0)


def script(store: Store) -> list[object]:
    """Every call's answer, or the name of the error it raised."""
    out: list[object] = []

    def do(call: Callable[[], object]) -> None:
        try:
            out.append(call())
        except Conflict:
            out.append("Conflict")

    ident = store.identity
    do(lambda: ident.add_user(user("zoe", "Zoe@Example.com"), project("~zoe", "home", "u_zoe")))
    do(lambda: ident.add_user(user("adam", "adam@example.com", "admin")))
    do(lambda: ident.add_user(user("émile", "Émile@example.com")))
    do(lambda: ident.add_user(user("zoe2", "zoe@example.COM")))  # same email key
    do(lambda: ident.add_user(user("adam", "other@example.com")))  # same handle
    do(lambda: ident.add_user(user("bea", "bea@example.com"), project("~zoe", "home", "u_bea")))  # home exists
    do(lambda: ident.user_by_email("BEA@example.com"))  # rolled back with its home
    do(lambda: [u.email for u in ident.users()])
    do(lambda: ident.user_by_email(" zoe@EXAMPLE.com "))
    do(lambda: ident.user_by_handle("émile"))
    do(lambda: ident.set_user_active("u_zoe", False))
    do(lambda: ident.set_user_role("u_zoe", "staff"))
    do(lambda: ident.user("u_zoe"))
    do(lambda: ident.session_generation("u_zoe"))
    do(lambda: ident.end_sessions("u_zoe"))
    do(lambda: ident.end_sessions("u_zoe"))
    do(lambda: ident.end_sessions("nobody"))
    do(lambda: [ident.session_generation(uid) for uid in ("u_zoe", "u_adam", "nobody")])
    for pid in ("zeta", "Apollo", "apollo", "_x", "hermes-2"):
        do(lambda pid=pid: ident.add_project(project(pid)))
    do(lambda: ident.add_project(project("apollo")))
    do(lambda: ident.update_project(Project(**{**project("apollo").__dict__, "name": "Apollo 2", "framework": "dj",
                                               "custom_name": True})))
    do(lambda: ident.projects())
    do(lambda: ident.project("nope"))
    do(lambda: ident.set_grant(Grant("u_zoe", "apollo", "read", T0)))
    do(lambda: ident.set_grant(Grant("u_zoe", "zeta", "write", T0)))
    do(lambda: ident.set_grant(Grant("u_adam", "apollo", "write", T0)))
    do(lambda: ident.set_grant(Grant("u_zoe", "apollo", "write", T0)))  # changes the level
    do(lambda: ident.grants_for_user("u_zoe"))
    do(lambda: ident.grants_for_project("apollo"))
    do(lambda: ident.remove_grant("u_zoe", "zeta"))
    do(lambda: ident.remove_grant("u_zoe", "zeta"))
    do(lambda: ident.grant("u_zoe", "apollo"))
    for i, (uid, pid) in enumerate((("u_zoe", None), ("u_adam", "apollo"), ("u_zoe", "zeta"))):
        tok = TokenRecord(f"tok{i}", uid, f"laptop {i}", ("knowledge:read", "memory:read"), pid,
                          f"2026-11-29T10:00:0{3 - i}.000000Z", expires_at="2027-01-01T00:00:00Z" if i else None)
        do(lambda tok=tok: ident.add_token(tok, f"hash{tok.id}"))
    do(lambda: ident.tokens())
    do(lambda: ident.tokens("u_zoe"))
    do(lambda: ident.token_with_hash("tok1"))
    do(lambda: ident.revoke_token("tok1", "2026-11-29T11:00:00Z"))
    do(lambda: ident.revoke_token("tok1", "2026-11-29T12:00:00Z"))
    do(lambda: ident.revoke_token("nope", "2026-11-29T12:00:00Z"))
    do(lambda: ident.touch_token("tok0", "2026-11-29T11:30:00Z"))
    do(lambda: ident.record_tool_call("tok0", "brain_get_user_style", "2026-11-29T11:31:00Z"))
    do(lambda: ident.record_tool_call("tok0", "listProjects", "2026-11-29T11:30:59Z"))  # older: not kept
    do(lambda: ident.token("tok1"))
    do(lambda: ident.token("tok0"))
    audit = store.audit
    for i in range(5):
        do(lambda i=i: audit.append(f"2026-11-29T10:0{i}:00Z", "u_adam", None if i % 2 else "tok1", "grant.set",
                                    f"apollo/{i}", {"level": "write", "ünïcode": ["✓", i], "n": None}))
    do(lambda: audit.append("2026-11-29T10:09:00Z", "u_zoe", None, "token.mint", "tok9"))
    do(lambda: audit.list_since())
    do(lambda: audit.list_since("2026-11-29T10:02:00Z"))
    do(lambda: audit.list_since("2026-11-29T10:02:00Z", limit=2))
    do(lambda: audit.list_since(limit=0))
    return out


def test_identity_and_audit_answer_alike(tmp_path: Path, pg_url: str) -> None:
    answers = []
    for db in (str(tmp_path / "index.db"), pg_url):
        store = open_store(db)
        try:
            answers.append(script(store))
        finally:
            store.close()
    lite, pg = answers
    assert "Conflict" in lite
    last = [a for a in lite if isinstance(a, TokenRecord) and a.id == "tok0"][-1]
    assert (last.last_tool, last.last_tool_at) == ("brain_get_user_style", "2026-11-29T11:31:00Z")
    for i, (a, b) in enumerate(zip(lite, pg, strict=True)):
        assert a == b, f"call {i}: {a!r} != {b!r}"


@pytest.fixture
def rt(store_url: str, tmp_path: Path) -> Iterator[Runtime]:
    store = open_store(store_url)
    yield runtime_over(store, tmp_path)
    store.close()


def test_the_last_tool_call_is_kept_with_the_token(rt: Runtime) -> None:
    rt.administration.add_user(LOCAL_OWNER, "lee@example.com", "member", handle="lee")
    minted = rt.administration.mint_token(LOCAL_OWNER, "lee@example.com", ["knowledge:read"])
    caller = rt.authentication.authenticate(minted.secret)
    rt.authentication.record_tool_call(LOCAL_OWNER, "listProjects")  # no token: nothing to keep
    rt.authentication.record_tool_call(caller, "listProjects")
    rt.authentication.record_tool_call(caller, "searchKnowledge")
    assert rt.authentication.tool_calls.flush()
    kept = rt.store.identity.token(minted.token.id)
    assert kept is not None and kept.last_tool == "searchKnowledge" and kept.last_tool_at is not None


def test_a_call_never_waits_for_its_tokens_row(rt: Runtime, store_url: str) -> None:
    """Another writer holds the token's row (another server writing it, on PostgreSQL; the database's write
    lock, on SQLite): noting the call returns at once, and the tool is written once the row is free."""
    rt.administration.add_user(LOCAL_OWNER, "ada@example.com", "member", handle="ada")
    minted = rt.administration.mint_token(LOCAL_OWNER, "ada@example.com", ["knowledge:read"])
    caller = rt.authentication.authenticate(minted.secret)
    other = open_store(store_url)
    noted = threading.Event()
    try:
        with other.identity.sql.transaction():
            other.identity.touch_token(minted.token.id, "2026-11-29T11:30:00Z")  # holds the row, and the lock
            call = threading.Thread(target=lambda: (rt.authentication.record_tool_call(caller, "readDoc"), noted.set()))
            call.start()
            assert noted.wait(10)  # the lock is still held here
            assert not rt.authentication.tool_calls.flush(timeout=0.2)
        assert rt.authentication.tool_calls.flush()
    finally:
        other.close()
    kept = rt.store.identity.token(minted.token.id)
    assert kept is not None and kept.last_tool == "readDoc"


def test_a_revoked_token_fails_at_its_next_call(rt: Runtime) -> None:
    rt.administration.add_user(LOCAL_OWNER, "kim@example.com", "member", handle="kim")
    minted = rt.administration.mint_token(LOCAL_OWNER, "kim@example.com", ["knowledge:read"])
    assert rt.authentication.authenticate(minted.secret).user_id == minted.token.user_id
    rt.administration.revoke_token(LOCAL_OWNER, minted.token.id)
    with pytest.raises(Unauthenticated):
        rt.authentication.authenticate(minted.secret)
    assert [e.action for e in rt.administration.audit_log(LOCAL_OWNER)][-2:] == ["token.mint", "token.revoke"]
