"""The admin's project page grants a person named by an email that is not ASCII, in a real browser (Playwright
driving Debian's chromium): the grant form's field is typed text, not type="email", which chromium refuses to send
with a letter such as "é" before the "@" and sends with its domain turned into punycode ("xn--..."), matching no user.
The form offered every active user in a list before 2026-12-07, so such people could be granted then."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from mcp_world import World
from notewell.access.principal import LOCAL_OWNER
from web_world import DESKTOP, PASSWORDS, email

PEOPLE = ("josé@northwind.test", "zoë@bücher.test")


@pytest.fixture
def page(browser: Browser, web_url: str) -> Iterator[Page]:
    context = browser.new_context(base_url=web_url, viewport=DESKTOP)
    yield context.new_page()
    context.close()


def test_a_person_whose_email_is_not_ascii_is_granted_on_the_project_page(page: Page, web_world: World) -> None:
    for person in PEOPLE:
        web_world.runtime.administration.add_user(LOCAL_OWNER, person, "member", home_folder=False)
    page.goto("/signin")
    page.get_by_label("Email").fill(email("admin"))
    page.get_by_label("Password").fill(PASSWORDS["admin"])
    page.get_by_role("button", name="Sign in").click()
    for person in PEOPLE:
        page.goto("/admin/projects/handbook")
        page.get_by_label("User").fill(person)
        page.get_by_role("button", name="Grant", exact=True).click()
        expect(page.get_by_role("status")).to_contain_text(f"Granted {person} read on handbook")
        expect(page.get_by_role("row").filter(has_text=person)).to_contain_text("read")
