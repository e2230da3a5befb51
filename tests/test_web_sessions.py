"""Browser sessions over the web door, on both backends: the store holds nothing that signs one in.

Someone who can read a backup (SQLite's online backup, or every table of the PostgreSQL database as pg_dump
writes it) reads every row of every table, the tables an export leaves out too, and tries to build a session
cookie from anything in them: each value as the cookie itself, and each value as the key of the signed cookie
older Notewells used (itsdangerous over {"uid", "gen", "csrf"}). The live server refuses every one. Then the
session's life over real HTTP: signing in, the CSRF token, signing out (everywhere), deactivation and a new
password, expiry, the cookie's attributes, and the line an admin's change leaves for the next page (once).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from base64 import b64encode
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import itsdangerous
import psycopg
import pytest
from starlette.testclient import TestClient

from mcp_world import ServerThread
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import Runtime, open_runtime
from notewell.web.app import build_web_app
from web_world import csrf_of

ADMIN, ALICE = "root@example.com", "alice@example.com"
PASSWORD = "a long pass phrase"
COOKIE = "notewell_session"


@pytest.fixture
def served(store_url: str, tmp_path: Path) -> Iterator[tuple[Runtime, str]]:
    """A store with an admin and a member (both with passwords), its web door served over real HTTP."""
    (tmp_path / "vault").mkdir()
    rt = open_runtime(str(tmp_path / "vault"), store_url)
    for email, role in ((ADMIN, "admin"), (ALICE, "member")):
        rt.administration.add_user(LOCAL_OWNER, email, role)
        rt.sign_in.set_password(LOCAL_OWNER, email, PASSWORD)
    with ServerThread(build_web_app(rt)) as server:
        yield rt, f"http://127.0.0.1:{server.port}"
    rt.close()


@contextmanager
def sign_in(base: str, email: str) -> Iterator[tuple[httpx.Client, str]]:
    """A client signed in as ``email``, and the CSRF token its pages carry."""
    with httpx.Client(base_url=base, timeout=30) as client:
        form = client.get("/signin")
        signed = client.post("/signin", data={"csrf": csrf_of(form.text), "email": email, "password": PASSWORD,
                                              "next": "/projects"})
        assert signed.status_code == 303, signed.text
        page = client.get("/projects")
        assert page.status_code == 200
        yield client, csrf_of(page.text)


def admin_page(base: str, cookie: str) -> int:
    """What GET /admin/users answers a browser whose only cookie is the session cookie ``cookie``."""
    with httpx.Client(base_url=base, timeout=30) as client:
        return client.get("/admin/users", headers={"Cookie": f"{COOKIE}={cookie}"}).status_code


def backup_rows(store_url: str, tmp_path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, as someone holding a backup reads it: SQLite through a copy made with its
    online backup, PostgreSQL straight from the database (what pg_dump writes)."""
    if store_url.startswith("postgresql"):
        with psycopg.connect(store_url) as conn:
            names = [r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
                " AND table_type = 'BASE TABLE'")]
            return {name: conn.execute(f'SELECT * FROM "{name}"').fetchall() for name in names}
    copy = tmp_path / "stolen.db"
    with sqlite3.connect(store_url) as live, sqlite3.connect(copy) as stolen:
        live.backup(stolen)
    with sqlite3.connect(copy) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name: conn.execute(f'SELECT * FROM "{name}"').fetchall() for name in names}


def _texts(rows: dict[str, list[tuple[Any, ...]]]) -> set[str]:
    return {v.decode("latin-1") if isinstance(v, bytes) else v
            for table in rows.values() for row in table for v in row if isinstance(v, (str, bytes)) and v}


def _old_cookie(key: str, payload: dict[str, Any]) -> str:
    """The signed cookie older Notewells (Starlette's session middleware) accepted, made with ``key``."""
    data = b64encode(json.dumps(payload).encode("utf-8"))
    return itsdangerous.TimestampSigner(key).sign(data).decode("utf-8")


def test_nothing_in_a_backup_signs_a_browser_in(served: tuple[Runtime, str], store_url: str,
                                                tmp_path: Path) -> None:
    rt, base = served
    # sessions are live: whatever the store keeps of them is in the backup
    with sign_in(base, ADMIN) as (admin, _), sign_in(base, ALICE):
        real = admin.cookies[COOKIE]
        assert admin.get("/admin/users").status_code == 200
        rows = backup_rows(store_url, tmp_path)
        texts = _texts(rows)
        assert real not in texts and all(real not in t for t in texts)  # the cookie's secret is nowhere
        admin_user = rt.store.identity.user_by_email(ADMIN)
        assert admin_user is not None
        generations = {r[0]: r[-1] for r in rows["users"]}  # what a reader learns: ids and generations
        gen = rt.store.identity.session_generation(admin_user.id)
        assert admin_user.id in texts and gen is not None
        payload = {"uid": admin_user.id, "gen": gen, "csrf": "x"}
        accepted = []
        for value in sorted(texts):
            tries = [value] if len(value) < 16 else [value, _old_cookie(value, payload)]
            for cookie in tries:
                if re.fullmatch(r"[!#-+\--:<-\[\]-~]+", cookie) and admin_page(base, cookie) == 200:
                    accepted.append(value)
        assert accepted == [], f"a cookie built from the backup signed in as admin: {accepted[:3]}"
        assert generations  # the reader saw every user
        assert admin.get("/admin/users").status_code == 200  # the real session still works


def _rows(store_url: str, tmp_path: Path, table: str) -> list[tuple[Any, ...]]:
    return backup_rows(store_url, tmp_path).get(table, [])


def test_signing_in_sets_a_random_http_only_cookie_the_store_keeps_as_a_hash(served: tuple[Runtime, str],
                                                                             store_url: str, tmp_path: Path) -> None:
    _, base = served
    with httpx.Client(base_url=base, timeout=30) as client:
        form = client.get("/signin")
        before = csrf_of(form.text)
        signed = client.post("/signin", data={"csrf": before, "email": ALICE, "password": PASSWORD})
        assert signed.status_code == 303
        set_cookie = next(v for v in signed.headers.get_list("set-cookie") if v.startswith(f"{COOKIE}="))
        attributes = {a.strip().split("=")[0].lower() for a in set_cookie.split(";")[1:]}
        assert {"httponly", "samesite", "path", "max-age"} <= attributes and "samesite=lax" in set_cookie.lower()
        secret = client.cookies[COOKIE]
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", secret)
        kept = _rows(store_url, tmp_path, "web_sessions")
        assert [r[0] for r in kept] == [hashlib.sha256(secret.encode()).hexdigest()]  # its hash, not it
        page = client.get("/projects")
        assert page.status_code == 200 and ALICE in page.text
        assert csrf_of(page.text) != before  # nothing from before sign-in carries over
    with httpx.Client(base_url=base, timeout=30) as stranger:  # a made-up secret of the right shape
        assert stranger.get("/projects", headers={"Cookie": f"{COOKIE}={'A' * 43}"}).status_code == 303


def test_https_only_cookies_are_secure(store_url: str, tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    rt = open_runtime(str(tmp_path / "vault"), store_url)
    rt.administration.add_user(LOCAL_OWNER, ALICE, "member")
    rt.sign_in.set_password(LOCAL_OWNER, ALICE, PASSWORD)
    try:
        with TestClient(build_web_app(rt, https_only=True), base_url="https://notes.example") as client:
            form = client.get("/signin")
            assert all("secure" in v.lower() for v in form.headers.get_list("set-cookie"))
            signed = client.post("/signin", data={"csrf": csrf_of(form.text), "email": ALICE, "password": PASSWORD},
                                 follow_redirects=False)
            assert signed.status_code == 303
            cookies = signed.headers.get_list("set-cookie")
            assert any(v.startswith(f"{COOKIE}=") for v in cookies) and all("secure" in v.lower() for v in cookies)
    finally:
        rt.close()


def test_a_form_needs_its_own_sessions_csrf_token(served: tuple[Runtime, str]) -> None:
    rt, base = served
    with sign_in(base, ALICE) as (alice, token), sign_in(base, ALICE) as (_, other_token):
        before = len(rt.store.identity.tokens())
        for form in ({}, {"csrf": ""}, {"csrf": "wrong"}, {"csrf": other_token},  # another session's token
                     {"csrf": alice.cookies[COOKIE]}):  # the cookie's secret itself
            refused = alice.post("/settings/tokens", data={"name": "forged", "scopes": "knowledge:read", **form})
            assert refused.status_code == 403 and "CSRF" in refused.text
        assert len(rt.store.identity.tokens()) == before
        made = alice.post("/settings/tokens", data={"name": "mine", "scopes": "knowledge:read", "csrf": token})
        assert made.status_code == 200 and len(rt.store.identity.tokens()) == before + 1
    with httpx.Client(base_url=base, timeout=30) as anonymous:  # signing in takes the form's token too
        anonymous.get("/signin")
        refused = anonymous.post("/signin", data={"csrf": "wrong", "email": ALICE, "password": PASSWORD})
        assert refused.status_code == 403 and COOKIE not in anonymous.cookies


def test_a_form_from_another_sites_page_is_refused_even_with_its_token(served: tuple[Runtime, str]) -> None:
    """Login CSRF by cookie tossing: a sibling host plants its own ``notewell_form`` cookie in the victim's
    browser, reads the sign-in token that cookie gives from the real page, and has the victim's browser post
    the attacker's credentials. The token is right; the browser's Origin and Sec-Fetch-Site say where the form
    came from, and that refuses it. A script that sends neither header is judged by the token alone."""
    _, base = served
    host = base.removeprefix("http://")
    with httpx.Client(base_url=base, timeout=30) as attacker:
        token = csrf_of(attacker.get("/signin").text)
        planted = attacker.cookies["notewell_form"]
    forged = {"csrf": token, "email": ALICE, "password": PASSWORD}
    for headers in ({"Origin": "https://evil.example"}, {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
                    {"Origin": f"http://attacker.{host}"}, {"Sec-Fetch-Site": "same-site"},
                    {"Sec-Fetch-Site": "cross-site", "Origin": base}):
        with httpx.Client(base_url=base, timeout=30, cookies={"notewell_form": planted}) as victim:
            refused = victim.post("/signin", data=forged, headers=headers)
            assert refused.status_code == 403 and "another site" in refused.text, headers
            assert COOKIE not in victim.cookies
    with httpx.Client(base_url=base, timeout=30) as browser:  # this site's own page, as a browser sends it
        page = browser.get("/signin")
        signed = browser.post("/signin", data={"csrf": csrf_of(page.text), "email": ALICE, "password": PASSWORD},
                              headers={"Origin": "null", "Sec-Fetch-Site": "same-origin"})  # Chromium's
        assert signed.status_code == 303 and COOKIE in browser.cookies
        # the port a proxy may leave out of the Host (nginx's $host) does not matter: the host name does
        page = browser.get("/settings/tokens")
        made = browser.post("/settings/tokens", data={"name": "mine", "scopes": "knowledge:read",
                                                      "csrf": csrf_of(page.text)},
                            headers={"Origin": "https://127.0.0.1:8443"})
        assert made.status_code == 200, made.text


def test_signing_out_ends_every_session_of_the_user(served: tuple[Runtime, str], store_url: str,
                                                    tmp_path: Path) -> None:
    rt, base = served
    with sign_in(base, ALICE) as (here, token), sign_in(base, ALICE) as (there, _), sign_in(base, ADMIN) as (admin, _):
        copied = here.cookies[COOKIE]
        out = here.post("/signout", data={"csrf": token})
        assert out.status_code == 303 and COOKIE not in here.cookies
        for cookie in (copied, there.cookies[COOKIE]):  # this browser's (a copy of it) and her other browser's
            with httpx.Client(base_url=base, timeout=30) as browser:
                ended = browser.get("/projects", headers={"Cookie": f"{COOKIE}={cookie}"})
                assert ended.status_code == 303 and ended.headers["location"].startswith("/signin")
        alice = rt.store.identity.user_by_email(ALICE)
        assert alice is not None
        assert [r for r in _rows(store_url, tmp_path, "web_sessions") if r[1] == alice.id] == []  # deleted
        assert admin.get("/admin/users").status_code == 200  # nobody else's session


@pytest.mark.parametrize("ending", ["deactivated", "new password", "new role"])
def test_deactivation_a_new_password_or_role_end_the_users_sessions(served: tuple[Runtime, str],
                                                                    ending: str) -> None:
    rt, base = served
    with sign_in(base, ALICE) as (one, _), sign_in(base, ALICE) as (two, _):
        if ending == "deactivated":
            rt.administration.set_user_active(LOCAL_OWNER, ALICE, False)
        elif ending == "new password":
            rt.sign_in.set_password(LOCAL_OWNER, ALICE, "another pass phrase")
        else:
            rt.administration.set_role(LOCAL_OWNER, ALICE, "staff")
        why = "deactivated" if ending == "deactivated" else "Your session has ended"
        for client in (one, two):
            ended = client.get("/projects")
            assert ended.status_code == 303 and ended.headers["location"] == "/signin?next=/projects"
            assert COOKIE not in client.cookies
            assert why in client.get("/signin").text  # the sign-in page says why, once
            assert why not in client.get("/signin").text


def test_servers_sharing_a_store_share_its_sessions(served: tuple[Runtime, str], store_url: str,
                                                     tmp_path: Path) -> None:
    _, base = served
    other = open_runtime(str(tmp_path / "vault"), store_url)
    try:
        with ServerThread(build_web_app(other)) as second, sign_in(base, ADMIN) as (admin, token):
            with httpx.Client(base_url=f"http://127.0.0.1:{second.port}", timeout=30,
                              cookies={COOKIE: admin.cookies[COOKIE]}) as elsewhere:
                assert elsewhere.get("/admin/users").status_code == 200
                assert elsewhere.post("/signout", data={"csrf": token}).status_code == 303  # the same token
            assert admin.get("/admin/users").status_code == 303  # signed out there: here too
    finally:
        other.close()


def test_a_second_tabs_sign_in_form_sent_after_the_first_signed_in_goes_on(served: tuple[Runtime, str]) -> None:
    """Two tabs on the sign-in page; the first signs in; the second's form, its token made with the form cookie
    the sign-in dropped, was refused with 403 (CSRF). It goes on to its page; another site's post still 403."""
    _, base = served
    with httpx.Client(base_url=base, timeout=30) as browser:
        second_tab = csrf_of(browser.get("/signin").text)
        first_tab = csrf_of(browser.get("/signin").text)
        signed = browser.post("/signin", data={"csrf": first_tab, "email": ALICE, "password": PASSWORD})
        assert signed.status_code == 303 and COOKIE in browser.cookies
        stale = {"csrf": second_tab, "email": ALICE, "password": PASSWORD, "next": "/memories"}
        went = browser.post("/signin", data=stale, headers={"Sec-Fetch-Site": "same-origin"})
        assert went.status_code == 303 and went.headers["location"] == "/memories"
        forged = browser.post("/signin", data=stale, headers={"Sec-Fetch-Site": "cross-site"})
        assert forged.status_code == 403


def confirmed(client: httpx.Client, path: str, form: dict[str, str]) -> str:
    """POST the form, then GET the page it redirects to: that page's notice, which a reload no longer shows."""
    sent = client.post(path, data=form)
    assert sent.status_code == 303, sent.text
    landed = client.get(sent.headers["location"])
    assert landed.status_code == 200
    shown = re.findall(r'<p class="notice" role="status">([^<]*)</p>', landed.text)
    assert len(shown) == 1, landed.text
    assert 'class="notice"' not in client.get(sent.headers["location"]).text  # once: not on a reload
    return shown[0]


def test_every_admin_change_is_confirmed_once_on_the_next_page(served: tuple[Runtime, str]) -> None:
    """After an admin's change the page they landed on said nothing of it: each now names what was done."""
    _, base = served
    changes = [
        ("/admin/users", {"email": " bob@example.com ", "name": "", "role": "member"},
         "Added bob@example.com as member."),
        ("/admin/users/role", {"email": ALICE, "role": "staff"}, f"Set the role of {ALICE} to staff."),
        ("/admin/users/active", {"email": ALICE, "active": "no"}, f"Deactivated {ALICE}."),
        ("/admin/users/active", {"email": ALICE, "active": "yes"}, f"Reactivated {ALICE}."),
        ("/admin/projects", {"id": "apollo", "name": "", "description": ""}, "Added the project apollo."),
        ("/admin/projects/apollo", {"name": "Apollo", "description": "to the moon"},
         "Saved the name and description of apollo."),
        ("/admin/projects/apollo/grants", {"email": ALICE, "level": "read"}, f"Granted {ALICE} read on apollo."),
        ("/admin/projects/apollo/ungrant", {"email": ALICE}, f"Removed the grant of {ALICE} on apollo."),
        ("/admin/projects/apollo/status", {"status": "archived"}, "Archived apollo."),
        ("/admin/projects/apollo/status", {"status": "active"}, "Unarchived apollo."),
    ]
    with sign_in(base, ADMIN) as (admin, token):
        for path, form, said in changes:
            assert unescape(confirmed(admin, path, {"csrf": token, **form})) == said, path


def test_a_revoked_tokens_name_is_confirmed_as_text(served: tuple[Runtime, str]) -> None:
    """The confirmation quotes what a person typed (a token's name): it is text on the page, never markup."""
    rt, base = served
    named = rt.administration.mint_token(LOCAL_OWNER, ALICE, ["knowledge:read"], name="<b>ci</b>").token
    with sign_in(base, ADMIN) as (admin, token):
        said = confirmed(admin, f"/admin/tokens/{named.id}/revoke", {"csrf": token})
    assert said == f"Revoked the token &lt;b&gt;ci&lt;/b&gt; ({named.id})."


def test_the_admins_token_page_shows_what_each_tokens_next_call_meets(served: tuple[Runtime, str]) -> None:
    """As `notewell token list` does: a deactivated user's token was `active` with its Revoke button, and a
    demoted admin's token still showed the admin scope."""
    rt, base = served
    rt.administration.add_user(LOCAL_OWNER, "dora@example.com", "admin")
    demoted = rt.administration.mint_token(LOCAL_OWNER, "dora@example.com", ["knowledge:read", "admin"]).token
    lone = rt.administration.mint_token(LOCAL_OWNER, "dora@example.com", ["admin"]).token  # nothing left to use
    idle = rt.administration.mint_token(LOCAL_OWNER, ALICE, ["knowledge:read"]).token
    rt.administration.set_role(LOCAL_OWNER, "dora@example.com", "member")
    rt.administration.set_user_active(LOCAL_OWNER, ALICE, False)
    with sign_in(base, ADMIN) as (admin, _token):
        shown = admin.get("/admin/tokens")
    assert shown.status_code == 200
    rows = {m.group(1): m.group(0) for m in re.finditer(r'<tr><td data-label="User">.*?<span class="hint">'
                                                        r'([0-9a-f]{12})</span>.*?</tr>', shown.text, re.S)}
    assert "user deactivated" in rows[idle.id] and "Revoke" in rows[idle.id], rows[idle.id]
    scopes = re.search(r'data-label="Scopes">(.*?)</td>', rows[demoted.id], re.S)
    assert scopes is not None and unescape(re.sub(r"<[^>]+>", "", scopes.group(1))).split() == [
        "knowledge:read", "(minted", "also", "admin,", "which", "a", "member", "may", "not", "hold)"], scopes
    assert '<td data-label="State">no usable scope</td>' in rows[lone.id] and "Revoke" in rows[lone.id]
    assert '<td data-label="State">active</td>' in rows[demoted.id]


def test_ones_own_token_page_shows_what_each_tokens_next_call_meets(served: tuple[Runtime, str]) -> None:
    """/settings/tokens, as the admin's page and token list: a demoted admin's tokens showed the admin scope and
    'active', a token minted with admin alone too."""
    rt, base = served
    rt.administration.add_user(LOCAL_OWNER, "dora@example.com", "admin")
    rt.sign_in.set_password(LOCAL_OWNER, "dora@example.com", PASSWORD)
    mixed = rt.administration.mint_token(LOCAL_OWNER, "dora@example.com", ["knowledge:read", "admin"]).token
    lone = rt.administration.mint_token(LOCAL_OWNER, "dora@example.com", ["admin"]).token
    rt.administration.set_role(LOCAL_OWNER, "dora@example.com", "member")
    with sign_in(base, "dora@example.com") as (dora, _token):
        shown = dora.get("/settings/tokens")
    assert shown.status_code == 200
    rows = {m.group(1): m.group(0) for m in re.finditer(r'<tr>\s*<td data-label="Name">.*?<span class="hint">'
                                                        r'([0-9a-f]{12})</span>.*?</tr>', shown.text, re.S)}

    def cell(token_id: str, label: str) -> str:
        found = re.search(rf'data-label="{label}">(.*?)</td>', rows[token_id], re.S)
        assert found is not None, rows[token_id]
        return " ".join(unescape(re.sub(r"<[^>]+>", "", found.group(1))).split())

    assert cell(mixed.id, "Scopes") == "knowledge:read (minted also admin, which a member may not hold)"
    assert cell(mixed.id, "State") == "active"
    assert cell(lone.id, "Scopes") == "none (minted also admin, which a member may not hold)"
    assert cell(lone.id, "State") == "no usable scope" and "Revoke" in rows[lone.id]
