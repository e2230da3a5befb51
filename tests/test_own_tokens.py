"""Self-service tokens: every active user mints, lists and revokes their own, never more than they hold,
on both backends; another person's token is answered exactly as a missing one."""

from __future__ import annotations

import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import psycopg
import pytest

from conftest import runtime_over
from notewell.access.administration import TokenStanding
from notewell.access.authentication import user_principal
from notewell.access.own_tokens import OWN_TOKEN_LIMIT, OwnTokenService
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.errors import Forbidden, InvalidArgument, NotFound, Unauthenticated
from notewell.runtime import Runtime
from notewell.store import open_store


@dataclass
class Env:
    rt: Runtime
    own: OwnTokenService

    def principal(self, email: str, scopes: str = "knowledge:read,memory:read,memory:write",
                  project: str | None = None) -> Principal:
        """The Principal of a real token minted for the user by the local owner."""
        minted = self.rt.administration.mint_token(LOCAL_OWNER, email, scopes.split(","), project_id=project)
        return self.rt.authentication.authenticate(minted.secret)


def _every(env: Env, p: Principal) -> list[TokenStanding]:
    """Every token of the caller's that the calling token reaches, oldest first: one page larger than them all."""
    return env.own.oldest(p, 10_000, 0)


@pytest.fixture
def env(store_url: str, tmp_path: Path) -> Iterator[Env]:
    store = open_store(store_url)
    rt = runtime_over(store, tmp_path)
    rt.administration.sync_vault_projects(["apollo", "zeta"])
    rt.administration.add_user(LOCAL_OWNER, "ada@example.com", "member")
    rt.administration.add_user(LOCAL_OWNER, "bo@example.com", "member")
    rt.administration.add_user(LOCAL_OWNER, "root@example.com", "admin")
    rt.administration.grant(LOCAL_OWNER, "ada@example.com", "apollo", "read")
    yield Env(rt, rt.own_tokens)
    store.close()


def test_a_member_mints_lists_uses_and_revokes_their_own_token(env: Env) -> None:
    ada = env.principal("ada@example.com")
    minted = env.own.mint(ada, ["memory:read", "knowledge:read"], name="  laptop ", expires="30d")
    assert minted.token.scopes == ("knowledge:read", "memory:read")
    assert minted.token.name == "laptop" and minted.token.expires_at is not None
    used = env.rt.authentication.authenticate(minted.secret)
    assert used.user_id == ada.user_id and used.scopes == frozenset({"knowledge:read", "memory:read"})
    listed = _every(env, ada)
    assert minted.token.id in [t.token.id for t in listed]
    assert all(t.token.user_id == ada.user_id for t in listed)
    revoked = env.own.revoke(used, minted.token.id)  # a token may revoke itself
    assert revoked.revoked_at is not None
    assert env.own.revoke(ada, minted.token.id).revoked_at == revoked.revoked_at  # twice changes nothing
    with pytest.raises(Unauthenticated):
        env.rt.authentication.authenticate(minted.secret)
    actions = [(e.action, e.detail.get("self")) for e in env.rt.store.audit.list_since()]
    assert ("token.mint", True) in actions and ("token.revoke", True) in actions


def test_a_person_demoted_still_sees_and_revokes_the_tokens_minted_as_admin(env: Env) -> None:
    """A token keeping a scope the role has lost (admin) is counted without it: the person, signed in or on
    a user-scoped token, still lists and revokes it; a narrower token of theirs still does not."""
    root = env.principal("root@example.com", "knowledge:read,memory:read,memory:write,sessions,admin")
    wide = env.own.mint(root, ["knowledge:read", "admin"], name="ops")
    narrow = env.principal("root@example.com", "memory:read")
    env.rt.administration.set_role(LOCAL_OWNER, "root@example.com", "member")
    reader = env.principal("root@example.com", "knowledge:read")  # all the wide token can still do
    user = env.rt.store.identity.user_by_email("root@example.com")
    assert user is not None
    signed_in = user_principal(user)  # what a browser session is
    assert wide.token.id in [t.token.id for t in _every(env, signed_in)]
    assert wide.token.id not in [t.token.id for t in _every(env, narrow)]
    assert wide.token.id in [t.token.id for t in _every(env, reader)]  # admin, lost with the role, is not counted
    assert env.own.revoke(signed_in, wide.token.id).revoked_at is not None


def test_a_page_of_ones_tokens_is_the_list_newest_first_for_every_caller(env: Env) -> None:
    """The web's /settings/tokens pages (OwnTokenService.newest): a signed-in person's page is the store's page
    (LIMIT and OFFSET), a narrower token's is cut from the tokens it reaches; either is the whole list
    (``oldest``) newest first."""
    wide = env.principal("ada@example.com")
    narrow = env.principal("ada@example.com", "memory:read")
    for n in range(5):
        env.own.mint(wide, ["memory:read"] if n % 2 else ["knowledge:read"], name=f"paged {n}")
    user = env.rt.store.identity.user_by_email("ada@example.com")
    assert user is not None
    for caller in (user_principal(user), wide, narrow):
        every = [t.token.id for t in reversed(_every(env, caller))]
        paged = [t.token.id for start in range(0, 9, 2) for t in env.own.newest(caller, 2, start)]
        assert paged == every, caller.token_id
    assert len(_every(env, narrow)) < len(_every(env, wide))


def test_a_token_never_mints_more_than_its_holder_has(env: Env) -> None:
    """Each refusal names its field as every other refusal does (``field``, and the message starting with it)."""
    ada = env.principal("ada@example.com", "knowledge:read")
    with pytest.raises(Forbidden, match=r"^scopes: a member may not hold admin") as beyond_role:
        env.own.mint(env.principal("ada@example.com"), ["admin"])  # beyond the role
    with pytest.raises(Forbidden, match=r"^scopes: this token lacks memory:write") as beyond_token:
        env.own.mint(ada, ["knowledge:read", "memory:write"])  # beyond the caller's token
    bound = env.principal("ada@example.com", "knowledge:read", project="apollo")
    with pytest.raises(Forbidden, match=r"^project: this token is bound to apollo") as elsewhere:
        env.own.mint(bound, ["knowledge:read"])
    assert env.own.mint(bound, ["knowledge:read"], project_id="apollo").token.project_id == "apollo"
    root = env.principal("root@example.com", "admin,knowledge:read")
    assert env.own.mint(root, ["admin"]).token.scopes == ("admin",)
    with pytest.raises(Forbidden, match=r"^scopes: the admin scope needs a user-scoped token") as admin_bound:
        env.own.mint(root, ["admin"], project_id="apollo")
    fields = [e.value.field for e in (beyond_role, beyond_token, elsewhere, admin_bound)]
    assert fields == ["scopes", "scopes", "project", "scopes"]


def test_bad_input_names_the_field(env: Env) -> None:
    ada = env.principal("ada@example.com")
    for scopes, field in (([], "scopes"), (["memory:read", "telepathy"], "scopes")):
        with pytest.raises(InvalidArgument) as caught:
            env.own.mint(ada, scopes)
        assert caught.value.field == field
    with pytest.raises(InvalidArgument) as caught:
        env.own.mint(ada, ["memory:read"], expires="soon")
    assert caught.value.field == "expires"
    for name in ("x" * 101, "lap\x00top"):
        with pytest.raises(InvalidArgument) as caught:
            env.own.mint(ada, ["memory:read"], name=name)
        assert caught.value.field == "name"


def test_hidden_and_missing_answer_alike(env: Env) -> None:
    ada = env.principal("ada@example.com")
    bo = env.principal("bo@example.com")
    bos_token = env.own.mint(bo, ["memory:read"]).token.id
    with pytest.raises(NotFound) as other:
        env.own.revoke(ada, bos_token)
    with pytest.raises(NotFound) as missing:
        env.own.revoke(ada, "000000000000")
    assert str(other.value).replace(bos_token, "ID") == str(missing.value).replace("000000000000", "ID")
    assert bos_token not in [t.token.id for t in _every(env, ada)]
    with pytest.raises(NotFound) as hidden_project:
        env.own.mint(ada, ["knowledge:read"], project_id="zeta")  # exists, not visible to ada
    with pytest.raises(NotFound) as missing_project:
        env.own.mint(ada, ["knowledge:read"], project_id="nope")
    assert str(hidden_project.value).replace("zeta", "P") == str(missing_project.value).replace("nope", "P")


def test_a_secret_given_as_an_id_is_never_repeated(env: Env) -> None:
    """DELETE and GET /me/tokens/{id} and the web page's revoke answer a text that is not a token id, a secret
    in it or not, without repeating it (a token id alone is repeated)."""
    ada = env.principal("ada@example.com")
    minted = env.own.mint(ada, ["memory:read"])
    secret = minted.secret
    for given in (secret, f"Bearer {secret}", secret[:30], secret[16:]):
        for call in (env.own.revoke, env.own.get):
            with pytest.raises(NotFound) as refused:
                call(ada, given)
            assert secret[16:24] not in str(refused.value) and "the text given is not shown" in str(refused.value)
    assert env.rt.authentication.authenticate(secret).token_id == minted.token.id  # nothing was revoked
    with pytest.raises(NotFound, match=r"^Not found: token 000000000000$"):
        env.own.revoke(ada, "000000000000")


def test_the_local_owner_and_deactivated_users_have_no_own_tokens(env: Env) -> None:
    with pytest.raises(Forbidden, match="local owner"):
        _every(env, LOCAL_OWNER)
    ada = env.principal("ada@example.com")
    env.rt.administration.set_user_active(LOCAL_OWNER, "ada@example.com", False)
    with pytest.raises(Forbidden, match="active user"):
        env.own.mint(ada, ["memory:read"])


def test_a_new_token_holds_every_scope_the_person_may_grant_but_admin(env: Env) -> None:
    """The web's mint form asks the service which scopes to offer and which to check: with the defaults a
    new token has sessions (the brain tools), and admin and knowledge:write only when asked for."""
    from notewell.access.authentication import user_principal

    ada = user_principal(env.rt.administration.user(LOCAL_OWNER, "ada@example.com"))
    root = user_principal(env.rt.administration.user(LOCAL_OWNER, "root@example.com"))
    every_but_admin = ("knowledge:read", "knowledge:write", "memory:read", "memory:write", "sessions")
    defaults = ("knowledge:read", "memory:read", "memory:write", "sessions")
    assert env.own.grantable_scopes(ada) == every_but_admin
    assert env.own.default_scopes(ada) == defaults
    assert env.own.grantable_scopes(root) == (*every_but_admin, "admin")
    assert env.own.default_scopes(root) == defaults
    narrow = env.principal("ada@example.com", "knowledge:read,sessions")  # never beyond the caller's token
    assert env.own.default_scopes(narrow) == ("knowledge:read", "sessions")
    minted = env.own.mint(ada, env.own.default_scopes(ada))
    assert minted.token.scopes == defaults


HELD_BEFORE = 95  # the person's live tokens when the mints start
AT_ONCE = 12  # mints at once, each on a server of its own (its own store, its own connections)


@contextmanager
def _store_held(store_url: str, at_begin: list[int]) -> Iterator[Callable[[], int]]:
    """Another process's write transaction on the store's tokens, while the block runs; yields how many of the
    store's connections wait on a lock now. SQLite: BEGIN IMMEDIATE (whoever writes waits; reads go on), the
    waiters those threads that ``_reaching_begin`` saw reach the store's own BEGIN IMMEDIATE (``at_begin``).
    PostgreSQL: LOCK TABLE tokens IN EXCLUSIVE MODE (an insert into tokens waits; reads go on), the waiters
    those pg_stat_activity shows waiting on a lock."""
    if store_url.startswith("postgres"):
        holder, watcher = psycopg.connect(store_url), psycopg.connect(store_url, autocommit=True)
        try:
            holder.execute("LOCK TABLE tokens IN EXCLUSIVE MODE")
            yield lambda: len(watcher.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                                              " AND wait_event_type = 'Lock'").fetchall())
            holder.commit()
        finally:
            holder.close()
            watcher.close()
        return
    lite = sqlite3.connect(store_url, isolation_level=None)
    try:
        lite.execute("BEGIN IMMEDIATE")
        yield lambda: len(at_begin)
        lite.execute("COMMIT")
    finally:
        lite.close()


def _reaching_begin(at_begin: list[int]) -> Callable[[FrameType, str, Any], None]:
    """A profile function for one thread (sys.setprofile) that notes the thread in ``at_begin`` when it first
    enters the SQLite store's ``_immediate``, whose first statement, BEGIN IMMEDIATE, waits while another
    connection holds the store."""
    seen = False

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal seen
        if not seen and event == "call" and frame.f_code.co_name == "_immediate":
            seen = True
            at_begin.append(threading.get_ident())

    return profile


def test_mints_at_once_from_many_servers_never_pass_the_most_allowed(env: Env, store_url: str,
                                                                     tmp_path: Path) -> None:
    """A person holding 95 live tokens mints 12 at once, each on its own server over the one store: exactly 5 are
    minted, the other 7 refused as one past the limit is. The mints are started while another process holds
    the store's tokens, and it lets go only once all 12 wait on the store: each then counts and adds in turn.
    Counting first and adding in a transaction of its own, every mint counted 95 and all 12 were added (107)."""
    ada = env.rt.administration.user(LOCAL_OWNER, "ada@example.com")
    for n in range(HELD_BEFORE):
        env.rt.administration.mint_token(LOCAL_OWNER, ada.email, ["memory:read"], name=f"held {n}")
    stores = [open_store(store_url) for _ in range(AT_ONCE)]
    servers = [runtime_over(s, tmp_path) for s in stores]
    minted: list[str] = []
    refused: list[str] = []
    failed: list[BaseException] = []
    said = threading.Lock()

    at_begin: list[int] = []  # the SQLite threads come to the store's BEGIN IMMEDIATE

    def mint(server: Runtime, n: int) -> None:
        sys.setprofile(_reaching_begin(at_begin))
        try:
            token = server.own_tokens.mint(user_principal(ada), ["memory:read"], name=f"at once {n}").token.id
            with said:
                minted.append(token)
        except Forbidden as exc:
            with said:
                refused.append(str(exc))
        except BaseException as exc:
            with said:
                failed.append(exc)
        finally:
            sys.setprofile(None)

    threads = [threading.Thread(target=mint, args=(server, n)) for n, server in enumerate(servers)]
    try:
        with _store_held(store_url, at_begin) as waiting:
            for t in threads:
                t.start()
            for _ in range(60_000):  # all 12 wait on the store (a 10-minute bound, met at once)
                if waiting() >= AT_ONCE or failed or not any(t.is_alive() for t in threads):
                    break
                threading.Event().wait(0.01)
            assert waiting() >= AT_ONCE and not failed, failed
    finally:
        for t in threads:
            if t.ident is not None:
                t.join()
        for s in stores:
            s.close()
    assert not failed, failed
    live = [t for t in env.rt.store.identity.tokens(ada.id) if t.revoked_at is None]
    assert (len(minted), len(live)) == (OWN_TOKEN_LIMIT - HELD_BEFORE, OWN_TOKEN_LIMIT), (len(minted), len(live))
    assert refused == [f"Forbidden: you hold {OWN_TOKEN_LIMIT} active tokens, the most allowed; revoke one first"
                       ] * (AT_ONCE - len(minted)), refused
