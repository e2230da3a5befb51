"""Lists of the web pages that hold a page of a longer whole have a way on, in a real browser on the web test
world: /sessions showed the newest 50 of a person's sessions and no way to an older one (but a search for
words it might hold), so the 51st was out of reach of the page. A small page size (monkeypatched, the server
runs in this process) stands for 50. And the numbers a URL gives a page (a page, a line, days, an id) that are
no numbers are read as none, over HTTP: never a server error."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from html import unescape

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from mcp_world import World
from notewell.access.principal import LOCAL_OWNER
from notewell.web.pages import admin, memories, sessions
from test_web import sign_in
from test_web_forms import signed_in
from web_world import DESKTOP, email


@pytest.fixture
def page(browser: Browser, web_url: str) -> Iterator[Page]:
    context = browser.new_context(base_url=web_url, viewport=DESKTOP)
    yield context.new_page()
    context.close()


def walked(page: Page, shown: Callable[[], list[str]], things: str) -> list[str]:
    """What ``shown`` reads of each page of a list, from the one open to the last, by its "Older <things>" link
    (each page after the first leading back by "Newer <things>")."""
    seen: list[str] = []
    while True:
        seen += shown()
        following = page.get_by_role("link", name=f"Older {things}")
        if following.count() == 0:
            return seen
        following.click()
        expect(page.get_by_role("link", name=f"Newer {things}")).to_be_visible()


def test_the_sessions_page_pages_through_every_session(page: Page, web_world: World,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions, "SHOWN", 3)
    rt = web_world.runtime
    alice = rt.authentication.acting_as(email("alice"))
    for n in range(7):
        rt.brain.start_session(alice, client_type="claude_code", prompt=f"Paged session {n}",
                               project_name="Paging")
    everything = [s.id for s in rt.brain.recent_sessions(alice, 10_000)]
    assert len(everything) > 6
    sign_in(page, "alice")
    page.wait_for_url("**/projects")
    page.goto("/sessions")
    links = page.locator("table a[href^='/sessions/']")
    seen = walked(page, lambda: [(links.nth(i).get_attribute("href") or "").removeprefix("/sessions/")
                                 for i in range(links.count())], "sessions")
    assert seen == everything
    for bad in ("0", "-1", "x", "9" * 5000, "%C2%B2"):  # not a page: refused, naming it (tests/test_web_paging.py)
        response = page.goto(f"/sessions?page={bad}")
        assert response is not None and response.status == 400
    page.goto("/sessions?page=1000")  # past the end: says so, and leads back
    expect(page.get_by_text("No sessions past the newest")).to_be_visible()
    expect(page.get_by_role("link", name="Newest sessions")).to_be_visible()


def test_the_memories_page_pages_through_every_memory(page: Page, web_world: World,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """/memories showed the newest 50 and no way to an older one but a search that happened to find it."""
    monkeypatch.setattr(memories, "NEWEST", 3)
    rt = web_world.runtime
    alice = rt.authentication.acting_as(email("alice"))
    for n in range(7):
        rt.memory.remember(alice, f"Paged memory number {n}", path="paging")
    everything = [m.ref for m in reversed(list(rt.memory.export(alice)))]
    assert len(everything) > 6
    sign_in(page, "alice")
    page.wait_for_url("**/projects")
    page.goto("/memories")
    links = page.locator("ul.cards a[href^='/memories/']")
    seen = walked(page, lambda: [(links.nth(i).get_attribute("href") or "").removeprefix("/memories/")
                                 for i in range(links.count())], "memories")
    assert seen == everything
    response = page.goto("/memories?page=%C2%B2")  # not a page: refused, naming it
    assert response is not None and response.status == 400
    expect(page.get_by_text("page: '²' is no whole number")).to_be_visible()
    page.goto("/memories?page=100000")  # past the end: says so, and leads back
    expect(page.get_by_text("No memories past the newest")).to_be_visible()
    expect(page.get_by_role("link", name="Newest memories")).to_be_visible()


def test_the_admins_token_page_pages_through_every_token(page: Page, web_world: World,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """/admin/tokens listed every token ever minted, revoked and expired ones too, on one page: a team whose
    CI mints a token a run got a page of every one of them."""
    monkeypatch.setattr(admin, "TOKENS_SHOWN", 3, raising=False)  # raising: the old code had none
    rt = web_world.runtime
    for n in range(7):
        rt.administration.mint_token(LOCAL_OWNER, email("bob"), ["memory:read"], name=f"paged {n}")
    everything = [s.token.id for s in reversed(rt.administration.token_standings(LOCAL_OWNER, None, 100, 0))]
    assert len(everything) > 6
    sign_in(page, "admin")
    page.wait_for_url("**/projects")
    page.goto("/admin/tokens")
    seen = walked(page, page.locator("td[data-label=Name] .hint").all_inner_texts, "tokens")
    assert seen == everything
    page.goto("/admin/tokens?page=100000")  # past the end: says so, and leads back
    expect(page.get_by_text("No tokens past the newest")).to_be_visible()
    expect(page.get_by_role("link", name="Newest tokens")).to_be_visible()


def test_a_number_in_a_url_that_is_no_number_is_never_a_server_error(web_url: str, web_world: World) -> None:
    """A page number, line, day count or proposal id written with a digit int() refuses (a superscript ², which
    str.isdigit takes) or past int()'s 4,300 digits was a 500; a line or a day count is read as no number, as "x"
    is, and a page number is refused with a 400 naming it (tests/test_web_paging.py)."""
    rt = web_world.runtime
    alice = rt.authentication.acting_as(email("alice"))
    started = rt.brain.start_session(alice, client_type="claude_code", prompt="A session to page",
                                     project_name="Paging")
    with signed_in(web_url, "alice") as (client, csrf):
        for bad in ("%C2%B2", "9" * 5000):
            for url, status in ((f"/p/northwind-advisory/doc/README.md?line={bad}", 200),
                                (f"/brain/health?days={bad}", 200), (f"/search?q=pricing&page={bad}", 400),
                                (f"/sessions/{started.session.id}?page={bad}", 400), (f"/sessions?page={bad}", 400)):
                try:
                    answer = client.get(url)
                except httpx.HTTPError as exc:  # the server's 500 ended the connection
                    raise AssertionError(f"{url[:60]}: {exc!r}") from exc
                assert answer.status_code == status, (url[:60], answer.status_code)
            refused = client.post(f"/brain/skills/proposals/{bad}/accept", data={"csrf": csrf})
            assert refused.status_code == 404 and "is no proposal id" in unescape(refused.text), refused.status_code


def test_a_search_with_no_words_names_the_pages_field(web_url: str) -> None:
    """/memories?q=🚀 and /sessions?q=🚀 said "query: has no words", a field no form or URL of theirs has."""
    with signed_in(web_url, "alice") as (client, _csrf):
        for url in ("/memories?q=%F0%9F%9A%80", "/sessions?q=%F0%9F%9A%80"):
            text = unescape(client.get(url).text)
            assert "q: has no words" in text and "query:" not in text, url


def test_a_refused_search_of_the_search_page_names_its_field(web_url: str) -> None:
    """/search?q=a%0Ab (a line break) said "query: must be a single line of text", a field no form or URL of the
    page has: it names q, as /memories and /sessions do."""
    with signed_in(web_url, "alice") as (client, _csrf):
        for url, said in (("/search?q=a%0Ab", "q: must be a single line of text"),
                          ("/search?q=a%0Ab&mode=regex", "q: a regex matches within one line")):
            text = unescape(client.get(url).text)
            assert said in text and "query:" not in text, url
