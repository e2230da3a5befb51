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
