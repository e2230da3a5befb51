"""The web pages for writing in a real browser (Playwright driving Debian's chromium), on both backends.

A writer opens a note from its document page, edits it in the plain editor, lands on the document's history
with the write's diff, and undoes it with the entry's button; two tabs editing the same note meet a conflict
that shows both texts and saves over the current one only when asked again; a reader sees the history without
an Edit link or Undo buttons. Each page is checked as tests/test_web.py checks its pages (fields labelled,
nothing sideways at 1280 and 400 px, every control reached by Tab) and screenshotted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from mcp_world import World, serve_world
from notes_world import notes_world_on
from notewell.access.principal import LOCAL_OWNER
from pg import BACKENDS
from test_web import check_and_shoot
from web_world import DESKTOP, email

PASSWORD = "a long pass phrase"
NOTE = "projects/apollo/browser.md"


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    for built in notes_world_on(request, tmp_path_factory.mktemp("notes-browser")):
        for handle in ("alice", "bob"):
            built.runtime.sign_in.set_password(LOCAL_OWNER, email(handle), PASSWORD)
        yield built


@pytest.fixture(scope="module")
def base(world: World) -> Iterator[str]:
    with serve_world(world) as server:
        yield f"http://127.0.0.1:{server.port}"


@pytest.fixture
def context(browser: Browser, base: str) -> Iterator[BrowserContext]:
    ctx = browser.new_context(base_url=base, viewport=DESKTOP)
    yield ctx
    ctx.close()


def signed_in(context: BrowserContext, handle: str) -> Page:
    page = context.new_page()
    page.goto("/signin")
    page.get_by_label("Email").fill(email(handle))
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/projects$"))
    return page


def test_edit_in_the_editor_then_undo_from_the_history(world: World, context: BrowserContext) -> None:
    note = world.vault / NOTE
    note.write_bytes("# Browser\r\n\r\nfirst line, café\r\n".encode())
    world.runtime.indexing.sync_paths([NOTE])
    page = signed_in(context, "alice")
    page.goto("/p/projects/doc/apollo/browser.md")
    page.get_by_role("link", name="Edit", exact=True).click()
    expect(page.get_by_role("heading", name="Edit apollo/browser.md")).to_be_visible()
    text = page.get_by_label("Text")
    expect(text).to_have_value("# Browser\n\nfirst line, café\n")  # a textarea holds LF; the form says CRLF
    check_and_shoot(page, "note-editor")
    text.fill("# Browser\n\nfirst line, café\nsecond line, naïve zephyrine\n")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("heading", name="History of apollo/browser.md")).to_be_visible()
    expect(page.get_by_role("status")).to_have_text("Saved apollo/browser.md")
    assert note.read_bytes() == "# Browser\r\n\r\nfirst line, café\r\nsecond line, naïve zephyrine\r\n".encode()
    latest = page.locator("section.write").first
    expect(latest.locator("pre.diff")).to_contain_text("+second line, naïve zephyrine")
    check_and_shoot(page, "note-history")
    history = page.url
    assert found(page, "zephyrine") == 1  # in the index as soon as the save returned
    page.goto(history)
    undo = latest.get_by_role("button", name=re.compile(r"^Undo entry \d+$"))
    entry = (undo.text_content() or "").removeprefix("Undo entry ")
    undo.click()
    expect(page.get_by_role("status")).to_contain_text(f"Undone: journal entry {entry}")
    assert note.read_bytes() == "# Browser\r\n\r\nfirst line, café\r\n".encode()
    expect(page.locator("section.write").first.get_by_role("heading")).to_contain_text(f"undo of entry {entry}")
    assert found(page, "zephyrine") == 0  # so is the undo


def found(page: Page, word: str) -> int:
    """How many hits the search page lists in projects/apollo/browser.md for ``word``."""
    page.goto(f"/search?q={word}")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    return page.locator("li a code", has_text="projects/apollo/browser.md").count()


def test_a_save_keeps_the_byte_order_mark(world: World, context: BrowserContext) -> None:
    note = world.vault / "projects/apollo/marked.md"
    note.write_bytes("\ufeff# Marked\n\nnoted\n".encode())
    world.runtime.indexing.sync_paths(["projects/apollo/marked.md"])
    page = signed_in(context, "alice")
    page.goto("/p/projects/edit/apollo/marked.md")
    text = page.get_by_label("Text")
    expect(text).to_have_value("# Marked\n\nnoted\n")  # the mark is the file's, not the text's
    text.fill("# Marked\n\nnoted, twice\n")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved apollo/marked.md")
    assert note.read_bytes() == "\ufeff# Marked\n\nnoted, twice\n".encode()


def test_two_tabs_meet_a_conflict_that_shows_both_texts(world: World, context: BrowserContext) -> None:
    note = world.vault / "projects/apollo/tabs.md"
    world.runtime.notes.write_note(LOCAL_OWNER, "projects/apollo/tabs.md", "# Tabs\n\nplan A\n", tool="test")
    first = signed_in(context, "alice")
    second = context.new_page()
    for tab in (first, second):
        tab.goto("/p/projects/edit/apollo/tabs.md")
    first.get_by_label("Text").fill("# Tabs\n\nplan B, from the first tab\n")
    first.get_by_role("button", name="Save", exact=True).click()
    expect(first.get_by_role("status")).to_have_text("Saved apollo/tabs.md")
    second.get_by_label("Text").fill("# Tabs\n\nplan C, from the second tab\n")
    second.get_by_role("button", name="Save", exact=True).click()
    expect(second.get_by_role("alert")).to_contain_text("Conflict")
    expect(second.get_by_label("Text")).to_have_value("# Tabs\n\nplan C, from the second tab\n")  # mine, kept
    expect(second.get_by_role("heading", name="The current version")).to_be_visible()
    expect(second.locator("pre.doc")).to_have_text("# Tabs\n\nplan B, from the first tab\n")  # theirs, shown
    assert note.read_text() == "# Tabs\n\nplan B, from the first tab\n"  # nothing written by the refusal
    check_and_shoot(second, "note-conflict")
    second.get_by_role("button", name="Save over the current version").click()
    expect(second.get_by_role("status")).to_have_text("Saved apollo/tabs.md")
    assert note.read_text() == "# Tabs\n\nplan C, from the second tab\n"


def test_a_reader_sees_the_history_without_edit_or_undo(world: World, context: BrowserContext) -> None:
    world.runtime.notes.write_note(LOCAL_OWNER, "northwind-advisory/browser.md", "advice\n", tool="test")
    page = signed_in(context, "alice")  # a read grant on northwind-advisory
    page.goto("/p/northwind-advisory/doc/browser.md")
    expect(page.get_by_role("link", name="History")).to_be_visible()
    expect(page.get_by_role("link", name="Edit", exact=True)).to_have_count(0)
    page.get_by_role("link", name="History").click()
    expect(page.locator("pre.diff")).to_contain_text("+advice")
    expect(page.get_by_role("button", name=re.compile("^Undo"))).to_have_count(0)
    response = page.goto("/p/northwind-advisory/edit/browser.md")
    assert response is not None and response.status == 403


def test_a_hidden_history_is_the_same_404_as_a_missing_one(world: World, context: BrowserContext) -> None:
    page = signed_in(context, "bob")  # only his home
    hidden = page.goto("/p/northwind-advisory/history/browser.md")
    missing = page.goto("/p/nowhere/history/browser.md")
    assert hidden is not None and missing is not None and hidden.status == missing.status == 404
