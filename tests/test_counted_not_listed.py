"""Questions a COUNT answers are asked of the store as counts, on both backends (issue 27): the last-admin check
(a role change or a deactivation on the web's /admin/users) read every user to count a few. Checked through its
door, its answers the same as before, with the store's whole listing (``users()``) recorded and never called."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_world import ServerThread
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from notewell.store.shared.identity import SqlIdentity
from notewell.web.app import build_web_app
from web_world import csrf_of

ROOT, ADA, ALICE = "root@example.com", "ada@example.com", "alice@example.com"
PASSWORD = "a long pass phrase"
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


@contextmanager
def signed_in(base: str, who: str) -> Iterator[tuple[httpx.Client, str]]:
    with httpx.Client(base_url=base, timeout=30) as client:
        form = client.get("/signin")
        signed = client.post("/signin", data={"csrf": csrf_of(form.text), "email": who, "password": PASSWORD,
                                              "next": "/admin/users"})
        assert signed.status_code == 303, signed.text
        yield client, csrf_of(client.get("/admin/users").text)


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
        with ServerThread(build_web_app(rt)) as server, signed_in(f"http://127.0.0.1:{server.port}", ROOT) as (
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

