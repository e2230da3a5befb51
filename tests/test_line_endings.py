"""An editor's text given back the note's line endings (services/line_endings.py): the text is exactly what was
sent, with "\\n" turned into the endings the note had on the lines kept, whatever the mix."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from notewell.services.line_endings import restored

LINES = st.lists(st.sampled_from(["", "a", "b", "# Head", "same", "Größe", "  x"]), max_size=12)
ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


def _lf(text: str) -> str:
    return re.sub(r"\r\n|\r", "\n", text)


@st.composite
def notes(draw: st.DrawFn) -> str:
    lines = draw(LINES)
    return "".join(line + draw(ENDINGS) for line in lines) + draw(st.sampled_from(["", "end"]))


@given(notes())
def test_a_note_sent_back_unchanged_is_the_note_byte_for_byte(note: str) -> None:
    assert restored(note, _lf(note)) == note


@given(notes(), LINES, st.sampled_from(["", "tail"]))
def test_the_text_is_what_was_sent_and_kept_lines_keep_their_endings(note: str, lines: list[str],
                                                                      last: str) -> None:
    edited = "".join(line + "\n" for line in lines) + last
    out = restored(note, edited)
    assert _lf(out) == edited
    assert "\r" not in out or "\r" in note  # an ending comes from the note, or is its commonest


def test_an_added_line_takes_the_commonest_ending_and_the_others_keep_theirs() -> None:
    note = "\n\n# Mixed\r\nlf line\ncr line\rcrlf line\r\nend"
    edited = "\n\n# Mixed\nlf line\nnew line\ncr line\ncrlf line\nend"
    assert restored(note, edited) == "\n\n# Mixed\r\nlf line\nnew line\ncr line\rcrlf line\r\nend"
    assert restored("a\r\nb\r\n", "a\nb\nc\n") == "a\r\nb\r\nc\r\n"


def test_forty_thousand_identical_lines_and_one_more_are_matched_at_once() -> None:
    note = "row\r\n" * 40_000
    assert restored(note, "row\n" * 40_000 + "more\n") == note + "more\r\n"
    assert restored(note, "other\n" * 40_000) == "other\r\n" * 40_000  # nothing kept: the commonest ending


def test_paragraphs_each_edited_are_matched_at_once() -> None:
    """Blank lines between 1,000 paragraphs, every paragraph changed: matched line by line (blank lines too)
    this took 30 s for 2,000 lines; each blank line, found everywhere, now takes the commonest ending."""
    note = "".join(f"Paragraph {n} about Foo.\r\n\r\n" for n in range(1_000))
    edited = "".join(f"Paragraph {n} about Bar.\n\n" for n in range(1_000))
    assert restored(note, edited) == edited.replace("\n", "\r\n")
    assert restored(note, "\n".join("q" if n % 2 else "" for n in range(2_000))) == "\r\n".join(
        "q" if n % 2 else "" for n in range(2_000))
