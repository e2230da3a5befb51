"""The web door's paged lists, over real HTTP: /settings/tokens and /admin/users listed every row on one page; a
revoke or a change on a later page sent the person back to the first; /memories listed the newest 50 items of
taught knowledge and no way to older ones, and its search and /sessions' stopped at 50 without saying so; and a
page number that is no number was read as the first page. Small page sizes (monkeypatched: the server runs in
this process) stand for the real ones. The lists the store pages are tested on both backends."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

from mcp_world import ServerThread, World
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import Runtime, open_runtime
from notewell.web.app import build_web_app
from notewell.web.pages import admin, browse, memories, sessions, tokens
from test_web_forms import signed_in
from web_world import csrf_of, email

ADMIN, ALICE = "root@example.com", "alice@example.com"
PASSWORD = "a long pass phrase"
RULES = ["Run the database migrations before deploying the billing service",
         "Prefer small pull requests that reviewers can read in ten minutes",
         "Pin every Python dependency to an exact version in the lock file",
         "Write the changelog entry in the same commit as the change",
         "Never log a customer's card number, not even its last digits",
         "Keep the staging cluster's data anonymised after every restore",
         "Answer an on-call page within fifteen minutes, day or night"]


@pytest.fixture
def served(store_url: str, tmp_path: Path) -> Iterator[tuple[Runtime, str]]:
    """A store with an admin and a member (both with passwords), its web door served over real HTTP."""
    (tmp_path / "vault").mkdir()
    rt = open_runtime(str(tmp_path / "vault"), store_url)
    for who, role in ((ADMIN, "admin"), (ALICE, "member")):
        rt.administration.add_user(LOCAL_OWNER, who, role)
        rt.sign_in.set_password(LOCAL_OWNER, who, PASSWORD)
    with ServerThread(build_web_app(rt)) as server:
        yield rt, f"http://127.0.0.1:{server.port}"
    rt.close()


@contextmanager
def sign_in(base: str, who: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=30) as client:
        form = client.get("/signin")
        signed = client.post("/signin", data={"csrf": csrf_of(form.text), "email": who, "password": PASSWORD,
                                              "next": "/projects"})
        assert signed.status_code == 303, signed.text
        yield client


def walk(client: httpx.Client, first: str, rows: Callable[[str], list[str]], what: str) -> list[str]:
    """Every row of a paged list, following its "next" link (rel=next in the pager of ``what``) from ``first``."""
    seen: list[str] = []
    link: str | None = first
    while link is not None:
        answer = client.get(unescape(link))
        assert answer.status_code == 200, (link, answer.status_code)
        seen += rows(answer.text)
        nav = re.search(rf'<nav aria-label="Pages of {what}".*?</nav>', answer.text, re.S)
        following = re.search(r'<a href="([^"]+)" rel="next">', nav.group(0)) if nav else None
        link = following.group(1) if following else None
    return seen


def token_ids(html: str) -> list[str]:
    return re.findall(r'<td data-label="Name">[^<]*<span class="hint">([0-9a-f]{12})</span>', html)


def recording(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, asked: list[Any]) -> None:
    """Record each call of ``owner.name`` (its arguments), then make it (raising=False: the old store had none)."""
    real = getattr(owner, name, None)

    def record(*args: Any) -> Any:
        asked.append(args)
        assert real is not None
        return real(*args)

    monkeypatch.setattr(owner, name, record, raising=False)


def recorded(monkeypatch: pytest.MonkeyPatch, owner: object, *names: str) -> list[list[Any]]:
    """The calls of each named method of ``owner`` (each call's arguments), recorded from now on."""
    calls: list[list[Any]] = [[] for _ in names]
    for name, asked in zip(names, calls, strict=True):
        recording(monkeypatch, owner, name, asked)
    return calls


def cells(label: str) -> Callable[[str], list[str]]:
    """What reads a page's cells of the column ``label``."""
    return lambda html: [unescape(e) for e in re.findall(rf'<td data-label="{label}">([^<]*)</td>', html)]


def test_ones_own_tokens_are_paged_newest_first_and_a_revoke_returns_to_its_page(
        served: tuple[Runtime, str], monkeypatch: pytest.MonkeyPatch) -> None:
    rt, base = served
    monkeypatch.setattr(tokens, "SHOWN", 3, raising=False)
    alice = rt.authentication.acting_as(ALICE)
    minted = [rt.own_tokens.mint(alice, ["knowledge:read"], name=f"paged {n}").token.id for n in range(7)]
    whole, paged = recorded(monkeypatch, rt.store.identity, "tokens", "tokens_newest")
    with sign_in(base, ALICE) as client:
        seen = walk(client, "/settings/tokens", token_ids, "tokens")
        assert not whole and paged and {args[1] for args in paged} == {4}, (whole, paged)  # one page, one more
        every = rt.own_tokens.oldest(alice, 10_000, 0)
        assert seen == [t.token.id for t in reversed(every)] and set(seen) == set(minted)
        second = client.get("/settings/tokens?page=2")
        on_it = token_ids(second.text)[0]
        revoked = client.post(f"/settings/tokens/{on_it}/revoke", data={"csrf": csrf_of(second.text), "page": "2"})
        assert revoked.status_code == 303 and revoked.headers["location"] == "/settings/tokens?page=2"
        back = client.get(revoked.headers["location"])
        assert on_it in token_ids(back.text) and "Revoked the token" in back.text
        past = client.get("/settings/tokens?page=100")
        assert "No tokens past your newest 297" in past.text and 'href="/settings/tokens">Newest tokens' in past.text


def test_the_admins_users_are_paged_and_a_change_returns_to_its_page(
        served: tuple[Runtime, str], monkeypatch: pytest.MonkeyPatch) -> None:
    rt, base = served
    monkeypatch.setattr(admin, "USERS_SHOWN", 3, raising=False)
    for n in range(7):
        rt.administration.add_user(LOCAL_OWNER, f"paged{n}@example.com", "member")
    whole, paged = recorded(monkeypatch, rt.store.identity, "users", "users_page")
    with sign_in(base, ADMIN) as client:
        seen = walk(client, "/admin/users", cells("Email"), "users")
        assert not whole and paged and {args[0] for args in paged} == {4}, (whole, paged)
        assert seen == [u.email for u in rt.administration.users(LOCAL_OWNER)] and len(seen) == 9
        second = client.get("/admin/users?page=2")
        assert 'rel="prev">Previous users</a>' in second.text and 'rel="next">Next users</a>' in second.text
        member = unescape(re.findall(r'<td data-label="Email">([^<]*)</td>', second.text)[0])
        csrf = csrf_of(second.text)
        for path, form in (("/admin/users/active", {"active": "no"}), ("/admin/users/role", {"role": "staff"})):
            changed = client.post(path, data={"csrf": csrf, "email": member, "page": "2", **form})
            assert changed.status_code == 303 and changed.headers["location"] == "/admin/users?page=2", path
        assert rt.administration.user(LOCAL_OWNER, member).role == "staff"
        link = client.post("/admin/users/link", data={"csrf": csrf, "email": ADMIN, "page": "2"})
        assert link.status_code == 200 and member in link.text and 'rel="prev">Previous users</a>' in link.text


def test_the_admins_token_page_reads_one_page_and_a_revoke_returns_to_its_page(
        served: tuple[Runtime, str], monkeypatch: pytest.MonkeyPatch) -> None:
    rt, base = served
    monkeypatch.setattr(admin, "TOKENS_SHOWN", 3)
    for n in range(7):
        rt.administration.mint_token(LOCAL_OWNER, ALICE, ["memory:read"], name=f"paged {n}")
    whole, paged, owners = recorded(monkeypatch, rt.store.identity, "tokens", "tokens_newest", "users_by_id")
    with sign_in(base, ADMIN) as client:
        seen = walk(client, "/admin/tokens", lambda html: re.findall(r'<span class="hint">([0-9a-f]{12})</span>',
                                                                      html), "tokens")
        assert not whole and paged and {args[1] for args in paged} == {4}, (whole, paged)
        assert len(owners) == len(paged), owners  # a page's owners in one read, not one read per owner
        assert seen == [s.token.id for s in reversed(rt.administration.token_standings(LOCAL_OWNER, None, 100, 0))]
        third = client.get("/admin/tokens?page=3")
        on_it = re.findall(r'<span class="hint">([0-9a-f]{12})</span>', third.text)[0]
        revoked = client.post(f"/admin/tokens/{on_it}/revoke", data={"csrf": csrf_of(third.text), "page": "3"})
        assert revoked.status_code == 303 and revoked.headers["location"] == "/admin/tokens?page=3"


def test_a_projects_grants_are_paged_reading_that_page_alone(served: tuple[Runtime, str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """/admin/projects/ID read every user of the store, to name its grants' people and to offer every active user
    in the grant form: it reads a page of the project's grants with their users, by email, and the form takes an
    email; a grant or a removal returns to the page it was made on."""
    rt, base = served
    monkeypatch.setattr(admin, "GRANTS_SHOWN", 3, raising=False)
    rt.administration.add_project(LOCAL_OWNER, "apollo")
    members = [f"member{n}@example.com" for n in range(7)]
    for who in members:
        rt.administration.add_user(LOCAL_OWNER, who, "member")
        rt.administration.grant(LOCAL_OWNER, who, "apollo", "read")
    whole, paged = recorded(monkeypatch, rt.store.identity, "users", "project_members")
    with sign_in(base, ADMIN) as client:
        seen = walk(client, "/admin/projects/apollo", cells("User"), "grants")
        assert seen == members and not whole and {args[1:] for args in paged} == {(4, 0), (4, 3), (4, 6)}, whole
        second = client.get("/admin/projects/apollo?page=2")
        assert ALICE not in second.text  # no list of every user: the form takes an email
        csrf = csrf_of(second.text)
        granted = client.post("/admin/projects/apollo/grants",
                              data={"csrf": csrf, "email": ALICE, "level": "write", "page": "2"})
        assert granted.status_code == 303 and granted.headers["location"] == "/admin/projects/apollo?page=2"
        assert "Granted alice@example.com write on apollo" in client.get(granted.headers["location"]).text
        removed = client.post("/admin/projects/apollo/ungrant", data={"csrf": csrf, "email": ALICE, "page": "2"})
        assert removed.status_code == 303 and removed.headers["location"] == "/admin/projects/apollo?page=2"
        refused = client.post("/admin/projects/apollo/grants",
                              data={"csrf": csrf, "email": "nobody@example.com", "level": "read", "page": "3"})
        assert refused.status_code == 400 and "No user with email nobody@example.com" in unescape(refused.text)
        assert 'rel="prev">Previous grants</a>' in refused.text  # the page it was sent from
        past = client.get("/admin/projects/apollo?page=9")
        assert "No grants past the first 24" in past.text and 'href="/admin/projects/apollo">First grants' in past.text
        assert not whole, whole


def test_the_admins_projects_are_paged_reading_that_page_alone_and_a_form_returns_to_its_page(
        served: tuple[Runtime, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """/admin/projects read every project of the store, archived ones too, on each view and drew them all on one
    page: it pages them by id (archived ones kept, homes never), the store reading that page alone, and the add
    form refused on a later page shows that page again. Anyone but an admin still gets the 404 page."""
    rt, base = served
    monkeypatch.setattr(admin, "PROJECTS_SHOWN", 3, raising=False)
    for n in range(7):
        rt.administration.add_project(LOCAL_OWNER, f"paged-{n}")
    rt.administration.archive_project(LOCAL_OWNER, "paged-4")
    whole, everyone, paged = recorded(monkeypatch, rt.store.identity, "projects", "projects_seen_by",
                                      "ordinary_projects_page")

    def ids(html: str) -> list[str]:
        return [unquote(i) for i in re.findall(r'<a href="/admin/projects/([^"?]+)">', html)]

    with sign_in(base, ADMIN) as client:
        seen = walk(client, "/admin/projects", ids, "projects")
        assert seen == [f"paged-{n}" for n in range(7)], seen  # the archived one too; no home
        assert not whole and not everyone and paged == [(4, 0), (4, 3), (4, 6)], (whole, everyone, paged)
        second = client.get("/admin/projects?page=2")
        assert ids(second.text) == ["paged-3", "paged-4", "paged-5"] and "archived" in second.text
        assert 'href="/admin/projects" rel="prev">Previous projects</a>' in second.text
        assert 'href="/admin/projects?page=3" rel="next">Next projects</a>' in second.text
        assert 'rel="next"' not in client.get("/admin/projects?page=3").text
        refused = client.post("/admin/projects", data={"csrf": csrf_of(second.text), "id": "paged-1", "name": "",
                                                        "description": "", "page": "2"})
        assert refused.status_code == 400 and "project paged-1 exists already" in unescape(refused.text)
        assert ids(refused.text) == ["paged-3", "paged-4", "paged-5"], ids(refused.text)  # the page it came from
        assert 'rel="prev">Previous projects</a>' in refused.text
        added = client.post("/admin/projects", data={"csrf": csrf_of(second.text), "id": "paged-7", "name": "",
                                                      "description": "", "page": "2"})
        assert added.status_code == 303 and added.headers["location"] == "/admin/projects/paged-7"
        past = client.get("/admin/projects?page=9")
        assert "No projects past the first 24" in past.text and 'href="/admin/projects">First projects' in past.text
        assert client.get("/admin/projects?page=x").status_code == 400
        assert not whole and not everyone, (whole, everyone)
    with sign_in(base, ALICE) as client:
        for url in ("/admin/projects", "/admin/projects?page=2"):
            assert client.get(url).status_code == 404, url
        form = client.get("/settings/tokens")
        assert client.post("/admin/projects", data={"csrf": csrf_of(form.text), "id": "by-alice",
                                                    "page": "2"}).status_code == 404
    assert rt.store.identity.project("by-alice") is None


def test_the_projects_page_is_paged_reading_that_pages_counts_alone(served: tuple[Runtime, str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """/projects listed every project one may read on one page, with the document counts of them all: it pages
    them by id, as the other lists page, the counts read for the page alone."""
    rt, base = served
    monkeypatch.setattr(browse, "PROJECTS_SHOWN", 3, raising=False)
    for n in range(7):
        rt.administration.add_project(LOCAL_OWNER, f"paged-{n}")
    everything = [pr.id for pr in rt.knowledge.projects(rt.authentication.acting_as(ADMIN))]
    assert len(everything) == 8  # and the admin's home
    counted: list[Any] = []
    recording(monkeypatch, rt.store.documents, "project_counts", counted)
    with sign_in(base, ADMIN) as client:
        seen = walk(client, "/projects", lambda html: [unquote(i) for i in re.findall(r'<a href="/p/([^"]+)">', html)],
                    "projects")
        assert seen == everything and [len(args[0]) for args in counted] == [4, 4, 2], counted
        assert 'rel="next">Next projects</a>' in client.get("/projects?page=2").text
        past = client.get("/projects?page=5")
        assert "No projects past the first 12" in past.text and 'href="/projects">First projects' in past.text
        assert client.get("/projects?page=x").status_code == 400


def test_taught_knowledge_on_the_memories_page_is_paged(served: tuple[Runtime, str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """/memories listed the newest 50 items of taught knowledge and no way to an older one."""
    rt, base = served
    monkeypatch.setattr(memories, "NEWEST", 3)
    alice = rt.authentication.acting_as(ALICE)
    for rule in RULES:
        rt.brain.teach(alice, rule=rule)
    everything = [k.rule for k in rt.brain.knowledge(alice, limit=100)]
    assert sorted(everything) == sorted(RULES)
    with sign_in(base, ALICE) as client:
        seen = walk(client, "/memories", lambda html: [unescape(r) for r in re.findall(
            r'<li><strong>([^<]*)</strong>', html)], "taught knowledge")
        assert seen == everything
        past = client.get("/memories?taught=10")
        assert "No taught knowledge past the newest 27" in past.text


def test_a_search_that_finds_more_than_it_shows_says_so(web_url: str, web_world: World,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """/memories' and /sessions' searches showed their best 50 and nothing of the others that match."""
    monkeypatch.setattr(memories, "NEWEST", 3)
    monkeypatch.setattr(sessions, "SHOWN", 3)
    rt = web_world.runtime
    alice = rt.authentication.acting_as(email("alice"))
    for n in range(5):
        rt.memory.remember(alice, f"The quarterly zeppelin report, part {n}", path="paging")
        rt.brain.start_session(alice, client_type="claude_code", prompt=f"Draft the zeppelin report, part {n}",
                               project_name="Paging")
    with signed_in(web_url, "alice") as (client, _csrf):
        for url, said in (("/memories?q=zeppelin", "More memories match than the best 3 shown here"),
                          ("/sessions?q=zeppelin", "More sessions match than the best 3 shown here")):
            assert said in unescape(client.get(url).text), url


def test_a_page_number_that_is_no_number_is_refused_naming_it(web_url: str, web_world: World) -> None:
    """?page=abc, -1, 0, 1e9, a superscript or a number past the last page was read as the first page, which
    looked like an answer to what was asked: each is a 400 page naming the parameter and the fix."""
    rt = web_world.runtime
    admin_user = rt.authentication.acting_as(email("admin"))
    started = rt.brain.start_session(admin_user, client_type="claude_code", prompt="A session to page",
                                     project_name="Paging")
    pages = [("/memories?page=", "page"), ("/memories?taught=", "taught"), ("/sessions?page=", "page"),
             (f"/sessions/{started.session.id}?page=", "page"), ("/search?q=pricing&page=", "page"),
             ("/admin/tokens?page=", "page"), ("/admin/users?page=", "page"), ("/admin/projects?page=", "page"),
             ("/settings/tokens?page=", "page"), ("/p/northwind-advisory?offset=", "offset")]
    with signed_in(web_url, "admin") as (client, _csrf):
        for url, field in pages:
            assert client.get(url + "1" if field != "offset" else url + "0").status_code == 200, url
            for bad in ("abc", "-1", "1e9", "1.5", "%C2%B2", "9" * 5000, "99999999999999999999") + (
                    ("0", "1000000") if field != "offset" else ()):
                answer = client.get(url + bad)
                text = unescape(answer.text)
                assert answer.status_code == 400, (url, bad[:20], answer.status_code)
                assert f"{field}: " in text and f"leave {field} out for the first page" in text, (url, bad[:20])


def test_the_audit_log_is_paged_with_its_filters_kept(served: tuple[Runtime, str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """/admin/audit showed the newest 200 entries ("at most 200") and no way to older ones, having read every entry
    of the period to filter them."""
    rt, base = served
    monkeypatch.setattr(admin, "AUDIT_SHOWN", 3)
    root = rt.authentication.acting_as(ADMIN)
    for n in range(7):
        rt.administration.add_user(root, f"audited{n}@example.com", "member")
        rt.administration.add_user(LOCAL_OWNER, f"other{n}@example.com", "member")  # another actor: filtered out
    expected = [e.target for e in reversed(rt.store.audit.list_since())
                if e.action.startswith("user.") and e.user_id == root.user_id]
    assert len(expected) == 7
    whole, paged = recorded(monkeypatch, rt.store.audit, "list_since", "newest")
    with sign_in(base, ADMIN) as client:
        first = "/admin/audit?action=user.&user=ROOT%40example.com"
        seen = walk(client, first, cells("Target"), "entries")
        assert seen == expected and not whole and {args[3] for args in paged} == {4}, (seen, whole, paged)
        second = client.get(f"{first}&page=2").text
        assert ('href="/admin/audit?action=user.&amp;user=ROOT%40example.com&amp;since=7d" rel="prev">Newer entries'
                in second)
        past = client.get(f"{first}&page=100").text
        assert "No entries past the newest 297." in past and 'rel="next"' not in past and 'rel="prev"' not in past
        assert 'href="/admin/audit?action=user.&amp;user=ROOT%40example.com&amp;since=7d">Newest entries' in past
        for url, said in (("/admin/audit?action=a%00b", "action: contains a NUL character"),
                          ("/admin/audit?user=nobody%40example.com", "user: no user with email nobody@example.com")):
            refused = client.get(url)
            assert refused.status_code == 200 and said in unescape(refused.text), url
