"""The web's document page lists a document's backlinks and links, within what the signed-in person may read
(over plain HTTP: a person's session as a browser holds it, without a browser)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from links_world import opened_world
from mcp_world import World, serve_world
from notewell.access.principal import LOCAL_OWNER
from notewell.web.markdown import render_markdown


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from opened_world(tmp_path, str(tmp_path / "index.db"))


def _signed_in(base: str, world: World, handle: str) -> httpx.Client:
    world.runtime.sign_in.set_password(LOCAL_OWNER, f"{handle}@example.test", f"{handle} pass phrase")
    client = httpx.Client(base_url=base, timeout=30, follow_redirects=True)
    form = client.get("/signin").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form)
    assert csrf is not None
    signed = client.post("/signin", data={"email": f"{handle}@example.test", "password": f"{handle} pass phrase",
                                          "csrf": csrf.group(1), "next": "/projects"})
    assert signed.status_code == 200 and signed.url.path == "/projects"
    return client


def test_the_document_page_lists_backlinks_and_links(world: World) -> None:
    with serve_world(world) as server:
        base = server.url.removesuffix("/mcp")
        mia, ada = _signed_in(base, world, "mia"), _signed_in(base, world, "ada")
        policy = mia.get("/p/team/doc/pricing-policy.md").text
        review = mia.get("/p/team/doc/notes/review.md").text
        admin_review = ada.get("/p/team/doc/notes/review.md").text
        mia.close()
        ada.close()
    assert "Backlinks <span class=\"hint\">(2)</span>" in policy
    assert ('<a href="/p/team/doc/notes/review.md">team/notes/review.md</a> · '
            '<a href="/p/team/doc/notes/review.md?line=2#L2">line 2</a>') in policy
    assert "No document you can read links here." in review  # secret/plan.md links here: mia may not read it
    assert '<span class="unresolved">secret/plan.md</span>' in review  # exactly as secret/lost.md
    assert '<span class="unresolved">secret/lost.md</span>' in review
    assert "secret/plan.md</a>" in admin_review and "Backlinks <span class=\"hint\">(1)</span>" in admin_review


def test_the_link_map_draws_the_neighbourhood_within_what_may_be_read(world: World) -> None:
    with serve_world(world) as server:
        base = server.url.removesuffix("/mcp")
        mia, ada = _signed_in(base, world, "mia"), _signed_in(base, world, "ada")
        mine = mia.get("/p/team/doc/notes/review.md").text
        admins = ada.get("/p/team/doc/notes/review.md").text
        lonely = mia.get("/p/team/other/plan.md").text
        mia.close()
        ada.close()
    drawn = re.search(r'<svg class="link-map".*?</svg>', mine, re.S)
    assert drawn is not None and 'aria-hidden="true"' in drawn.group()
    nodes = re.findall(r'<a href="([^"]+)" tabindex="-1">', drawn.group())
    assert nodes == ["/p/team/doc/pricing-policy.md", "/p/team/doc/clients/Kestrel%20Logistics.md",
                     "/p/team/doc/plans/plan.md", "/p/team/doc/clients/acme.md",
                     "/p/team/doc/menus/Caf%C3%A9%20Menu.md"]
    admin_nodes = re.findall(r'<a href="([^"]+)" tabindex="-1">', admins)
    assert admin_nodes == [*nodes[:4], "/p/secret/doc/plan.md", nodes[4]]  # a link both ways is one node
    assert 'class="edge both"' in admins and "link-map" not in lonely


def test_map_labels_name_the_folder_when_two_files_share_a_name() -> None:
    from notewell.web.link_map import Neighbour, link_map

    drawn = link_map("p/a.md", [Neighbour("p/plans/plan.md", "/x", True, False),
                                Neighbour("q/other/plan.md", "/y", False, True),
                                Neighbour("p/<b>.md", "/z", True, False)])
    assert ">plans/plan.md</text>" in drawn and ">other/plan.md</text>" in drawn
    assert "&lt;b&gt;.md" in drawn and "<b>" not in drawn  # names are escaped


def test_wikilinks_in_the_text_lead_to_their_targets_or_are_marked(world: World) -> None:
    with serve_world(world) as server:
        base = server.url.removesuffix("/mcp")
        mia, ada = _signed_in(base, world, "mia"), _signed_in(base, world, "ada")
        review = mia.get("/p/team/doc/notes/review.md").text
        admins = ada.get("/p/team/doc/notes/review.md").text
        mia.close()
        ada.close()
    assert '<a href="/p/team/doc/pricing-policy.md">pricing-policy</a>' in review
    assert '<a href="/p/team/doc/clients/Kestrel%20Logistics.md">Kestrel</a>' in review  # the label shown
    # the anchor as the heading's id: a heading "Terms" there is <h2 id="terms"> (web/heading_ids.py)
    assert '<a href="/p/team/doc/clients/Kestrel%20Logistics.md#terms">kestrel logistics#Terms</a>' in review
    assert '<h1 id="q2-review">' in review  # the title heading, shown as the page's h1, keeps its id
    assert '<span class="unresolved" title="unresolved">plan</span>' in review  # ambiguous
    assert "<code>[[in-code]]</code>" in review and "[[in-fence]]" in review  # code stays code
    # vault-absolute: that document's page; to mia, who may not read secret, marked as a link to nothing is
    assert '<a href="/p/secret/doc/plan.md" class="unresolved" title="unresolved">their plan</a>' in review
    assert '<a href="/p/secret/doc/plan.md">their plan</a>' in admins
    lost = '<a href="/p/secret/doc/lost.md" class="unresolved" title="unresolved">a lost one</a>'
    assert lost in review and lost in admins
    assert '<a href="/p/team/doc/plans/plan.md#goals">The plan</a>' in review  # relative: that document's page


def test_the_document_page_lists_the_memories_about_it_that_the_reader_may_see(world: World) -> None:
    rt = world.runtime
    rt.administration.grant(LOCAL_OWNER, "mia@example.test", "team", "write")  # a memory is written where one writes
    mia = rt.authentication.authenticate(world.tokens["mia_all"])
    shared = rt.memory.remember(mia, "The policy's discount table is out of date.", project="team",
                                about="team/pricing-policy.md", title="Discount table stale")
    rt.memory.remember(mia, "My own note on team/pricing-policy.md", project="team", private=True,
                       title="Private pricing note")
    with serve_world(world) as server:
        base = server.url.removesuffix("/mcp")
        hers, admins = (_signed_in(base, world, h) for h in ("mia", "ada"))
        mine, theirs = (c.get("/p/team/doc/pricing-policy.md").text for c in (hers, admins))
        hers.close()
        admins.close()
    assert "Memories about it" in mine and "Private pricing note" in mine and "(names it," in mine
    assert f'href="/memories/{shared.memory.ref}">Discount table stale</a>' in mine
    assert "Discount table stale" in theirs and "Private pricing note" not in theirs  # another's private memory


def test_a_vault_absolute_link_keeps_its_anchor_and_drops_its_query() -> None:
    """The anchor of ``[x](</team/Kestrel Logistics.md#terms>)`` stays the page's anchor (it was encoded into the
    path, a page that does not exist)."""
    html = "".join(str(block.html) for block in render_markdown(
        "[a](</team/clients/Kestrel Logistics.md#terms>) [b](/team/p.md?v=2#top)\n", wikilinks={}))
    assert '<a href="/p/team/doc/clients/Kestrel%20Logistics.md#terms">a</a>' in html
    assert '<a href="/p/team/doc/p.md#top">b</a>' in html


def test_a_relative_link_leads_to_its_documents_page_in_another_project_too() -> None:
    """``../secret/plan.md`` from lab/linker.md names secret/plan.md; left as written, the browser resolved it
    against the page's URL (/p/lab/doc/linker.md) to /p/lab/secret/plan.md, a 404."""
    html = "".join(str(block.html) for block in render_markdown(
        "[s](../secret/plan.md) [n](notes/b.md#Top) [u](https://example.test/x) [a](#here) [o](../../out.md)\n",
        wikilinks={}, unresolved=("lab", "linker.md", set())))
    assert '<a href="/p/secret/doc/plan.md">s</a>' in html
    assert '<a href="/p/lab/doc/notes/b.md#top">n</a>' in html
    assert '<a href="https://example.test/x">u</a>' in html and '<a href="#here">a</a>' in html
    assert '<a href="../../out.md">o</a>' in html  # out of the vault: no document's page, left as written
