"""The edit operations on a note's text (services/note_edits.py): examples, and properties over generated
notes with front matter, headings of every level, code fences holding lines that look like headings, CRLF
and LF endings, non-ASCII text and notes without a final newline."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import example, given, reject, settings
from hypothesis import strategies as st

from notewell.errors import InvalidArgument
from notewell.services.note_edits import Edit, apply_edit
from notewell.services.note_text import (
    as_lines,
    bare,
    front_matter_end,
    headings,
    newline_of,
    section_end,
    split_lines,
)


def edited(note: str, edit: Edit) -> str:
    """apply_edit, where a generated edit that would move the front matter (refused) is no example."""
    try:
        return apply_edit(note, edit)
    except InvalidArgument as exc:
        if "front matter" in str(exc):
            reject()
        raise

WORDS = st.sampled_from(["alpha", "Beta", "gamma", "déjà vu", "日本", "x", "## not", "# faux", "---"])
TITLES = st.sampled_from(["Intro", "Decisions", "Risks", "Ünïcode", "Next steps"])


@st.composite
def notes(draw: st.DrawFn) -> str:
    """A note as lines: optional front matter, then headings, paragraphs, blank lines and fenced code."""
    lines: list[str] = []
    if draw(st.booleans()):
        lines += ["---", f"title: {draw(TITLES)}", "tags:", "- a", "---"]
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["heading", "text", "blank", "fence"]))
        if kind == "heading":
            lines.append(f"{'#' * draw(st.integers(1, 4))} {draw(TITLES)}")
        elif kind == "text":
            lines.append(" ".join(draw(st.lists(WORDS, min_size=1, max_size=4))))
        elif kind == "blank":
            lines.append("")
        else:
            fence = draw(st.sampled_from(["```", "~~~", "````"]))
            lines += [fence + "python", f"## {draw(TITLES)}", "# inside", fence]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(lines)
    return text + newline if lines and draw(st.booleans()) else text


CONTENT = st.lists(WORDS, min_size=0, max_size=3).map(lambda ws: "\n".join(ws))
# content holding no heading, so a section replaced with it ends where it did
PLAIN = st.lists(WORDS.filter(lambda w: not w.startswith("#")), max_size=3).map(lambda ws: "\n".join(ws))


def _unified(text: str) -> list[str]:
    return [bare(line) for line in split_lines(text)]


@settings(max_examples=300, deadline=None)
@given(notes(), CONTENT)
def test_append_keeps_every_line_and_adds_the_content_at_the_end(note: str, content: str) -> None:
    after = edited(note, Edit("append", content))
    assert after.startswith(note)
    assert _unified(after) == _unified(note) + _unified(content)


@settings(max_examples=300, deadline=None)
@given(notes(), CONTENT)
def test_prepend_goes_after_the_front_matter_and_loses_nothing(note: str, content: str) -> None:
    after = edited(note, Edit("prepend", content))
    old, new, added = _unified(note), _unified(after), _unified(content)
    at = front_matter_end(split_lines(note))
    assert new[:at] == old[:at]
    assert new[at:at + len(added)] == added
    assert new[at + len(added):] == old[at:]


@settings(max_examples=300, deadline=None)
@given(notes(), CONTENT, st.data())
def test_insert_under_a_heading_only_adds_lines_inside_its_section(note: str, content: str,
                                                                   data: st.DataObject) -> None:
    found = _unique_headings(note)
    if not found:
        return
    heading = data.draw(st.sampled_from(found))
    after = edited(note, Edit("insert_under_heading", content, heading=heading.label))
    lines = split_lines(note)
    end = section_end(lines, headings(lines), heading)
    old, new, added = _unified(note), _unified(after), _unified(content)
    places = [i for i in range(heading.index + 1, end + 1)
              if new[i:i + len(added)] == added and new[:i] + new[i + len(added):] == old]
    assert places  # the content, whole, directly inside the section; every other line kept in its order


@settings(max_examples=300, deadline=None)
@given(notes(), PLAIN, st.data())
def test_replace_section_round_trips_and_keeps_the_rest(note: str, content: str, data: st.DataObject) -> None:
    found = _unique_headings(note)
    if not found:
        return
    heading = data.draw(st.sampled_from(found))
    after = edited(note, Edit("replace_section", content, heading=heading.label))
    old_lines, new_lines = split_lines(note), split_lines(after)
    end = section_end(old_lines, headings(old_lines), heading)
    assert _unified(after)[:heading.index + 1] == _unified(note)[:heading.index + 1]
    new_heading = next(h for h in headings(new_lines) if h.label == heading.label)
    new_end = section_end(new_lines, headings(new_lines), new_heading)
    body = [bare(line) for line in new_lines[new_heading.index + 1:new_end]]
    while body and not body[-1].strip():
        body.pop()
    wanted = [bare(line) for line in as_lines(content, "\n")]
    while wanted and not wanted[-1].strip():
        wanted.pop()
    assert body == wanted
    assert _unified(after)[new_end:] == _unified(note)[end:]


@settings(max_examples=200, deadline=None)
@given(notes(), st.data())
def test_replace_changes_exactly_the_one_passage(note: str, data: st.DataObject) -> None:
    words = [w for w in ["alpha", "Beta", "déjà vu", "日本"] if note.count(w) == 1]
    if not words:
        return
    word = data.draw(st.sampled_from(words))
    assert edited(note, Edit("replace", "REPLACED", old=word)) == note.replace(word, "REPLACED")


@settings(max_examples=200, deadline=None)
@given(notes())
def test_an_edit_keeps_the_notes_line_endings(note: str) -> None:
    after = apply_edit(note, Edit("append", "one\ntwo"))
    if newline_of(note) == "\r\n":
        assert after.count("\r\n") == after.count("\n")
    else:
        assert "\r\n" not in after.replace(note, "", 1)


def _unique_headings(note: str) -> list:  # type: ignore[type-arg]
    found = headings(split_lines(note))
    labels = [h.label for h in found]
    return [h for h in found if labels.count(h.label) == 1]


# --- examples --------------------------------------------------------------------------------------------

NOTE = ("---\ntitle: Plan\n---\n# Plan\nintro\n\n## Decisions\n- ship\n\n```md\n## Decisions\n```\n"
        "### Old\nold\n\n## Risks\nnone\n")


def test_a_heading_inside_a_code_fence_is_not_a_heading() -> None:
    after = apply_edit(NOTE, Edit("replace_section", "- none yet", heading="## Decisions"))
    assert after == "---\ntitle: Plan\n---\n# Plan\nintro\n\n## Decisions\n- none yet\n\n## Risks\nnone\n"


def test_insert_under_a_heading_goes_before_its_sub_headings_and_blank_lines() -> None:
    after = apply_edit(NOTE, Edit("insert_under_heading", "- ask legal", heading="## Risks"))
    assert after.endswith("## Risks\nnone\n- ask legal\n")
    inner = apply_edit("## A\n- one\n\n### B\nb\n", Edit("insert_under_heading", "- two", heading="## A"))
    assert inner == "## A\n- one\n- two\n\n### B\nb\n"


def test_prepend_goes_after_front_matter() -> None:
    assert apply_edit(NOTE, Edit("prepend", "Draft.")).startswith("---\ntitle: Plan\n---\nDraft.\n# Plan\n")


def test_set_front_matter_sets_adds_and_removes_fields_keeping_the_others() -> None:
    note = "---\ntitle: Plan\ntags:\n- a\n- b\nowner: ada # the lead\n---\nbody\n"
    after = apply_edit(note, Edit("set_front_matter", fields={"tags": ["x"], "status": "done", "title": None}))
    assert after == "---\ntags:\n- x\nowner: ada # the lead\nstatus: done\n---\nbody\n"
    assert apply_edit("body\r\n", Edit("set_front_matter", fields={"n": 2})) == "---\r\nn: 2\r\n---\r\nbody\r\n"


def test_a_multi_line_value_is_removed_and_replaced_whole_and_the_fields_around_it_keep() -> None:
    """A value with a blank line inside (as PyYAML writes "a\n\nb" and as people write folded text) runs on past
    that blank line: removing or replacing the field takes all of it, never leaving its tail in the field above."""
    note = "---\ntitle: Keep\nstatus: draft\nowner: ann\n---\nbody\n"
    multi = apply_edit(note, Edit("set_front_matter", fields={"status": "line one\nline two"}))
    assert "\n\n" in multi.split("---")[1]  # the blank line inside the value
    removed = apply_edit(multi, Edit("set_front_matter", fields={"status": None}))
    assert removed == "---\ntitle: Keep\nowner: ann\n---\nbody\n"
    again = apply_edit(multi, Edit("set_front_matter", fields={"status": "done"}))
    assert again == "---\ntitle: Keep\nstatus: done\nowner: ann\n---\nbody\n"
    spaced = "---\ntitle: Keep\n\nstatus: draft\n---\nbody\n"  # a blank line between two fields stays
    assert apply_edit(spaced, Edit("set_front_matter", fields={"title": "New"})) == (
        "---\ntitle: New\n\nstatus: draft\n---\nbody\n")


def test_an_edit_that_would_change_another_field_is_refused() -> None:
    """The read-back covers every field: a line editing that would take a line of another field is refused."""
    note = "---\na: >\n  folded\nb: 1\nc: [1,\n  2]\n---\nbody\n"
    assert apply_edit(note, Edit("set_front_matter", fields={"b": 2})) == note.replace("b: 1", "b: 2")
    odd = "---\na: 'one\n\n  two'\nb: 1\n---\n"
    assert apply_edit(odd, Edit("set_front_matter", fields={"a": None})) == "---\nb: 1\n---\n"


def test_front_matter_with_an_alias_is_not_edited() -> None:
    """Thirty anchors of two aliases each are a billion items: read, compared or shown, that is hours of a core."""
    block = "a0: &a0 [x, x]\n" + "".join(f"a{n}: &a{n} [*a{n - 1}, *a{n - 1}]\n" for n in range(1, 30))
    with pytest.raises(InvalidArgument, match=r"an alias \(\*name\) is not read in front matter") as err:
        apply_edit(f"---\n{block}---\nbody\n", Edit("set_front_matter", fields={"status": "done"}))
    assert err.value.field == "fields"


def test_a_file_that_is_not_markdown_has_no_front_matter_to_set_and_prepends_at_the_top() -> None:
    with pytest.raises(InvalidArgument, match="this file is not markdown") as err:
        apply_edit('{"a": 1}\n', Edit("set_front_matter", fields={"x": "y"}), markdown=False)
    assert err.value.field == "operation"
    yaml_file = "---\nkey: 1\n---\nnext: 2\n"  # two YAML documents, not a front matter
    assert apply_edit(yaml_file, Edit("prepend", content="# top\n"), markdown=False) == "# top\n" + yaml_file
    assert apply_edit(yaml_file, Edit("append", content="---\nthird: 3\n"), markdown=False) == (
        yaml_file + "---\nthird: 3\n")


@given(st.dictionaries(st.sampled_from(["title", "status", "owner", "tags"]),
                       st.one_of(st.text(max_size=30), st.integers(), st.lists(st.text(max_size=8), max_size=3)),
                       min_size=1),
       st.sampled_from(["title", "status", "owner", "tags", "new"]),
       st.one_of(st.none(), st.text(max_size=40), st.lists(st.text(max_size=10), max_size=3)))
@example({"title": "Keep", "status": "line one\nline two"}, "status", None)  # the tail once left in title
def test_setting_a_field_changes_that_field_alone(fields: dict[str, object], key: str, value: object) -> None:
    try:
        note = apply_edit("body\n", Edit("set_front_matter", fields=fields))
    except InvalidArgument:
        reject()  # a value the line editing cannot write (it says so): no example
    try:
        after = apply_edit(note, Edit("set_front_matter", fields={key: value}))
    except InvalidArgument as exc:
        assert "cannot be written as asked" in str(exc)  # refused, never written half-right
        return
    expected = {k: v for k, v in {**fields, key: value}.items() if v is not None}
    block = after.split("---\n")[1] if after.startswith("---") else ""
    assert (yaml.safe_load(block) or {}) == expected and after.endswith("body\n")


def test_crlf_note_replace_with_lf_passage() -> None:
    assert apply_edit("a\r\nb\r\nc\r\n", Edit("replace", "B\nB2", old="b\nc")) == "a\r\nB\r\nB2\r\n"


@pytest.mark.parametrize(("edit", "field", "words"), [
    (Edit("replace", "x", old="## Decisions"), "old", "occurs 2 times"),
    (Edit("replace", "x", old="absent"), "old", "does not occur"),
    (Edit("replace_section", "x", heading="## Missing"), "heading", "its headings: '# Plan'"),
    (Edit("replace_section", "x", heading="Decisions"), "heading", "with its level"),
    (Edit("insert_under_heading", "x", heading="### Decisions"), "heading", "is not a heading"),
    (Edit("set_front_matter", fields={"bad key": 1}), "fields", "not a field name"),
    (Edit("set_front_matter"), "fields", "at least one"),
])
def test_an_edit_that_cannot_apply_names_the_argument(edit: Edit, field: str, words: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        apply_edit(NOTE, edit)
    assert err.value.field == field and words in str(err.value)


def test_two_headings_of_the_same_text_and_level_are_refused_with_their_lines() -> None:
    with pytest.raises(InvalidArgument, match=r"is on 2 lines \(1, 3\)"):
        apply_edit("## A\nx\n## A\ny\n", Edit("replace_section", "z", heading="## A"))


def test_broken_front_matter_is_not_edited() -> None:
    with pytest.raises(InvalidArgument, match="not valid YAML"):
        apply_edit("---\ntitle: [unclosed\n---\nbody\n", Edit("set_front_matter", fields={"a": 1}))


def test_an_edit_that_would_swallow_a_heading_into_front_matter_is_refused() -> None:
    """Found by hypothesis: "---" put under the heading of "---\n# Intro" pairs with the first line."""
    with pytest.raises(InvalidArgument, match="front matter"):
        apply_edit("---\n# Intro", Edit("replace_section", "---", heading="# Intro"))
    with pytest.raises(InvalidArgument, match="front matter"):
        apply_edit("---\nno fence yet\n", Edit("append", "---"))
    assert apply_edit("# Intro\n", Edit("append", "---")) == "# Intro\n---\n"  # a rule, not front matter
