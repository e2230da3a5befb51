"""Browser sign-in credentials on both backends: passwords, one-time links, throttled failures (concurrent
attempts too, over the real server), browser sessions, and the two commands that set them (`notewell user
passwd`, `notewell user login-link`)."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from argon2 import PasswordHasher
from typer.testing import CliRunner, Result

from conftest import run_cli
from mcp_world import ServerThread
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER
from notewell.access.sign_in import (
    LINK_PATH,
    SESSION_IDLE,
    SESSION_RENEW_AFTER,
    SESSION_SWEEP,
    UNKNOWN_BUCKETS,
    SignInService,
    Throttle,
    TooManyFailures,
    link_hash,
    session_hash,
)
from notewell.cli.app import app
from notewell.errors import Forbidden, InvalidArgument, StoreCannotWrite, Unauthenticated
from notewell.runtime import Runtime, open_runtime
from notewell.web.app import build_web_app

PAST = "2020-01-01T00:00:00.000000Z"
QUICK = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)  # argon2id, cheap: the counting is tested


class Clock:
    """A clock the test moves: no test waits for the throttle's window."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def rt(store_url: str, tmp_path: Path) -> Iterator[Runtime]:
    (tmp_path / "vault").mkdir()
    runtime = open_runtime(str(tmp_path / "vault"), store_url)
    runtime.administration.add_user(LOCAL_OWNER, "ada@example.com", "member")
    runtime.administration.add_user(LOCAL_OWNER, "root@example.com", "admin")
    yield runtime
    runtime.close()


def test_password_signs_in_and_is_stored_as_an_argon2id_hash(rt: Runtime) -> None:
    svc = rt.sign_in
    svc.set_password(LOCAL_OWNER, "ada@example.com", "correct horse")
    user = rt.store.identity.user_by_email("ada@example.com")
    assert user is not None
    stored = rt.store.credentials.password_hash(user.id)
    assert stored is not None and stored.startswith("$argon2id$") and "correct horse" not in stored
    assert svc.sign_in_with_password("ADA@example.com ", "correct horse", "127.0.0.1").id == user.id
    for email, password in (("ada@example.com", "wrong horse"), ("nobody@example.com", "correct horse"),
                            ("root@example.com", "correct horse"),  # root has no password
                            ("adaPassword1!", "")):  # a password typed into the email field
        with pytest.raises(Unauthenticated, match="Email or password is wrong"):
            svc.sign_in_with_password(email, password, "127.0.0.1")
    actions = [(e.action, e.target, e.detail.get("reason")) for e in rt.store.audit.list_since()]
    assert ("auth.sign_in", "ada@example.com", None) in actions
    assert ("auth.sign_in_failed", "ada@example.com", "wrong password") in actions
    assert ("auth.sign_in_failed", "(no such user)", "no such user") in actions  # what was typed is not kept
    assert all("correct horse" not in str(e.detail) for e in rt.store.audit.list_since())
    assert not [e for e in rt.store.audit.list_since() if "password1" in f"{e.target} {e.detail}".lower()]
    with rt.store.tables.reading() as reader:  # nor anywhere in the store (the throttle's keys)
        for table in rt.store.tables.tables():
            assert not [r for r in reader.rows(table) if "password1" in str(r).lower()], table.name


def test_password_rules_and_who_may_set_one(rt: Runtime) -> None:
    with pytest.raises(InvalidArgument, match="password: is too short"):
        rt.sign_in.set_password(LOCAL_OWNER, "ada@example.com", "short")
    ada = rt.store.identity.user_by_email("ada@example.com")
    assert ada is not None
    as_ada = user_principal(ada)
    rt.sign_in.set_password(as_ada, "ada@example.com", "my own secret")
    with pytest.raises(Forbidden, match="only your own password"):
        rt.sign_in.set_password(as_ada, "root@example.com", "not my account")


def test_failures_pause_the_account_then_the_address(rt: Runtime) -> None:
    assert Throttle() == Throttle(per_account=5, per_address=20)  # the defaults; smaller ones keep this test quick
    svc = SignInService(rt.store, rt.authorization, rt.administration, rt.audit, Throttle(per_account=2, per_address=3),
                        QUICK, clock=Clock())
    svc.set_password(LOCAL_OWNER, "ada@example.com", "correct horse")
    for _ in range(2):
        with pytest.raises(Unauthenticated):
            svc.sign_in_with_password("ada@example.com", "guess", "10.0.0.1")
    with pytest.raises(TooManyFailures, match="Too many failed sign-ins"):  # even the right password now
        svc.sign_in_with_password("ada@example.com", "correct horse", "10.0.0.2")
    # another account from another address is not paused
    svc.set_password(LOCAL_OWNER, "root@example.com", "root secret")
    assert svc.sign_in_with_password("root@example.com", "root secret", "10.0.0.2").email == "root@example.com"
    # many accounts from one address pause the address
    for n in range(3):
        with pytest.raises(Unauthenticated):
            svc.sign_in_with_password(f"x{n}@example.com", "guess", "10.0.0.3")
    with pytest.raises(TooManyFailures):
        svc.sign_in_with_password("root@example.com", "root secret", "10.0.0.3")
    # an email of no one is paused as an account is, from any address: a pause never tells who has an account
    for n in range(2):
        with pytest.raises(Unauthenticated):
            svc.sign_in_with_password("ghost@example.com", "guess", f"10.0.1.{n}")
    with pytest.raises(TooManyFailures):
        svc.sign_in_with_password("ghost@example.com", "guess", "10.0.1.9")


def test_a_success_is_not_counted_and_a_failure_is_for_the_window(rt: Runtime) -> None:
    clock = Clock()
    svc = SignInService(rt.store, rt.authorization, rt.administration, rt.audit, Throttle(per_account=2), QUICK,
                        clock=clock)
    svc.set_password(LOCAL_OWNER, "ada@example.com", "correct horse")
    for _ in range(3):  # each attempt is counted before its check; a success takes its count back
        assert svc.sign_in_with_password("ada@example.com", "correct horse", "10.0.0.1").email == "ada@example.com"
    with pytest.raises(Unauthenticated):
        svc.sign_in_with_password("ada@example.com", "guess", "10.0.0.1")
    assert svc.sign_in_with_password("ada@example.com", "correct horse", "10.0.0.1")
    clock.now += timedelta(minutes=14)
    with pytest.raises(Unauthenticated):
        svc.sign_in_with_password("ada@example.com", "guess again", "10.0.0.1")
    with pytest.raises(TooManyFailures):
        svc.sign_in_with_password("ada@example.com", "correct horse", "10.0.0.1")
    clock.now += timedelta(minutes=1, seconds=1)  # the first failure is 15 minutes old: one is counted now
    assert svc.sign_in_with_password("ada@example.com", "correct horse", "10.0.0.1")


def test_concurrent_attempts_get_no_more_checks_than_the_limit(rt: Runtime) -> None:
    """19 POST /signin at once for one account (18 wrong, 1 right), over the real server: at most
    Throttle.per_account (5) passwords are checked and found wrong; every other attempt is paused (429)."""
    limit = Throttle().per_account
    svc = SignInService(rt.store, rt.authorization, rt.administration, rt.audit,
                        hasher=PasswordHasher(time_cost=2, memory_cost=16384, parallelism=1), clock=Clock())
    svc.set_password(LOCAL_OWNER, "ada@example.com", "correct horse")
    passwords = [f"wrong guess {n}" for n in range(18)]
    passwords.insert(9, "correct horse")
    start = threading.Barrier(len(passwords), timeout=60)
    with ServerThread(build_web_app(replace(rt, sign_in=svc))) as server:
        base = f"http://127.0.0.1:{server.port}"
        with httpx.Client(base_url=base) as client:
            form = client.get("/signin")
            found = re.search(r'name="csrf" value="([^"]+)"', form.text)
            assert found is not None
            cookies = dict(client.cookies)

        def attempt(password: str) -> httpx.Response:
            with httpx.Client(base_url=base, cookies=cookies, timeout=60) as one:
                start.wait()
                return one.post("/signin", data={"email": "ada@example.com", "password": password,
                                                 "csrf": found.group(1)})

        with ThreadPoolExecutor(len(passwords)) as pool:
            answers = [a.status_code for a in pool.map(attempt, passwords)]
    assert set(answers) <= {401, 429, 303}, answers
    assert answers.count(401) <= limit and answers.count(303) <= 1, answers
    checked = [e.detail.get("reason") for e in rt.store.audit.list_since()
               if e.action == "auth.sign_in_failed" and e.target == "ada@example.com"]
    assert len(checked) == answers.count(401) and set(checked) <= {"wrong password"}


def test_a_link_signs_in_once_and_only_before_it_expires(rt: Runtime) -> None:
    svc = rt.sign_in
    link = svc.make_link(LOCAL_OWNER, "ada@example.com", "http://notes.example:8000/")
    assert link.url.startswith("http://notes.example:8000" + LINK_PATH)
    secret = link.url.rsplit("/", 1)[1]
    assert svc.link_user(secret) is not None  # peeking does not use it
    assert svc.sign_in_with_link(secret, "127.0.0.1").email == "ada@example.com"
    assert svc.link_user(secret) is None
    with pytest.raises(Unauthenticated, match="used, expired or unknown"):
        svc.sign_in_with_link(secret, "127.0.0.1")
    ada = rt.store.identity.user_by_email("ada@example.com")
    assert ada is not None
    rt.store.credentials.add_link(link_hash("nwl_expired"), ada.id, PAST, PAST)
    with pytest.raises(Unauthenticated):
        svc.sign_in_with_link("nwl_expired", "127.0.0.1")
    assert all(secret not in str(e.detail) and secret not in e.target for e in rt.store.audit.list_since())


def test_deactivation_ends_sessions_and_refuses_links(rt: Runtime) -> None:
    svc = rt.sign_in
    user = rt.store.identity.user_by_email("ada@example.com")
    assert user is not None
    begun = svc.start_session(user.id)
    assert svc.session(begun.secret).principal.email == "ada@example.com"
    secret = svc.make_link(LOCAL_OWNER, "ada@example.com", "http://x").url.rsplit("/", 1)[1]
    rt.administration.set_user_active(LOCAL_OWNER, "ada@example.com", False)
    with pytest.raises(Unauthenticated, match="deactivated"):
        svc.session(begun.secret)
    with pytest.raises(Unauthenticated):
        svc.sign_in_with_link(secret, "127.0.0.1")
    rt.administration.set_user_active(LOCAL_OWNER, "ada@example.com", True)
    with pytest.raises(Unauthenticated, match="session has ended"):  # reactivating does not bring it back
        svc.session(begun.secret)


def test_signing_out_a_new_password_or_role_end_every_session(rt: Runtime) -> None:
    svc = rt.sign_in
    ada = rt.store.identity.user_by_email("ada@example.com")
    root = rt.store.identity.user_by_email("root@example.com")
    assert ada is not None and root is not None
    endings = [lambda: svc.sign_out(user_principal(ada)),
               lambda: svc.set_password(LOCAL_OWNER, "ada@example.com", "a new pass phrase"),
               lambda: svc.set_password(user_principal(ada), "ada@example.com", "her own new phrase"),
               lambda: rt.administration.set_role(LOCAL_OWNER, "ada@example.com", "staff")]
    for end in endings:
        before, another, others = svc.start_session(ada.id), svc.start_session(ada.id), svc.start_session(root.id)
        assert svc.session(before.secret).principal.email == "ada@example.com"
        end()
        for ended in (before, another):  # every session of hers, wherever it is
            with pytest.raises(Unauthenticated, match="session has ended"):
                svc.session(ended.secret)
        assert svc.session(svc.start_session(ada.id).secret).principal.email == "ada@example.com"
        assert svc.session(others.secret).principal.email == "root@example.com"  # nobody else's session
    current = svc.start_session(ada.id)
    rt.administration.set_role(LOCAL_OWNER, "ada@example.com", "staff")  # no change: no session ends
    assert svc.session(current.secret).principal.email == "ada@example.com"


def test_a_session_is_kept_as_a_hash_renewed_in_use_and_ends_unused(rt: Runtime) -> None:
    """The store keeps a session by the SHA-256 of its secret only; a session in use is renewed (at most every
    SESSION_RENEW_AFTER), one unused for SESSION_IDLE has ended, and each sign-in drops expired ones (at most
    SESSION_SWEEP)."""
    clock = Clock()
    svc = SignInService(rt.store, rt.authorization, rt.administration, rt.audit, clock=clock)
    ada = rt.store.identity.user_by_email("ada@example.com")
    assert ada is not None
    begun = svc.start_session(ada.id)
    assert len(begun.secret) == 43 and rt.store.credentials.web_session(begun.secret, "") is None
    kept = rt.store.credentials.web_session(session_hash(begun.secret), "")
    assert kept is not None and kept.user_id == ada.id and kept.expires_at == begun.expires_at
    assert not svc.session(begun.secret).renewed
    clock.now += SESSION_RENEW_AFTER + timedelta(seconds=1)
    assert svc.session(begun.secret).renewed  # in use: its end moves on
    clock.now += SESSION_IDLE - timedelta(seconds=1)
    assert svc.session(begun.secret).principal.user_id == ada.id
    for bad in ("", "x" * 43, begun.secret + "x", session_hash(begun.secret)):
        with pytest.raises(Unauthenticated, match="session has ended"):
            svc.session(bad)
    clock.now += SESSION_IDLE
    with pytest.raises(Unauthenticated, match="session has ended"):
        svc.session(begun.secret)
    expired = [svc.start_session(ada.id) for _ in range(SESSION_SWEEP + 5)]
    assert rt.store.credentials.web_session(session_hash(begun.secret), "") is None  # dropped by a sign-in
    clock.now += SESSION_IDLE + timedelta(seconds=1)

    def left() -> int:
        return sum(rt.store.credentials.web_session(session_hash(s.secret), "") is not None for s in expired)

    svc.start_session(ada.id)
    assert left() == 5  # one sign-in drops SESSION_SWEEP expired sessions, no more
    svc.start_session(ada.id)
    assert left() == 0


def test_passwd_and_login_link_commands(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    db = str(tmp_path / "index.db")
    added = run_cli("user", "add", "ada@example.com", "--role", "member", "--vault", str(vault), "--db", db)
    assert added.exit_code == 0
    result = _cli("user", "passwd", "ada@example.com", "--vault", str(vault), "--db", db, stdin="pass phrase\n")
    assert result.exit_code == 0, result.stderr
    assert "Password set for ada@example.com" in result.stdout
    short = _cli("user", "passwd", "ada@example.com", "--vault", str(vault), "--db", db, stdin="abc\n")
    assert short.exit_code == 1 and "password: is too short" in short.stderr
    link = run_cli("user", "login-link", "ada@example.com", "--base-url", "https://notes.example",
                   "--vault", str(vault), "--db", db)
    assert link.exit_code == 0, link.stderr
    assert link.stdout.strip().startswith("https://notes.example/signin/link/nwl_")
    missing = run_cli("user", "login-link", "who@example.com", "--vault", str(vault), "--db", db)
    assert missing.exit_code == 1 and "No user with email who@example.com" in missing.stderr
    rt = open_runtime(str(vault), db)
    try:
        assert rt.sign_in.sign_in_with_password("ada@example.com", "pass phrase", "127.0.0.1").email
    finally:
        rt.close()


def _cli(*args: str, stdin: str) -> Result:
    return CliRunner().invoke(app, list(args), input=stdin, catch_exceptions=False)


def test_a_hash_made_with_older_parameters_is_redone_at_sign_in(rt: Runtime) -> None:
    old = SignInService(rt.store, rt.authorization, rt.administration, rt.audit,
                        hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    old.set_password(LOCAL_OWNER, "ada@example.com", "correct horse")
    user = rt.store.identity.user_by_email("ada@example.com")
    assert user is not None
    before = rt.store.credentials.password_hash(user.id)
    rt.sign_in.sign_in_with_password("ada@example.com", "correct horse", "127.0.0.1")
    after = rt.store.credentials.password_hash(user.id)
    assert before is not None and after is not None and after != before
    assert not rt.sign_in.hasher.check_needs_rehash(after)


def test_a_session_is_kept_in_use_while_the_store_refuses_writes(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its renewal and the clearing of a message shown are bookkeeping: on a full or read-only store they raised
    StoreCannotWrite and every page of a signed-in browser was a 503 from then on."""
    clock = Clock()
    svc = SignInService(rt.store, rt.authorization, rt.administration, rt.audit, clock=clock)
    ada = rt.store.identity.user_by_email("ada@example.com")
    assert ada is not None
    begun = svc.start_session(ada.id)
    svc.set_session_message(begun.secret, "Saved")

    def refuse(*_args: object) -> None:
        raise StoreCannotWrite("the store's disk is full (test)", "free space", cause="full")

    for name in ("renew_web_session", "set_web_session_message"):
        monkeypatch.setattr(rt.store.credentials, name, refuse)
    clock.now += SESSION_RENEW_AFTER + timedelta(seconds=1)
    live = svc.session(begun.secret)
    assert live.principal.user_id == ada.id and not live.renewed and live.message == "Saved"
    svc.set_session_message(begun.secret, None)  # the message shown: done, or kept for later, never a failure
    with pytest.raises(StoreCannotWrite):
        svc.set_session_message(begun.secret, "Saved again")  # a page's own write still says it was refused


def test_an_email_of_no_one_falls_in_a_bucket_no_one_can_tell_without_the_store(rt: Runtime) -> None:
    """The buckets were sha256(email) % 256: anyone could find emails sharing a candidate's bucket, pause it with
    them, and tell from the candidate's answer (429, or 401 for an account) whether it has an account."""
    svc = SignInService(rt.store, rt.authorization, rt.administration, rt.audit, Throttle(), QUICK, clock=Clock())
    emails = [f"nobody{n}@example.com" for n in range(16)]
    plain = [int(hashlib.sha256(e.encode()).hexdigest(), 16) % UNKNOWN_BUCKETS for e in emails]
    keyed = [svc._bucket(e) for e in emails]
    assert keyed != plain and all(0 <= b < UNKNOWN_BUCKETS for b in keyed)
    again = SignInService(rt.store, rt.authorization, rt.administration, rt.audit, Throttle(), QUICK, clock=Clock())
    assert [again._bucket(e) for e in emails] == keyed  # every server of the store reads the same secret
