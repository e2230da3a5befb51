"""The web's fields that take an email take one that is not ASCII, in a real browser (Playwright driving Debian's
chromium): signing in, adding a user, granting a project. Each is typed text, not type="email", which chromium
refuses to send with a letter such as "é" before the "@" and sends with its domain turned into punycode
("xn--..."), matching no user: such a person (whom the CLI adds) could not sign in with their password, be added
on /admin/users, nor, since the grant form takes an email (it offered every active user in a list before
2026-12-07), be granted a project."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from mcp_world import World
from notewell.access.principal import LOCAL_OWNER
from web_world import DESKTOP, PASSWORDS, email

PEOPLE = ("josé@northwind.test", "zoë@bücher.test")
NEWCOMERS = ("renée@northwind.test", "lu@müller.test")


@pytest.fixture
def page(browser: Browser, web_url: str) -> Iterator[Page]:
    context = browser.new_context(base_url=web_url, viewport=DESKTOP)
    yield context.new_page()
    context.close()


def _sign_in(page: Page, who: str, password: str) -> None:
    page.goto("/signin")
    page.get_by_label("Email").fill(who)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_a_person_whose_email_is_not_ascii_signs_in_with_their_password(page: Page, web_world: World) -> None:
    rt = web_world.runtime
    for person in PEOPLE:
        rt.administration.add_user(LOCAL_OWNER, person, "member", home_folder=False)
        rt.sign_in.set_password(LOCAL_OWNER, person, f"{person} pass phrase")
    for person in PEOPLE:
        _sign_in(page, person, f"{person} pass phrase")
        expect(page).not_to_have_url(re.compile(r"/signin"))
        page.get_by_role("button", name="Sign out").click()


def test_an_admin_adds_a_user_whose_email_is_not_ascii(page: Page) -> None:
    _sign_in(page, email("admin"), PASSWORDS["admin"])
    for person in NEWCOMERS:
        page.goto("/admin/users")
        page.get_by_label("Email", exact=True).fill(person)
        page.get_by_role("button", name="Add user").click()
        expect(page.get_by_role("status")).to_contain_text(person)


def test_a_person_whose_email_is_not_ascii_is_granted_on_the_project_page(page: Page, web_world: World) -> None:
    for person in PEOPLE:
        if web_world.runtime.store.identity.user_by_email(person) is None:
            web_world.runtime.administration.add_user(LOCAL_OWNER, person, "member", home_folder=False)
    _sign_in(page, email("admin"), PASSWORDS["admin"])
    for person in PEOPLE:
        page.goto("/admin/projects/handbook")
        page.get_by_label("User").fill(person)
        page.get_by_role("button", name="Grant", exact=True).click()
        expect(page.get_by_role("status")).to_contain_text(f"Granted {person} read on handbook")
        expect(page.get_by_role("row").filter(has_text=person)).to_contain_text("read")
