"""Documents as HTML (notewell.web.markdown): raw HTML and script links never reach the page, and every source
line of a document lands in exactly one block, so a search hit's #L<n> anchor always exists; front matter,
titles and summaries as the pages show them; and the notewell command the wizard gives spawning clients."""

from __future__ import annotations

import subprocess
import sys
from itertools import pairwise
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.web.clients import notewell_executable
from notewell.web.heading_ids import PAGE_IDS, fragment_for, unique_ids
from notewell.web.markdown import inline_summary, numbered_lines, render_markdown


def test_raw_html_and_script_links_are_shown_as_text() -> None:
    text = ("# Title <b>bold</b>\n\n<script>alert(1)</script>\n\n[click](javascript:alert(1)) "
            "<img src=x onerror=alert(1)> [ok](other.md)\n")
    html = "".join(block.html for block in render_markdown(text))
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="javascript:' not in html
    assert '<a href="other.md">ok</a>' in html


def test_front_matter_is_its_own_block_and_lines_count_from_the_file() -> None:
    text = ("---\ntitle: Pricing\nowner: Commercial lead\ntags: [a, b]\n---\n\n# Pricing\n\nThe maximum discount\n"
            "is 10 per cent.\n")
    blocks = render_markdown(text, wanted_line=10)
    assert [(b.first, b.last) for b in blocks] == [(1, 5), (7, 7), (9, 10)]
    assert [b.marked for b in blocks] == [False, False, True]
    assert [b.kind for b in blocks] == ["front", "", ""]
    assert blocks[0].fields == (("title", "Pricing"), ("owner", "Commercial lead"), ("tags", "a, b"))
    assert "---" not in blocks[0].html  # fields, not the raw YAML


def test_the_title_shows_once_and_front_matter_as_fields() -> None:
    """The heading that is the page's title is marked as such (the page shows it as its h1, once); the front
    matter's title is left out of its fields; front matter that is no mapping is shown as written."""
    text = "---\ntitle: Pricing policy\napproved: 2026-04-01\n---\n\n# Pricing  policy\n\nText.\n"
    blocks = render_markdown(text, title="Pricing policy")
    assert [(b.kind, b.fields) for b in blocks] == [("front", (("approved", "2026-04-01"),)), ("title", ()), ("", ())]
    assert [b.kind for b in render_markdown("# Other\n\nText.\n", title="Pricing policy")] == ["", ""]
    odd = render_markdown("---\n- just a list\n---\nText.\n")
    assert odd[0].kind == "front" and odd[0].fields == () and "- just a list" in odd[0].html


def test_a_summary_renders_its_inline_markdown() -> None:
    html = inline_summary("See `onboarding-checklist.md` and [the guide](guide.md), *today* <b>now</b>")
    assert html == ("See <code>onboarding-checklist.md</code> and the guide, <em>today</em> "
                    "&lt;b&gt;now&lt;/b&gt;")


LINE = st.one_of(st.just(""), st.just("---"), st.just("```"), st.just("- item"), st.just("1. step"),
                 st.just("# Heading"), st.just("> quote"), st.just("    code"), st.just("| a | b |"),
                 st.just("|---|---|"), st.text(alphabet="ab <>*_`[]()#-|", min_size=1, max_size=12))


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE, max_size=30))
def test_every_nonblank_line_is_in_exactly_one_block(lines: list[str]) -> None:
    text = "\n".join(lines)
    blocks = render_markdown(text)
    spans = [(b.first, b.last) for b in blocks]
    assert all(first <= last for first, last in spans)
    assert all(a[1] < b[0] for a, b in pairwise(spans)), spans  # in order, no overlap
    source = numbered_lines(text) if text else []
    for n, line in enumerate(source, start=1):
        if line.strip():
            assert sum(first <= n <= last for first, last in spans) == 1, (n, line, spans)
    for wanted in range(1, len(source) + 1):
        assert sum(b.marked for b in render_markdown(text, wanted)) <= 1


def test_the_notewell_command_is_absolute_and_runs() -> None:
    """What a client that starts Notewell itself (Claude Desktop) runs: the running notewell script by its
    absolute path, else notewell beside this Python or on PATH, else this Python with -m notewell."""
    script = Path(sys.executable).parent / "notewell"
    assert notewell_executable(str(script)) == (str(script.absolute()),)
    for argv0 in ("/usr/lib/python3/dist-packages/pytest/__main__.py", "notewell"):  # not a notewell script
        command = notewell_executable(argv0)
        assert Path(command[0]).is_absolute()
        ran = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60, check=False)
        assert ran.returncode == 0 and ran.stdout.startswith("notewell "), ran


def test_headings_have_ids_that_links_to_them_meet() -> None:
    """GitHub's ids; a repeat and an id of the page itself numbered; a link's anchor, percent-encoded or as the
    heading reads (a wikilink's), meets the id; line anchors, block references and other sites' anchors stay."""
    text = ("# Plan\n\n## Set up `x` now!\n\n## Set up x now\n\n## Backlinks heading\n\n## Ünïcode 設定\n\n"
            "[a](other.md#Set%20Up) [b](#set-up-x-now) [c](https://example.com/#Top) [d](#L3) [e](#^block1)"
            " [f](/team/p.md#Goals) [[Kestrel#Set up x now]]\n")
    html = "".join(str(b.html) for b in render_markdown(text, wikilinks={"Kestrel": "/p/team/doc/Kestrel.md"}))
    for heading in ('<h2 id="set-up-x-now">Set up <code>x</code> now!</h2>', '<h2 id="set-up-x-now-1">',
                    '<h2 id="backlinks-heading-1">', '<h2 id="ünïcode-設定">'):
        assert heading in html
    for link in ('href="other.md#set-up"', 'href="#set-up-x-now"', 'href="https://example.com/#Top"',
                 'href="#L3"', 'href="#%5Eblock1"', 'href="/p/team/doc/p.md#goals"',
                 'href="/p/team/doc/Kestrel.md#set-up-x-now"'):
        assert link in html
    [title, *_] = render_markdown("# The Plan\n\ntext\n", title="The Plan")
    assert title.kind == "title" and title.anchor == "the-plan"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=12))
def test_heading_ids_are_unique_and_a_link_to_one_meets_it(texts: list[str]) -> None:
    ids = unique_ids(texts)
    assert len(set(ids)) == len(ids) and not set(ids) & PAGE_IDS
    assert all(i and fragment_for(i) == i for i in ids)
