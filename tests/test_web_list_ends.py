"""The ends of the web pages' paged lists, over real HTTP (issue 27: every answer bounded, with a way to the rest).
A page past the end of a list says so and leads back to the first page; it led to the page before it, past the
end too, on /search, a session's events and a project's documents, so "Previous" walked back one empty page at a
time (from ?page=999999, 999,998 of them). And the last page a URL may ask for (999,999) showed a next link to
page 1,000,000, which answers 400 (a smaller last page, monkeypatched, stands for it)."""

from __future__ import annotations

import re
from html import unescape

import pytest

from mcp_world import World
from notewell.access.principal import LOCAL_OWNER
from notewell.web import session
from notewell.web.pages import admin
from test_web_forms import signed_in
from web_world import email


def pager_links(html: str) -> dict[str, str]:
    """The links of a page's pager (its nav of pages): their text, each to its address."""
    navs = re.findall(r'<nav aria-label="Pages[^"]*".*?</nav>', html, re.S)
    return {re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", text)).strip(): unescape(href)
            for nav in navs for href, text in re.findall(r'<a href="([^"]+)"[^>]*>(.*?)</a>', nav, re.S)}


def test_a_page_past_the_end_of_any_list_says_so_and_leads_to_the_first(web_url: str, web_world: World) -> None:
    rt = web_world.runtime
    started = rt.brain.start_session(rt.authentication.acting_as(email("admin")), client_type="claude_code",
                                     prompt="A session whose events end", project_name="Paging")
    events = f"/sessions/{started.session.id}"
    past = {  # a page past the end: what it says, and the first page its link leads to
        "/search?q=pricing&page=999999": ("No match past the first 19,999,960 lines", "/search?"),
        f"{events}?page=999999": ("No events past the first 99,999,800", events),
        "/p/northwind-advisory?offset=9007199254740991": ("No documents past 9007199254740991",
                                                           "/p/northwind-advisory"),
        "/sessions?page=999999": ("No sessions past the newest 49,999,900", "/sessions"),
        "/memories?page=999999": ("No memories past the newest 49,999,900", "/memories"),
        "/memories?taught=999999": ("No taught knowledge past the newest 49,999,900", "/memories"),
        "/settings/tokens?page=999999": ("No tokens past your newest 99,999,800", "/settings/tokens"),
        "/admin/tokens?page=999999": ("No tokens past the newest 199,999,600", "/admin/tokens"),
        "/admin/users?page=999999": ("No users past the first 199,999,600", "/admin/users"),
    }
    with signed_in(web_url, "admin") as (client, _csrf):
        for url, (said, first) in past.items():
            answer = client.get(url)
            assert answer.status_code == 200 and said in unescape(answer.text), (url, answer.status_code)
            links = pager_links(answer.text)
            assert 'rel="next"' not in answer.text and 'rel="prev"' not in answer.text, (url, links)
            assert len(links) == 1 and next(iter(links.values())).startswith(first), (url, links)
            back = client.get(next(iter(links.values())))
            assert back.status_code == 200 and said not in unescape(back.text), url


def test_the_last_page_a_url_may_ask_for_has_no_next_link(web_url: str, web_world: World,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Page 999,999 of a list longer than that showed "Older" to page 1,000,000: the 400 page."""
    monkeypatch.setattr(session, "PAGE_MAX", 2)
    monkeypatch.setattr("notewell.web.paging.PAGE_MAX", 2)
    monkeypatch.setattr(admin, "TOKENS_SHOWN", 1)
    for n in range(3):
        web_world.runtime.administration.mint_token(LOCAL_OWNER, email("bob"), ["memory:read"], name=f"end {n}")
    with signed_in(web_url, "admin") as (client, _csrf):
        first = client.get("/admin/tokens")
        assert pager_links(first.text).get("Older tokens") == "/admin/tokens?page=2"
        last = client.get("/admin/tokens?page=2")
        assert last.status_code == 200 and "Newer tokens" in pager_links(last.text)
        for text, href in pager_links(last.text).items():
            assert client.get(href).status_code == 200, (text, href)
        assert client.get("/admin/tokens?page=3").status_code == 400
