"""Questions a COUNT answers are asked of the store as counts, on both backends (issue 27): the last-admin check
(a role change or a deactivation on the web's /admin/users) and `notewell doctor`'s tokens check read every user,
and the doctor every token, to count a few. Each is checked through its door, its answers the same as before, with
the store's whole listings (``users()``, ``tokens()``) recorded and never called."""

from __future__ import annotations

import json
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import make_vault, run_cli
from mcp_world import ServerThread
from notewell.access.principal import LOCAL_OWNER
from notewell.records.identity import TokenRecord
from notewell.runtime import open_runtime
from notewell.store.shared.identity import SqlIdentity
from notewell.web.app import build_web_app
from test_web_sessions import PASSWORD, sign_in

ROOT, ADA, ALICE = "root@example.com", "ada@example.com", "alice@example.com"
LAST = "is the last active admin; make another person admin first, so that someone can still manage the team"


def never_listed(monkeypatch: pytest.MonkeyPatch, *names: str) -> list[tuple[str, Any]]:
    """Record each call of SqlIdentity's ``names`` (both backends' identity store), then make it."""
    asked: list[tuple[str, Any]] = []
    for name in names:
        real = getattr(SqlIdentity, name)

        def record(self: SqlIdentity, *args: Any, _name: str = name, _real: Any = real) -> Any:
            asked.append((_name, args))
            return _real(self, *args)

        monkeypatch.setattr(SqlIdentity, name, record)
    return asked


def test_the_last_active_admin_is_kept_by_a_count(store_url: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An admin may not demote or deactivate the last active admin (a deactivated admin or a member does not
    count); with another active admin, either may. The rule is unchanged; no user's row is read to apply it."""
    (tmp_path / "vault").mkdir()
    rt = open_runtime(str(tmp_path / "vault"), store_url)
    try:
        for who, role in ((ROOT, "admin"), (ALICE, "member"), (ADA, "admin")):
            rt.administration.add_user(LOCAL_OWNER, who, role)
        rt.sign_in.set_password(LOCAL_OWNER, ROOT, PASSWORD)
        rt.administration.set_user_active(LOCAL_OWNER, ADA, False)
        asked = never_listed(monkeypatch, "users")
        with ServerThread(build_web_app(rt)) as server, sign_in(f"http://127.0.0.1:{server.port}", ROOT) as (
                client, csrf):
            def post(path: str, **form: str) -> httpx.Response:
                return client.post(path, data={"csrf": csrf, **form})

            def refused(answer: httpx.Response) -> None:
                assert answer.status_code == 400 and f"{ROOT} {LAST}" in unescape(answer.text), answer.text

            refused(post("/admin/users/role", email=ROOT, role="member"))
            refused(post("/admin/users/active", email=ROOT, active="no"))
            assert post("/admin/users/active", email=ADA, active="yes").status_code == 303
            assert post("/admin/users/active", email=ADA, active="no").status_code == 303  # ROOT stays
            refused(post("/admin/users/role", email=ROOT, role="staff"))
            assert post("/admin/users/active", email=ADA, active="yes").status_code == 303
            assert post("/admin/users/role", email=ADA, role="member").status_code == 303
            refused(post("/admin/users/active", email=ROOT, active="no"))
            assert post("/admin/users/role", email=ADA, role="admin").status_code == 303
            assert post("/admin/users/role", email=ROOT, role="member").status_code == 303  # ADA stays
        assert not asked, asked
        users = {u.email: (u.role, u.active) for u in rt.store.identity.users()}
        assert users == {ROOT: ("member", True), ADA: ("admin", True), ALICE: ("member", True)}
    finally:
        rt.close()


def test_doctor_counts_the_active_tokens_in_the_store(store_url: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`notewell doctor` read every token and every user to count the active tokens: the store counts them, by the
    same rule (revoked and expired ones left out; a deactivated user's and those with no usable scope said apart)."""
    vault = make_vault(tmp_path, {"p/a.md": "word\n"})
    rt = open_runtime(str(vault), store_url)
    try:
        admin = rt.administration
        for who, role in ((ROOT, "admin"), (ALICE, "member"), (ADA, "staff")):
            admin.add_user(LOCAL_OWNER, who, role)
        for scopes in (["knowledge:read"], ["memory:read", "memory:write"], ["admin"], ["knowledge:read", "admin"]):
            admin.mint_token(LOCAL_OWNER, ROOT, scopes)
        admin.mint_token(LOCAL_OWNER, ALICE, ["memory:read"])
        admin.revoke_token(LOCAL_OWNER, admin.mint_token(LOCAL_OWNER, ALICE, ["memory:read"]).token.id)
        alice = admin.user(LOCAL_OWNER, ALICE)
        for n, expires in enumerate(("2000-01-02T00:00:00Z", "2999-01-02T00:00:00Z")):  # one past, one not
            rt.store.identity.add_token(TokenRecord(
                id=f"e0e0e0e0e0e{n}", user_id=alice.id, name="dated", scopes=("memory:read",), project_id=None,
                created_at="2000-01-01T00:00:00Z", expires_at=expires), "not a hash")
        admin.mint_token(LOCAL_OWNER, ADA, ["knowledge:read"])
        admin.mint_token(LOCAL_OWNER, ADA, ["sessions"])
        admin.set_user_active(LOCAL_OWNER, ADA, False)  # her two fail until she is reactivated
        admin.set_role(LOCAL_OWNER, ROOT, "member")  # his token minted with admin alone: no usable scope
    finally:
        rt.close()
    asked = never_listed(monkeypatch, "users", "tokens")
    result = run_cli("doctor", "--json", "--vault", str(vault), "--db", store_url, "--port", "9151")
    tokens = {c["check"]: c for c in json.loads(result.stdout)}["tokens"]
    assert tokens["status"] == "ok" and tokens["found"] == (
        "5 active tokens; 2 more of deactivated users fail until they are reactivated; 1 more have no usable scope "
        "(their users' roles allow none of the scopes they were minted with)"), tokens
    assert not asked, asked
