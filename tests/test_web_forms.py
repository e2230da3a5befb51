"""The web's forms refuse what no page of theirs sends, naming the field, instead of taking it for something
else: a blank forget reason, an 'active' or grant level not offered, a project id or name too long, a search
text too long or holding a NUL. Over real HTTP with a signed-in session (httpx posts what a browser would,
and what one would not), on the web test world."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape

import httpx

from mcp_world import World
from web_world import PASSWORDS, csrf_of, email


@contextmanager
def signed_in(base: str, handle: str) -> Iterator[tuple[httpx.Client, str]]:
    """A client signed in as ``handle`` with its password, and the session's CSRF token."""
    with httpx.Client(base_url=base, follow_redirects=True, timeout=30) as client:
        form = client.get("/signin").text
        signed = client.post("/signin", data={"csrf": csrf_of(form), "email": email(handle),
                                              "password": PASSWORDS[handle], "next": "/memories"})
        assert signed.status_code == 200, signed.text
        yield client, csrf_of(signed.text)


def test_a_memory_is_not_forgotten_without_a_reason(web_url: str, web_world: World) -> None:
    rt = web_world.runtime
    alice = rt.authentication.acting_as(email("alice"))
    ref = rt.memory.remember(alice, "The form test keeps this one.", path="forms").memory.ref
    with signed_in(web_url, "alice") as (client, csrf):
        for reason in ("", "   "):
            refused = client.post(f"/memories/{ref}/forget", data={"csrf": csrf, "reason": reason})
            assert refused.status_code == 400 and "reason: say why it is forgotten" in unescape(refused.text)
        nul = client.post(f"/memories/{ref}/forget", data={"csrf": csrf, "reason": "a\x00b"})
        assert nul.status_code == 400 and "NUL" in nul.text
        long = client.post(f"/memories/{ref}/forget", data={"csrf": csrf, "reason": "x" * 600})
        assert long.status_code == 400 and "is 600 characters; keep it to 500" in long.text
    assert rt.memory.get(alice, ref).deleted_at is None


def test_admin_forms_refuse_values_no_page_sends(web_url: str, web_world: World) -> None:
    rt = web_world.runtime
    admin = rt.authentication.acting_as(None)
    grants = rt.administration.project_grants(admin, "handbook")
    rt.administration.add_project(admin, "form-names")  # this test's own, renamed below
    with signed_in(web_url, "admin") as (client, csrf):
        maybe = client.post("/admin/users/active", data={"csrf": csrf, "email": email("bob"), "active": "maybe"})
        assert maybe.status_code == 400 and "active: must be one of yes, no" in maybe.text
        long_id = "p" * 70
        made = client.post("/admin/projects", data={"csrf": csrf, "id": long_id, "name": "", "description": ""})
        assert made.status_code == 400 and "must be 1-64 lower-case letters" in unescape(made.text)
        named = client.post("/admin/projects", data={"csrf": csrf, "id": "forms-test", "name": "n" * 201,
                                                     "description": ""})
        assert named.status_code == 400 and "name: is 201 characters; keep it to 200" in named.text
        level = client.post("/admin/projects/handbook/grants", data={"csrf": csrf, "email": email("bob"),
                                                                     "level": "admin"})
        assert level.status_code == 400 and "level: must be one of read, write" in level.text
        status = client.post("/admin/projects/handbook/status", data={"csrf": csrf, "status": "deleted"})
        assert status.status_code == 400 and "status: must be one of archived, active" in status.text
        bad_email = client.post("/admin/users", data={"csrf": csrf, "email": "<script>@x.test", "role": "member",
                                                      "name": ""})
        assert bad_email.status_code == 400 and "is not an email address" in bad_email.text
        no_grant = client.post("/admin/projects/handbook/ungrant", data={"csrf": csrf, "email": email("admin")})
        assert no_grant.status_code == 400 and "holds no grant on handbook" in no_grant.text  # the form's error
        for name in ("山田\u3000太郎", "می\u200cخواهم", "Zoë\u00a0Ng"):  # spaces and joiners of real names
            named = client.post("/admin/projects/form-names", data={"csrf": csrf, "name": name, "description": "d"})
            assert named.status_code == 200 and rt.store.identity.project("form-names").name == name  # type: ignore[union-attr]
        for bad in ("a\tb", "x\u202eevil", "tag\U000e0041"):  # a tab, a direction override, an invisible tag
            refused = client.post("/admin/projects/form-names", data={"csrf": csrf, "name": bad, "description": "d"})
            assert refused.status_code == 400 and "holds a control or invisible formatting character" in refused.text
    assert rt.administration.user(admin, email("bob")).active
    assert rt.store.identity.project(long_id[:64]) is None and rt.store.identity.project("forms-test") is None
    assert rt.administration.project_grants(admin, "handbook") == grants
    rt.administration.archive_project(admin, "form-names")  # out of the other tests' listings


def test_a_search_text_too_long_or_with_a_nul_is_refused_not_cut(web_url: str) -> None:
    with signed_in(web_url, "alice") as (client, _):
        for path in ("/search", "/memories", "/sessions"):
            long = client.get(path, params={"q": "a" * 1001})
            assert long.status_code == 200 and "q: is 1001 characters; keep it to 1000 or fewer" in long.text
            nul = client.get(path, params={"q": "ab\x00c"})
            assert "q: contains a NUL character" in nul.text and "\x00" not in nul.text


def test_the_last_active_admin_is_neither_demoted_nor_deactivated(web_url: str, web_world: World) -> None:
    """The users page hides a person's own role and Deactivate controls; a form posted anyway left the team
    with no admin but the server's command line. Refused while no other active admin is there."""
    rt = web_world.runtime
    admin = rt.authentication.acting_as(None)
    others = [u for u in rt.store.identity.users() if u.role == "admin" and u.active and u.email != email("admin")]
    assert others == []  # the world's one admin
    with signed_in(web_url, "admin") as (client, csrf):
        demoted = client.post("/admin/users/role", data={"csrf": csrf, "email": email("admin"), "role": "member"})
        assert demoted.status_code == 400 and "is the last active admin" in unescape(demoted.text)
        gone = client.post("/admin/users/active", data={"csrf": csrf, "email": email("admin"), "active": "no"})
        assert gone.status_code == 400 and "is the last active admin" in unescape(gone.text)
    still = rt.administration.user(admin, email("admin"))
    assert still.role == "admin" and still.active


def test_a_signed_in_persons_pages_are_not_kept_in_the_browsers_cache(web_url: str, web_world: World) -> None:
    """After signing out, Back showed private documents again from the cache: every page of a signed-in
    person's is sent with Cache-Control: no-store."""
    with signed_in(web_url, "alice") as (client, _):
        for path in ("/projects", "/memories", "/search?q=the"):
            answer = client.get(path)
            assert answer.status_code == 200 and answer.headers.get("cache-control") == "no-store", path


def test_a_token_name_too_long_is_named_with_its_own_length(web_url: str) -> None:
    with signed_in(web_url, "alice") as (client, csrf):
        refused = client.post("/settings/tokens", data={"csrf": csrf, "name": "n" * 500, "scopes": "memory:read",
                                                        "expires": "90d"})
        assert refused.status_code == 400 and "is 500 characters; keep it to 100" in unescape(refused.text)


def test_a_mint_sent_again_by_a_reload_mints_nothing_more(web_url: str, web_world: World) -> None:
    """Reloading the page a mint answered sends the form again: it mints nothing more and says so."""
    rt = web_world.runtime
    with signed_in(web_url, "alice") as (client, _):
        form = client.get("/settings/tokens").text
        once = re.search(r'name="once" value="([^"]+)"', form)
        assert once
        sent = {"csrf": csrf_of(form), "once": once.group(1), "name": "reloaded", "scopes": "memory:read",
                "expires": "90d"}
        first = client.post("/settings/tokens", data=sent)
        again = client.post("/settings/tokens", data=sent)
        assert first.status_code == again.status_code == 200
        secret = re.compile(r"nw_[0-9a-f]{12}_[A-Za-z0-9_-]{20,}")
        assert secret.search(first.text) and not secret.search(again.text)
        assert "This form was sent already" in unescape(again.text)
    named = [t for t in rt.store.identity.tokens() if t.name == "reloaded"]
    assert len(named) == 1 and named[0].id in again.text


def test_taught_knowledge_is_not_forgotten_without_a_reason(web_url: str, web_world: World) -> None:
    """A reason of spaces passes the field's `required`: the refusal is an error on the page (400) naming the
    field, where it was a status line like a success's ("VALIDATION: reason: must not be empty", 200)."""
    rt = web_world.runtime
    alice = rt.authentication.acting_as(email("alice"))
    taught = rt.brain.teach(alice, rule="Keep the form test's rule until a reason is given",
                            trigger="when testing forms").item
    with signed_in(web_url, "alice") as (client, csrf):
        for reason in ("", "   "):
            refused = client.post(f"/knowledge/{taught.ref}/retire", data={"csrf": csrf, "reason": reason})
            said = unescape(refused.text)
            assert refused.status_code == 400, refused.status_code
            assert 'role="alert">reason: say why it is forgotten' in said and "VALIDATION" not in said
            assert "Keep the form test&#39;s rule" in refused.text  # the list is still there, to try again
        nul = client.post(f"/knowledge/{taught.ref}/retire", data={"csrf": csrf, "reason": "a\x00b"})
        assert nul.status_code == 400 and 'role="alert">reason: ' in nul.text and "NUL" in nul.text
    assert rt.brain.knowledge(alice, limit=500)[0].ref == taught.ref  # still live, still the newest
    rt.brain.retire(alice, taught.ref, "the form test is done")
