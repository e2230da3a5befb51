"""ATX headings (vault/headings.py): the same readings as the regexes they replaced, without their cost."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from notewell.vault.headings import atx_heading, title_heading

# the regexes the headings were read with before: right, but super-linear on long runs of blanks
_NOTE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_TITLE = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_LINES = st.text(alphabet=" \t#ab\u00a0\r\x0b", max_size=24)


@given(_LINES)
@example("## ##")
@example("#  ")
@example("   #### x ### ")
def test_atx_heading_reads_a_line_as_its_regex_did(line: str) -> None:
    match = _NOTE.match(line)
    assert atx_heading(line) == ((len(match.group(1)), match.group(2) or "") if match else None)


@given(_LINES)
@example("# #")
@example("#\u00a0\u00a0")
@example("# a # #")
def test_title_heading_reads_a_line_as_its_regex_did(line: str) -> None:
    match = _TITLE.match(line)
    assert title_heading(line) == (match.group(1) if match else None)


def test_headings_of_ordinary_lines() -> None:
    assert atx_heading("## Action items ##") == (2, "Action items")
    assert atx_heading("#hashtag") is None
    assert atx_heading("####### seven") is None
    assert title_heading("# Pricing policy") == "Pricing policy"
    assert title_heading("    # indented code") is None


def test_a_long_run_of_blanks_is_read_once() -> None:
    """The regexes took seconds (and minutes) on such lines; these return at once, or the suite's timeout
    ends them."""
    line = "# x" + " " * 200_000 + "y"
    assert atx_heading(line) == (1, line[2:])
    assert title_heading(line) == line[2:]
    assert atx_heading("#" + "\t" * 200_000) == (1, "")
    assert title_heading("# a" + " #" * 100_000 + "b") == "a" + " #" * 100_000 + "b"
