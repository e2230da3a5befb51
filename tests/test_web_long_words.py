"""A long unbroken word where a person or a vault put one (a project's description, a note's name) wraps in
the page instead of pushing it sideways, at 1280 and 400 px, in a real browser on the web test world.

A description of 900 letters with no space (an admin pasted a hash, a URL) made /projects, the project's page
and the admin's project table 11,000 px wide; a note of a long non-ASCII name with a line longer than a page
holds made the document page 2,700 px wide, by the REST route its notice names (percent-escaped, one word).
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, Page, expect

from mcp_world import World
from test_web import OVERFLOW, sign_in
from web_world import DESKTOP, NARROW, email

WORD = "Ω" + "D" * 900  # no space, no hyphen: nowhere a line may break but anywhere
NAME = "مرحبا بالعالم שלום עולם 🚀 " + "ملاحظة" * 12 + ".md"


@pytest.fixture
def page(browser: Browser, web_url: str) -> Iterator[Page]:
    context = browser.new_context(base_url=web_url, viewport=DESKTOP)
    yield context.new_page()
    context.close()


def sideways(page: Page, url: str) -> dict[int, list[str]]:
    """What sticks out sideways on ``url`` at each width (nothing, when the page is right)."""
    response = page.goto(url)
    assert response is not None and response.status == 200, url
    out: dict[int, list[str]] = {}
    try:
        for size in (DESKTOP, NARROW):
            page.set_viewport_size(size)
            out[size["width"]] = page.evaluate(OVERFLOW)
    finally:
        page.set_viewport_size(DESKTOP)
    return out


def test_a_long_word_in_a_description_or_a_notes_name_wraps(page: Page, web_world: World) -> None:
    from notewell.indexer import sync

    rt = web_world.runtime
    admin = rt.authentication.acting_as(None)
    rt.administration.add_project(admin, "long-words", name="Long words", description=WORD)
    rt.administration.grant(admin, email("alice"), "long-words", "read")
    (rt.settings.vault / "~alice" / NAME).write_text("# Wide\n" + "wide " * 6_000 + "\nafter\n", encoding="utf-8")
    sync(rt.settings, rt.store)
    try:
        sign_in(page, "alice")
        page.wait_for_url("**/projects")
        expect(page.get_by_text(WORD)).to_be_visible()
        nothing = {DESKTOP["width"]: [], NARROW["width"]: []}
        assert sideways(page, "/projects") == nothing
        assert sideways(page, "/p/long-words") == nothing
        doc = f"/p/~alice/doc/{quote(NAME)}"
        assert sideways(page, doc) == nothing
        expect(page.get_by_text("Line 2 is longer than a page holds")).to_be_visible()  # the notice is there
        page.get_by_role("button", name="Sign out").click()
        sign_in(page, "admin")
        page.wait_for_url("**/projects")
        assert sideways(page, "/admin/projects") == nothing
    finally:
        rt.administration.archive_project(admin, "long-words")  # out of the other tests' listings
        (rt.settings.vault / "~alice" / NAME).unlink()
        sync(rt.settings, rt.store)
