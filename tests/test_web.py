"""The web pages in a real browser (Playwright driving Debian's chromium) against the whole HTTP app.

Each test starts signed out in a fresh browser context; pages are found by their labels, button names and
the stable test ids (data-testid="new-token", "install-command"). Every page is screenshotted at desktop
and 400 px widths into web_world.SCREENSHOTS and checked at both: every field labelled, no sideways scroll
(of the page or of any box in it), every control inside the screen, and every control reached by Tab.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect
from typer.testing import CliRunner

from conftest import run_cli
from mcp_world import REPO_ROOT, World, connect
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER
from notewell.cli.app import app
from notewell.web.pages import browse
from web_world import DESKTOP, NARROW, PASSWORDS, SCREENSHOTS, email, in_thread

UNLABELLED = """() => Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea'))
    .filter(el => el.labels.length === 0 && !el.getAttribute('aria-label')).map(el => el.name || el.id)"""


@pytest.fixture
def context(browser: Browser, web_url: str) -> Iterator[BrowserContext]:
    ctx = browser.new_context(base_url=web_url, viewport=DESKTOP)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=web_url)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


def sign_in(page: Page, handle: str, password: str | None = None) -> None:
    page.goto("/signin")
    page.get_by_label("Email").fill(email(handle))
    page.get_by_label("Password").fill(password or PASSWORDS[handle])
    page.get_by_role("button", name="Sign in").click()


# The controls a keyboard user must reach: visible, enabled, not taken out of the tab order.
CONTROLS = """() => {
  const all = Array.from(document.querySelectorAll(
    'a[href], button, input:not([type=hidden]), select, textarea, [tabindex]'));
  // a radio group is one stop for Tab (the arrow keys move inside it): its checked radio stands for it
  const radio = el => el.type !== 'radio' || el.checked
    || !document.querySelector(`input[type=radio][name="${el.name}"]:checked`);
  const shown = all.filter(el => el.getClientRects().length > 0 && !el.disabled && el.tabIndex >= 0
                                 && getComputedStyle(el).visibility !== 'hidden' && radio(el));
  shown.forEach((el, i) => { el.dataset.kb = String(i); });
  return shown.map(el => (el.innerText || el.getAttribute('aria-label') || el.name || el.id || el.tagName).trim());
}"""
# What sticks out sideways: the page itself, any box that scrolls sideways, any control past the screen's edge.
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth, out = [];
  if (document.documentElement.scrollWidth > width) out.push('the page: ' + document.documentElement.scrollWidth);
  for (const el of document.querySelectorAll('body *')) {
    const style = getComputedStyle(el);
    if (['auto', 'scroll'].includes(style.overflowX) && el.scrollWidth > el.clientWidth + 1)
      out.push(`a scrolling ${el.tagName.toLowerCase()}.${el.className}: ${el.scrollWidth} > ${el.clientWidth}`);
  }
  for (const el of document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea')) {
    const box = el.getBoundingClientRect();
    if (el.classList.contains('skip') || !el.getClientRects().length || box.width === 0) continue;
    if (box.left < -0.5 || box.right > width + 0.5)
      out.push(`${(el.innerText || el.name || el.tagName).trim()}: ${Math.round(box.left)}..${Math.round(box.right)}`);
  }
  return out;
}"""
FOCUSED = """() => { const el = document.activeElement, box = el.getBoundingClientRect();
  return [el.dataset.kb ?? null, box.left >= -0.5 && box.right <= document.documentElement.clientWidth + 0.5
          || el.classList.contains('skip')]; }"""


def check_keyboard(page: Page, name: str) -> None:
    """Tab from the top of the page reaches every control, each inside the screen when it has focus."""
    names = page.evaluate(CONTROLS)
    page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
    reached: set[int] = set()
    for _ in range(2 * len(names) + 5):  # from wherever focus last was, round past the end to the top
        page.keyboard.press("Tab")
        kb, inside = page.evaluate(FOCUSED)
        if kb is not None:
            assert inside, f"{name}: {names[int(kb)]!r} is off the screen when it has focus"
            reached.add(int(kb))
        if len(reached) == len(names):
            break
    missed = [names[i] for i in range(len(names)) if i not in reached]
    assert not missed, f"{name}: Tab never reaches {missed}"


def check_and_shoot(page: Page, name: str) -> None:
    """At 1280 and 400 px: every field labelled, nothing sticks out sideways, Tab reaches every control;
    screenshots at both widths."""
    assert page.evaluate(UNLABELLED) == [], f"{name}: fields without a label"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for size, label in ((DESKTOP, "desktop"), (NARROW, "400px")):
            page.set_viewport_size(size)
            page.screenshot(path=str(SCREENSHOTS / f"{name}-{label}.png"), full_page=True)
            assert page.evaluate(OVERFLOW) == [], f"{name} at {size['width']} px: sticks out sideways"
            check_keyboard(page, f"{name} at {size['width']} px")
    finally:
        page.set_viewport_size(DESKTOP)


def test_landing_and_password_sign_in(page: Page, web_url: str) -> None:
    page.goto("/")
    expect(page.get_by_role("heading", name="Notewell", level=1)).to_be_visible()
    expect(page.get_by_text(f"{web_url}/mcp")).to_be_visible()
    check_and_shoot(page, "landing")
    page.goto("/projects")  # signed out: to the sign-in page, then back
    expect(page).to_have_url(re.compile(r"/signin\?next=/projects$"))
    page.get_by_label("Email").fill(email("alice"))
    page.get_by_label("Password").fill("not her password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Email or password is wrong")
    check_and_shoot(page, "sign-in")
    page.get_by_label("Password").fill(PASSWORDS["alice"])
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{web_url}/projects")
    expect(page.get_by_role("link", name="Northwind Advisory")).to_be_visible()
    check_and_shoot(page, "projects")
    page.get_by_role("button", name="Sign out").click()
    page.goto("/projects")
    expect(page).to_have_url(re.compile(r"/signin"))


def test_a_sign_in_link_works_once(browser: Browser, web_world: World, web_url: str) -> None:
    link = web_world.runtime.sign_in.make_link(LOCAL_OWNER, email("bob"), web_url).url
    first = browser.new_context(base_url=web_url)
    page = first.new_page()
    page.goto(link)
    expect(page.get_by_text(f"signs you in as {email('bob')}")).to_be_visible()
    check_and_shoot(page, "sign-in-link")
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{web_url}/projects")
    expect(page.get_by_text(email("bob"), exact=True)).to_be_visible()
    first.close()
    second = browser.new_context(base_url=web_url)
    again = second.new_page()
    response = again.goto(link)
    assert response is not None and response.status == 410
    expect(again.get_by_role("alert")).to_contain_text("This sign-in link is used, expired or unknown")
    second.close()


def test_mint_use_and_revoke_a_token(page: Page, web_world: World, web_url: str) -> None:
    sign_in(page, "alice")
    page.goto("/settings/tokens")
    check_and_shoot(page, "tokens")
    # by default a new token holds every scope a member may hold (sessions too: the brain tools), but
    # knowledge:write (offered, asked for) and never admin
    checked = page.locator("input[name=scopes]:checked").evaluate_all("els => els.map(el => el.value)")
    assert checked == ["knowledge:read", "memory:read", "memory:write", "sessions"]
    assert page.get_by_label("knowledge:write").count() == 1
    page.get_by_label("Name").fill("laptop")
    for scope in ("memory:read", "memory:write"):
        page.get_by_label(scope).uncheck()
    page.get_by_label("knowledge:read").check()
    page.get_by_role("button", name="Mint token").click()
    secret = page.get_by_test_id("new-token").inner_text().strip()
    assert re.fullmatch(r"nw_[0-9a-f]{12}_[A-Za-z0-9_-]{43,}", secret)
    page.get_by_role("button", name="Copy the token").click()
    assert page.evaluate("navigator.clipboard.readText()") == secret

    # the wizard: a tab per client, keyboard-usable; Claude Code's command names this server and the token
    page.get_by_role("tab", name="Claude Code").click()
    claude = page.get_by_role("tabpanel", name="Claude Code").get_by_test_id("install-command")
    commands = [c.strip() for c in claude.all_inner_texts()]
    assert (f"claude mcp add --transport http --scope user notewell {web_url}/mcp "
            f"--header 'Authorization: Bearer {secret}'") in commands
    one_liner = f"curl -fsSL '{web_url}/install.sh?client=claude-code' | NOTEWELL_TOKEN="
    assert any(c.startswith(one_liner) for c in commands)
    page.get_by_role("tab", name="Claude Code").press("ArrowRight")
    expect(page.get_by_role("tab", name="Cursor")).to_be_focused()
    expect(page.get_by_role("tabpanel", name="Cursor")).to_be_visible()
    expect(page.get_by_role("tabpanel", name="Claude Code")).to_be_hidden()
    check_and_shoot(page, "token-minted")

    # Claude Desktop starts Notewell itself: by the absolute path of an executable that runs
    page.get_by_role("tab", name="Claude Desktop").click()
    desktop = page.get_by_role("tabpanel", name="Claude Desktop").get_by_test_id("install-command")
    entry = json.loads(desktop.first.inner_text())["mcpServers"]["notewell"]
    command = [entry["command"], *entry["args"][: entry["args"].index("serve")]]
    assert Path(command[0]).is_absolute() and os.access(command[0], os.X_OK), command
    ran = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0 and ran.stdout.startswith("notewell "), ran
    assert any(c.startswith(f"curl -fsSL '{web_url}/install.sh?client=claude-desktop' | ")
               for c in desktop.all_inner_texts())
    # the Inspector's command, pinned to the release the tests run (tests/js/package.json)
    page.get_by_role("tab", name="Any HTTP client").click()
    pinned = json.loads((REPO_ROOT / "tests" / "js" / "package.json").read_text())["dependencies"][
        "@modelcontextprotocol/inspector"]
    expect(page.get_by_role("tabpanel", name="Any HTTP client").get_by_test_id("install-command").filter(
        has_text="inspector")).to_have_text(
        f"npx -y @modelcontextprotocol/inspector@{pinned} --cli {web_url}/mcp --transport http "
        f"--header 'Authorization: Bearer {secret}' --method tools/list")

    async def tools() -> list[str]:
        async with connect(f"{web_url}/mcp", secret) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            await client.call_tool("listProjects", {})
            return names

    names = in_thread(tools)
    assert "listProjects" in names and "search_notes" in names and "brain_get_user_style" in names
    assert not any(n in names for n in ("remember", "search_memory"))  # no memory scope on this token

    page.goto("/settings/tokens")  # the token's last tool call, in its row
    row = page.get_by_role("row").filter(has_text="laptop")
    expect(row.get_by_role("cell").nth(4)).to_contain_text("listProjects")
    row.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("row").filter(has_text="laptop")).to_contain_text("revoked")
    expect(page.get_by_role("status")).to_contain_text("Revoked the token laptop (")
    page.reload()
    expect(page.get_by_text("Revoked the token laptop")).to_have_count(0)  # said once
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
    refused = httpx.post(f"{web_url}/mcp", json=initialize, headers={
        "Authorization": f"Bearer {secret}", "Accept": "application/json, text/event-stream"})
    assert refused.status_code == 401


def test_search_hit_leads_to_its_line(page: Page, web_url: str) -> None:
    sign_in(page, "alice")
    page.goto("/search")
    page.get_by_label("Search for").fill("maximum discount")
    page.get_by_role("button", name="Search", exact=True).click()
    hit = page.get_by_role("link", name="northwind-advisory/pricing-policy.md:24")
    expect(page.locator(".hits mark").first).to_have_text("maximum discount")
    check_and_shoot(page, "search")
    hit.click()
    expect(page).to_have_url(f"{web_url}/p/northwind-advisory/doc/pricing-policy.md?line=24#L24")
    marked = page.locator(".block.hit")
    expect(marked).to_have_count(1)
    expect(marked).to_contain_text("The maximum discount is 10 per cent of the fee.")
    assert page.locator("#L24").evaluate("el => el.closest('.block').classList.contains('hit')")
    check_and_shoot(page, "document")


def test_hidden_is_the_same_404_as_missing(page: Page, web_url: str) -> None:
    page.goto("/signin")  # by keyboard only: the email field has focus, Tab moves on, Enter submits
    expect(page.locator("#email")).to_be_focused()  # autofocus applied: on a loaded machine typing came first
    page.keyboard.type(email("bob"))
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORDS["bob"])
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{web_url}/projects")
    seen = []
    for path in ("/p/~alice", "/p/northwind-advisory", "/p/no-such-project", "/p/~alice/doc/notes.md",
                 "/p/northwind-advisory/doc/pricing-policy.md", "/p/no-such-project/doc/x.md"):
        response = page.goto(path)
        assert response is not None and response.status == 404, path
        seen.append(page.locator("main").inner_text())
    assert len(set(seen)) == 1
    check_and_shoot(page, "not-found")
    response = page.goto("/admin/users")  # a member has no admin pages at all
    assert response is not None and response.status == 404
    assert page.locator("main").inner_text() == seen[0]


def test_a_post_without_the_csrf_token_is_refused(page: Page, web_world: World) -> None:
    sign_in(page, "alice")
    before = len(web_world.runtime.store.identity.tokens())
    for form in ({"name": "forged", "scopes": "knowledge:read"}, {"name": "forged", "scopes": "knowledge:read",
                                                                 "csrf": "wrong"}):
        response = page.request.post("/settings/tokens", form=form, max_redirects=0)
        assert response.status == 403
        assert "CSRF" in response.text()
    assert len(web_world.runtime.store.identity.tokens()) == before


def test_admin_adds_a_user_and_grants_a_project(browser: Browser, page: Page, web_world: World,
                                                web_url: str) -> None:
    sign_in(page, "admin")
    page.goto("/admin/users")
    page.get_by_label("Email", exact=True).fill("carol@northwind.test")
    page.get_by_label("Name", exact=True).fill("Carol")
    page.get_by_label("Role", exact=True).select_option("member")
    page.get_by_role("button", name="Add user").click()
    page.get_by_label("Role of carol@northwind.test").select_option("staff")
    page.get_by_role("button", name="Set the role of carol@northwind.test").click()
    expect(page.get_by_label("Role of carol@northwind.test")).to_have_value("staff")
    page.get_by_label("Role of carol@northwind.test").select_option("member")
    page.get_by_role("button", name="Set the role of carol@northwind.test").click()
    page.get_by_role("button", name="Send sign-in link to carol@northwind.test").click()
    link = page.get_by_test_id("sign-in-link").inner_text().strip()
    assert link.startswith(f"{web_url}/signin/link/nwl_")
    check_and_shoot(page, "admin-users")
    page.goto("/admin/projects/northwind-advisory")
    page.get_by_label("User").fill("carol@northwind.test")
    page.get_by_role("button", name="Grant", exact=True).click()
    expect(page.get_by_role("row").filter(has_text="carol@northwind.test")).to_contain_text("read")
    check_and_shoot(page, "admin-project")
    save = page.get_by_role("button", name="Save").bounding_box()
    archive = page.get_by_role("button", name="Archive").bounding_box()
    assert save is not None and archive is not None
    assert archive["y"] - (save["y"] + save["height"]) >= 12, (save, archive)  # not touching: apart
    page.goto("/admin/audit?action=grant.")
    granted = page.get_by_role("row").filter(has_text="carol@northwind.test")
    expect(granted).to_contain_text("grant.set")
    # the detail as "key: value" lines, not JSON
    detail = granted.locator("ul.detail")
    expect(detail.get_by_role("listitem").filter(has_text="level:")).to_have_text("level: read")
    assert "{" not in detail.inner_text() and '"' not in detail.inner_text()
    check_and_shoot(page, "admin-audit")
    page.goto("/admin/projects")
    check_and_shoot(page, "admin-projects")
    alice_token = web_world.tokens["alice_project"]

    async def call() -> None:
        async with connect(f"{web_url}/mcp", alice_token) as client:
            await client.call_tool("searchKnowledge", {"query": "discount"})

    in_thread(call)
    page.goto("/admin/tokens")  # every token, with its last tool call
    listed = page.get_by_role("row").filter(has_text=alice_token.split("_")[1])
    expect(listed).to_contain_text("alice@northwind.test")
    expect(listed.get_by_role("cell").nth(5)).to_contain_text("searchKnowledge")
    check_and_shoot(page, "admin-tokens")

    carol = browser.new_context(base_url=web_url)
    member = carol.new_page()
    member.goto(link)
    member.get_by_role("button", name="Sign in").click()
    expect(member.get_by_role("link", name="Northwind Advisory")).to_be_visible()
    member.get_by_role("link", name="Northwind Advisory").click()
    expect(member.get_by_role("link", name="Pricing policy")).to_be_visible()
    check_and_shoot(member, "project")
    # deactivated: the session ends on the next request
    web_world.runtime.administration.set_user_active(LOCAL_OWNER, "carol@northwind.test", False)
    member.goto("/projects")
    expect(member).to_have_url(re.compile(r"/signin"))
    expect(member.get_by_role("status")).to_contain_text("deactivated")
    carol.close()


@pytest.mark.parametrize("ending", ["sign out", "user passwd", "user role", "user deactivate"])
def test_a_copied_session_cookie_ends_with_the_session(browser: Browser, web_world: World, web_url: str,
                                                       ending: str) -> None:
    """A session cookie copied to another browser works until its user signs out (anywhere), gets a new
    password or role, or is deactivated (the commands run as an operator would, against the same store)."""
    who = f"{ending.replace(' ', '-')}@northwind.test"
    web_world.runtime.administration.add_user(LOCAL_OWNER, who, "member")
    web_world.runtime.sign_in.set_password(LOCAL_OWNER, who, "first pass phrase")
    where = ["--vault", str(web_world.runtime.settings.vault), "--db", web_world.runtime.settings.db]
    own, copy = browser.new_context(base_url=web_url), browser.new_context(base_url=web_url)
    try:
        page = own.new_page()
        page.goto("/signin")
        page.get_by_label("Email").fill(who)
        page.get_by_label("Password").fill("first pass phrase")
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{web_url}/projects")
        stolen = own.cookies()
        copy.add_cookies(stolen)
        copied = copy.new_page()
        copied.goto("/projects")
        expect(copied.get_by_text(who, exact=True)).to_be_visible()  # the copy is signed in
        if ending == "sign out":
            page.get_by_role("button", name="Sign out").click()
        elif ending == "user passwd":
            done = CliRunner().invoke(app, ["user", "passwd", who, *where], input="second pass phrase\n")
            assert done.exit_code == 0, done.stderr
        else:
            done = run_cli(*ending.split(), who, *(["staff"] if ending == "user role" else []), *where)
            assert done.exit_code == 0, done.stderr
        why = "deactivated" if ending == "user deactivate" else "Your session has ended"
        for gone in (copied, page):
            gone.goto("/projects")
            expect(gone).to_have_url(re.compile(r"/signin\?next=/projects$"))
            if gone is copied or ending != "sign out":
                expect(gone.get_by_role("status")).to_contain_text(why)
        if ending == "user deactivate":
            assert run_cli("user", "activate", who, *where).exit_code == 0
        page.get_by_label("Email").fill(who)  # signing in again starts a session that works
        page.get_by_label("Password").fill("second pass phrase" if ending == "user passwd" else "first pass phrase")
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{web_url}/projects")
        copy.clear_cookies()
        copy.add_cookies(stolen)  # the copied cookie once more: still ended (reactivation brings nothing back)
        copied.goto("/projects")
        expect(copied).to_have_url(re.compile(r"/signin\?next=/projects$"))
        expect(copied.get_by_role("status")).to_contain_text("Your session has ended")
    finally:
        own.close()
        copy.close()


def test_a_project_page_pages_through_every_document(page: Page, web_world: World,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A project of more documents than a page holds (1,000) once listed the first page and no way on."""
    monkeypatch.setattr(browse, "PROJECT_PAGE", 3)
    everything = [m.path for m in web_world.runtime.store.documents.metas("northwind-advisory")]
    assert len(everything) > 6
    sign_in(page, "alice")
    page.goto("/p/northwind-advisory")
    seen: list[str] = []
    while True:
        seen += page.locator("ul.docs code").all_inner_texts()
        following = page.get_by_role("link", name="Next page")
        if following.count() == 0:
            break
        following.click()
        expect(page.get_by_role("link", name="Previous page")).to_be_visible()
    assert seen == everything
    for bad in ("%C2%B2", "9" * 5000, "-1", "x"):  # a Unicode digit, past int()'s digits, negative, not a number
        response = page.goto(f"/p/northwind-advisory?offset={bad}")  # refused, naming it (tests/test_web_paging.py)
        assert response is not None and response.status == 400
    page.goto(f"/p/northwind-advisory?offset={len(everything) + 5}")  # past the end: no range of nothing
    expect(page.get_by_text(f"No documents past {len(everything) + 5}.")).to_be_visible()
    assert "Documents " not in page.locator("nav[aria-label=Pages]").inner_text()

def test_memories_can_be_found_and_forgotten(page: Page, web_world: World) -> None:

    alice = user_principal(web_world.runtime.administration.user(LOCAL_OWNER, email("alice")))
    memory = web_world.runtime.memory
    ref = memory.remember(alice, "Deploys happen on Tuesdays after the stand-up.", path="ops").memory.ref
    sign_in(page, "alice")
    page.goto("/memories")
    page.get_by_label("Search memories").fill("deploys tuesdays")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_text(re.compile(r"found by words"))).to_be_visible()  # each result says how it was found
    check_and_shoot(page, "memories")
    page.get_by_role("link", name=re.compile("Deploys happen")).click()
    check_and_shoot(page, "memory")
    page.get_by_label("Reason").fill("moved to Wednesdays")
    page.get_by_role("button", name="Forget").click()
    expect(page.get_by_role("status")).to_have_text(f"Forgotten: {ref}")
    record = web_world.runtime.store.memories.get(ref)
    assert record is not None and record.delete_reason == "moved to Wednesdays"



def test_sessions_and_taught_knowledge(browser: Browser, page: Page, web_world: World, web_url: str) -> None:
    rt = web_world.runtime
    alice = user_principal(rt.administration.user(LOCAL_OWNER, email("alice")))
    started = rt.brain.start_session(alice, client_type="claude_code", prompt="Fix the pricing table layout",
                                     project_name="Pricing site")
    rt.brain.log_event(alice, started.session.id, "file_edit", {"file": "pricing.tsx", "lines": 12})
    rt.brain.report_outcome(alice, started.session.id, success=True, summary="Table fixed")
    taught = rt.brain.teach(alice, rule="Use CSS grid for pricing tables", trigger="when laying out tables",
                            project_id=started.project.id).item
    sign_in(page, "alice")
    page.get_by_role("link", name="Sessions").click()
    check_and_shoot(page, "sessions")
    page.get_by_role("link", name="Fix the pricing table layout").click()
    expect(page.locator("dl.meta")).to_contain_text("success")
    expect(page.get_by_role("listitem").filter(has_text="file_edit")).to_contain_text('"file": "pricing.tsx"')
    check_and_shoot(page, "session")
    session_path = page.url.removeprefix(web_url)

    page.goto("/memories")
    item = page.get_by_role("listitem").filter(has_text="Use CSS grid for pricing tables")
    item.get_by_label(re.compile("Reason for forgetting")).fill("we use flexbox now")
    item.get_by_role("button", name=re.compile("^Forget")).click()
    expect(page.get_by_role("status")).to_have_text(f"Forgotten: {taught.ref}")
    expect(page.get_by_text("Use CSS grid for pricing tables")).to_have_count(0)

    other = browser.new_context(base_url=web_url)
    bob = other.new_page()
    sign_in(bob, "bob")
    response = bob.goto(session_path)  # another person's session: the same 404 as a missing one
    assert response is not None and response.status == 404
    other.close()


def test_a_session_page_pages_through_every_event(page: Page, web_world: World) -> None:
    """149 events: the page shows the first EVENTS_PAGE_MAX and "Next events" the rest (issue 22, item 5)."""
    from notewell.services.brain_limits import EVENTS_PAGE_MAX

    rt = web_world.runtime
    alice = user_principal(rt.administration.user(LOCAL_OWNER, email("alice")))
    started = rt.brain.start_session(alice, prompt="A session of 149 steps", project_name="Pricing site")
    for step in range(149):
        rt.brain.log_event(alice, started.session.id, "step", {"n": f"step-{step:03}"})
    sign_in(page, "alice")
    page.goto(f"/sessions/{started.session.id}")
    events = page.locator("ol.cards > li")
    expect(events).to_have_count(EVENTS_PAGE_MAX)
    expect(events.first).to_contain_text("step-000")
    expect(events.last).to_contain_text(f"step-{EVENTS_PAGE_MAX - 1:03}")
    page.get_by_role("link", name="Next events").click()
    expect(events).to_have_count(149 - EVENTS_PAGE_MAX)
    expect(events.first).to_contain_text(f"step-{EVENTS_PAGE_MAX:03}")
    expect(events.last).to_contain_text("step-148")
    expect(page.get_by_role("link", name="Next events")).to_have_count(0)
    page.get_by_role("link", name="Previous events").click()
    expect(events.first).to_contain_text("step-000")


def test_vault_html_never_runs_in_the_page(page: Page, web_world: World) -> None:
    from notewell.indexer import sync

    rt = web_world.runtime
    (rt.settings.vault / "~alice" / "hostile.md").write_text(
        "# Notes\n\n<script>alert('vault')</script>\n\n<img src=x onerror=\"alert('img')\">\n\n"
        "[click me](javascript:alert('link'))\n", encoding="utf-8")
    sync(rt.settings, rt.store)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    sign_in(page, "alice")
    page.goto("/p/~alice/doc/hostile.md")
    expect(page.get_by_text("<script>alert('vault')</script>")).to_be_visible()
    assert page.locator("main script, main img").count() == 0
    assert page.locator("a[href^='javascript:']").count() == 0
    page.get_by_text("click me", exact=False).first.click()
    assert dialogs == []


def test_a_line_too_long_for_one_part_shows_once_and_the_lines_after_it_follow(page: Page,
                                                                                 web_world: World) -> None:
    from notewell.indexer import sync

    rt = web_world.runtime
    (rt.settings.vault / "~alice" / "wide.md").write_text("# Wide\n" + "abcd " * 20_000 + "\nafter the wide line\n",
                                                        encoding="utf-8")
    sync(rt.settings, rt.store)
    sign_in(page, "alice")
    page.goto("/p/~alice/doc/wide.md?view=source")
    expect(page.locator("pre.doc.source > span.line")).to_have_count(3)
    expect(page.locator("#L3")).to_have_text("3after the wide line")
    shown = len(page.locator("#L2").inner_text()) - 1  # the first part's 24 KB of it (less its number)
    assert 20_000 < shown < 30_000
    said = page.get_by_text("Line 2 is longer than a page holds").inner_text()  # said, with where the rest is
    found = re.search(r"its first ([\d,]+) characters are shown.*offset=2&column=(\d+)", said)
    assert found and abs(int(found.group(1).replace(",", "")) - shown) <= 1, said
    assert int(found.group(2)) == int(found.group(1).replace(",", "")) + 1


def test_saving_in_the_editor_unchanged_writes_the_same_bytes(page: Page, web_world: World) -> None:
    """In a real browser: the textarea drops a newline right after its tag and sends every break as CRLF; a
    note with leading blank lines and mixed endings saved untouched stays byte for byte, and a typed line
    lands with the note's commonest ending."""
    from notewell.indexer import sync

    rt = web_world.runtime
    note = rt.settings.vault / "~alice" / "endings.md"
    note.write_bytes(b"\n\n# Endings\r\nlf line\ncr line\rlast\r\n")
    sync(rt.settings, rt.store)
    sign_in(page, "alice")
    page.goto("/p/~alice/edit/endings.md")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Nothing changed: endings.md was not written")).to_be_visible()
    assert note.read_bytes() == b"\n\n# Endings\r\nlf line\ncr line\rlast\r\n"
    page.goto("/p/~alice/edit/endings.md")
    page.get_by_label("Text").press("Control+End")
    page.get_by_label("Text").type("typed")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Saved endings.md")).to_be_visible()
    assert note.read_bytes() == b"\n\n# Endings\r\nlf line\ncr line\rlast\r\ntyped"


def test_a_document_shows_its_title_once_and_its_front_matter_as_fields(page: Page) -> None:
    sign_in(page, "alice")
    page.goto("/p/northwind-advisory/doc/pricing-policy.md?line=3")
    check_and_shoot(page, "document-front-matter")
    expect(page.get_by_role("heading", level=1)).to_have_count(1)
    expect(page.get_by_role("heading", level=1)).to_have_text("Pricing policy")
    front = page.get_by_label("Front matter")
    expect(front).to_contain_text("owner")
    expect(front.locator("dd").first).to_have_text("Commercial lead")
    expect(page.locator("pre.front-matter")).to_have_count(0)
    expect(page.get_by_text("title: Pricing policy")).to_have_count(0)
    expect(page.locator(".block.hit")).to_contain_text("Commercial lead")  # line 3 is in the front matter
    page.goto("/p/northwind-advisory/doc/pricing-policy.md?line=7#L7")  # the heading's line: the page's title
    expect(page.locator("h1.hit")).to_have_text("Pricing policy")


def test_a_project_lists_summaries_from_real_paragraphs(page: Page) -> None:
    sign_in(page, "staff")
    page.goto("/p/handbook")
    item = page.get_by_role("listitem").filter(has=page.get_by_role("link", name="Leave policy", exact=True))
    expect(item.locator("p.summary")).to_have_text(re.compile(r"^We want you to take your leave\."))
    week = page.get_by_role("listitem").filter(has=page.get_by_role("link", name="Your first week", exact=True))
    expect(week.locator("p.summary code")).to_have_text("onboarding-checklist.md")
    assert "`" not in week.locator("p.summary").inner_text()
    check_and_shoot(page, "project-handbook")


def test_the_favicon_is_served(web_url: str) -> None:
    icon = httpx.get(f"{web_url}/favicon.ico", timeout=10)
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon"
    assert icon.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
