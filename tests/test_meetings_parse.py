"""The meeting-note line parser (vault/meetings.py): which notes are meeting notes, which lines are items,
the meeting tag; examples, then Hypothesis properties."""

from __future__ import annotations

import datetime

from hypothesis import given
from hypothesis import strategies as st

from notewell.vault.meetings import (
    MAX_ITEMS,
    MAX_TEXT_CHARS,
    MeetingLine,
    is_meeting,
    meeting_tag,
    parse_items,
    parse_meeting,
    read_line,
)

NOTE = """---
attendees: [tom, eve]
---
# Kickoff

Date: 2026-03-04
Decision: ship in April.
Tom Whitcombe: send the plan by 2026-03-10.

## Actions

- [ ] Tom: draft the budget #blocker
- [x] Eve: book the room
- @eve check the contract
- Is the API stable?
  - nested: also an item
1. Blocker: Tom & eve@x.test: fix the build
- TODO(tom, eve): write it up
The owners confirm by Friday; a paragraph, no item.
Eve: a line that names its assignee

```
- [ ] Tom: not an item, it is code
```

### Details (still under Actions)

- [ ] write the minutes

## Notes

- [ ] a checkbox of the note's own
- Tom: no date, no item

## Open questions

- Who owns the budget
"""


def test_a_note_reads_as_its_lines_say() -> None:
    meeting = parse_meeting("meetings/2026-03-04-kickoff.md", NOTE)
    assert meeting is not None and meeting.tag == "meeting:2026-03-04-kickoff"
    got = [(i.line, i.text, i.assignees, i.due, i.question, i.blocker, i.done, i.needs_assignee)
           for i in meeting.items]
    assert got == [
        (8, "Tom Whitcombe: send the plan by 2026-03-10.", ("Tom Whitcombe",), "2026-03-10", False, False, False,
         True),
        (12, "Tom: draft the budget", ("Tom",), None, False, True, False, False),
        (13, "Eve: book the room", ("Eve",), None, False, False, True, False),
        (14, "@eve check the contract", ("@eve",), None, False, False, False, False),
        (15, "Is the API stable?", (), None, True, False, False, False),
        (16, "nested: also an item", ("nested",), None, False, False, False, False),
        (17, "Tom & eve@x.test: fix the build", ("Tom", "eve@x.test"), None, False, True, False, False),
        (18, "TODO(tom, eve): write it up", ("tom", "eve"), None, False, False, False, False),
        (20, "Eve: a line that names its assignee", ("Eve",), None, False, False, False, False),
        (28, "write the minutes", (), None, False, False, False, False),
        (37, "Who owns the budget", (), None, True, False, False, False),
    ]


def test_which_notes_are_meeting_notes() -> None:
    assert is_meeting("meetings/a.md", {}) and is_meeting("clients/acme/Meetings/a.md", {})
    assert is_meeting("notes/a.md", {"type": "meeting"}) and is_meeting("a.md", {"type": ["note", "Meeting"]})
    assert not is_meeting("meetings.md", {}) and not is_meeting("notes/meetings-plan/../a.md", {"type": "note"})
    assert not is_meeting("meetings/a.txt", {"type": "meeting"})  # markdown only
    assert parse_meeting("notes/plan.md", "## Actions\n- [ ] Tom: x\n") is None
    typed = parse_meeting("notes/plan.md", "---\ntype: meeting\ndate: 2026-05-01\n---\n## Actions\n- [ ] Tom: x\n")
    assert typed is not None and typed.tag == "meeting:2026-05-01-plan" and typed.items[0].line == 6


def test_the_meeting_tag() -> None:
    assert meeting_tag("meetings/meeting-2026-08-14-pricing.md", {}) == "meeting:2026-08-14-pricing"
    assert meeting_tag("meetings/Weekly Sync.md", {"date": datetime.date(2026, 1, 5)}) \
        == "meeting:2026-01-05-weekly-sync"
    assert meeting_tag("meetings/2026-13-45-odd.md", {}) == "meeting:2026-13-45-odd"  # not a date: words
    assert meeting_tag("meetings/retro.md", {}) == "meeting:retro"
    assert meeting_tag("meetings/会议.md", {}) == "meeting:note"
    assert len(meeting_tag(f"meetings/2026-01-01-{'x' * 200}.md", {})) == 64


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10)
_NAME = st.lists(_WORD, min_size=1, max_size=3).map(lambda ws: " ".join(w.capitalize() for w in ws))
_TASK = st.lists(_WORD, min_size=1, max_size=8).map(" ".join)
_DAY = st.dates(min_value=datetime.date(2000, 1, 1), max_value=datetime.date(2099, 12, 31))


@given(_NAME, _TASK, st.sampled_from([" ", "x", "X", None]), st.sampled_from(["-", "*", "+", "1."]))
def test_a_list_item_under_actions_names_its_assignee(name: str, task: str, box: str | None, mark: str) -> None:
    line = f"{mark} {'' if box is None else f'[{box}] '}{name}: {task}"
    item = read_line(3, line, in_actions=True, in_questions=False)
    assert item == MeetingLine(3, f"{name}: {task}", (name,), None, False, False, box in ("x", "X"), False)


@given(_NAME, _TASK, _DAY, st.booleans())
def test_elsewhere_only_a_named_dated_line_is_an_item(name: str, task: str, day: datetime.date, listed: bool) -> None:
    dated = f"{'- ' if listed else ''}{name}: {task} by {day.isoformat()}"
    item = read_line(1, dated, in_actions=False, in_questions=False)
    assert item is not None and item.assignees == (name,) and item.due == day.isoformat() and item.needs_assignee
    assert read_line(1, f"{'- ' if listed else ''}{name}: {task}", in_actions=False, in_questions=False) is None
    assert read_line(1, f"- [ ] {task} by {day.isoformat()}", in_actions=False, in_questions=False) is None


@given(st.lists(st.text(max_size=60), max_size=12), st.sampled_from(["```", "~~~", "````"]))
def test_nothing_inside_a_fence_is_an_item(lines: list[str], fence: str) -> None:
    inside = [line for line in lines if not line.lstrip(" ").startswith(("`", "~"))]
    body = "\n".join(["## Actions", fence, *inside, fence, "- [ ] after the fence"])
    assert [i.text for i in parse_items(body)] == ["after the fence"]


@given(st.text(max_size=3000))
def test_any_text_parses_within_bounds(text: str) -> None:
    items = parse_items("## Actions\n" + text)
    assert len(items) <= MAX_ITEMS
    assert all(0 < len(i.text) <= MAX_TEXT_CHARS and i.text == " ".join(i.text.split()) for i in items)
    assert all(not i.needs_assignee or (i.assignees and i.due) for i in items)


def test_bounds() -> None:
    many = "## Actions\n" + "".join(f"- item {i}\n" for i in range(MAX_ITEMS + 50))
    assert len(parse_items(many)) == MAX_ITEMS
    long = parse_items("## Actions\n- " + "word " * 1000)
    assert len(long[0].text) == MAX_TEXT_CHARS and long[0].text.endswith("…")



def test_a_heading_with_a_long_run_of_blanks_is_read_at_once() -> None:
    """Blanks inside a heading's text once cost time quadratic in their number (0.3 s for 4,000, minutes
    for 100,000); the heading still opens its section."""
    blanks = " \t" * 50_000
    assert [i.text for i in parse_items(f"## Next{blanks}steps ##\n- write the minutes\n")] == ["write the minutes"]
    assert parse_items(f"## Next{blanks}week ##\n- write the minutes\n") == []
