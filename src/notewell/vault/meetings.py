"""A meeting note's action items, read from its text (no store, no users): which notes are meeting notes,
which of their lines are items, and the meeting's tag (docs/brain.md, "Meeting action items").

A meeting note is a markdown document in a folder named ``meetings`` (any case, at any depth of its project)
or one whose front matter says ``type: meeting``. Its items are:

- every list item under an actions heading (``## Actions``, ``Action items``, ``Next steps``, ``To do``, …;
  or ``Open questions``, whose items are questions), up to the next heading of the same or a higher level,
  and every line there that names its assignee (a paragraph that does not is no item):
  ``- [ ] task`` open, ``- [x] task`` ticked (done), ``- task`` open; ``Name: task`` names the assignee
  (several with ``,``, ``&``, ``and`` or ``/``), and so do a leading ``@handle`` and ``TODO(name): task``;
- anywhere else in the note, a line ``Name: task by YYYY-MM-DD`` (a list item or not). Such a line is an item
  only when its name is one of the team's (the sync decides: ``MeetingLine.needs_assignee``), since
  ``Date: …`` or ``Decision: …`` lines have the same shape.

An item ending with ``?`` (or under a questions heading) is an open question; one marked ``#blocker``,
``[blocker]``, ``(blocker)`` or starting ``Blocker:`` is a blocker (the mark is taken out of its text).
Fenced code (``` or ~~~) and the front matter hold no items. Every answer is bounded: MAX_ITEMS items of at
most MAX_TEXT_CHARS characters.
"""

from __future__ import annotations

import datetime
import posixpath
import re
import unicodedata
from dataclasses import dataclass
from typing import Final

from notewell.fold import fold
from notewell.vault.fences import FenceTracker
from notewell.vault.headings import atx_heading
from notewell.vault.note_links import is_markdown
from notewell.vault.parse import split_front_matter

MEETINGS_FOLDER: Final = "meetings"
MAX_ITEMS: Final = 200  # per note; the lines after the 200th item are not read
MAX_TEXT_CHARS: Final = 2000  # an item's text (the brain's rule limit)
MAX_TAG_CHARS: Final = 64  # the brain's tag limit: the meeting tag is cut to it
MAX_ASSIGNEES: Final = 5
ACTION_HEADINGS: Final = frozenset({"actions", "action items", "action points", "next steps", "to do", "todo",
                                    "to-do", "todos", "to-dos", "follow-ups", "follow ups"})
QUESTION_HEADINGS: Final = frozenset({"open questions", "questions"})

_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[([ xX])\](?:\s+|$))?(.*)$")
_ASSIGNED = re.compile(r"^(?:\*\*|__)?([^:`\[\]()]{1,80}?)(?:\*\*|__)?\s*:\s+(\S.*)$")
_MENTION = re.compile(r"^@([\w.+-]{1,64})\s+(\S.*)$")
# an optional colon between blanks: (?:\s*+:\s++|\s++) means \s*:?\s+ without trying every split of a long run
# of blanks (which made a line of a few thousand spaces cost seconds)
_COLON = r"(?:\s*+:\s++|\s++)"
_TODO = re.compile(rf"^TODO\(([^()\n]{{1,80}})\){_COLON}(\S.*)$")
_NAME = re.compile(r"^@?[\w.'+-]+(?: [\w.'+-]+){0,4}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_SPLIT = re.compile(r"\s*(?:,|&|/|\band\b)\s*")
_DUE = re.compile(rf"\b(?:by|due|before){_COLON}(\d{{4}}-\d{{2}}-\d{{2}})\b", re.IGNORECASE)
_BLOCKER_MARK = re.compile(r"(?:#blocker\b|\[blocker\]|\(blocker\))", re.IGNORECASE)
_BLOCKER_PREFIX = re.compile(r"^blocker\s*:\s*", re.IGNORECASE)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_SLUG_JUNK = re.compile(r"[^a-z0-9]+")
_TYPE_LINE = re.compile(r"^type\s*:", re.MULTILINE)
_FRONT_MATTER_PEEK = 8192


@dataclass(frozen=True)
class MeetingLine:
    """One item as written: its line (from 1), its text (list mark and checkbox taken off, spaces folded),
    the assignees as written (names, emails or @handles), its due date, and what kind of item it is."""

    line: int
    text: str
    assignees: tuple[str, ...]
    due: str | None
    question: bool
    blocker: bool
    done: bool  # ticked: [x]
    needs_assignee: bool  # outside an actions heading: an item only when an assignee is one of the team


@dataclass(frozen=True)
class Meeting:
    tag: str  # meeting:<YYYY-MM-DD-slug>
    items: tuple[MeetingLine, ...]


def is_meeting(path: str, front_matter: dict[str, object]) -> bool:
    """A markdown note in a ``meetings`` folder (at any depth) or with ``type: meeting`` in its front matter."""
    if not is_markdown(path):
        return False
    if _in_meetings_folder(path):
        return True
    kind = front_matter.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return any(isinstance(k, str) and fold(k.strip()) == "meeting" for k in kinds)


def _valid_date(text: str) -> str | None:
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        return None


def _slug_words(text: str) -> list[str]:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return [w for w in _SLUG_JUNK.split(ascii_text) if w]


def meeting_tag(path: str, front_matter: dict[str, object]) -> str:
    """``meeting:<date>-<slug>``: the date is the first valid YYYY-MM-DD in the file name, else the front
    matter's ``date``; the slug is the file name's other words (less the word "meeting"), lower-case ASCII
    joined by "-". Without a date, ``meeting:<slug>``. Cut to MAX_TAG_CHARS."""
    stem = posixpath.splitext(posixpath.basename(path))[0]
    date: str | None = None
    rest = stem
    for found in _DATE.finditer(stem):
        date = _valid_date(found.group(0))
        if date is not None:
            rest = stem[:found.start()] + " " + stem[found.end():]
            break
    if date is None:
        given = front_matter.get("date")
        if isinstance(given, datetime.date):
            date = given.isoformat() if not isinstance(given, datetime.datetime) else given.date().isoformat()
        elif isinstance(given, str):
            date = _valid_date(given.strip()[:10])
    words = _slug_words(rest)
    words = [w for w in words if w not in ("meeting", "meetings")] or words
    label = "-".join(part for part in (date, "-".join(words)) if part) or "note"
    return f"meeting:{label}"[:MAX_TAG_CHARS].rstrip("-")


def _assignees(who: str) -> tuple[str, ...] | None:
    """The names in ``who`` (``Tom``, ``Tom Whitcombe & Eleanor Vance``, ``tom@x.test``), or None when it
    does not read as names."""
    parts = [p.strip() for p in _SPLIT.split(who.strip()) if p.strip()]
    if not parts or len(parts) > MAX_ASSIGNEES:
        return None
    if all(_EMAIL.match(p) or _NAME.match(p) for p in parts):
        return tuple(parts)
    return None


def _cleaned(text: str) -> tuple[str, bool]:
    """(the text without blocker marks, spaces folded, cut to MAX_TEXT_CHARS; whether it was marked)."""
    blocker = bool(_BLOCKER_MARK.search(text) or _BLOCKER_PREFIX.match(text))
    text = _BLOCKER_PREFIX.sub("", _BLOCKER_MARK.sub("", text))
    text = " ".join(text.split())
    if len(text) > MAX_TEXT_CHARS:
        text = text[: MAX_TEXT_CHARS - 1] + "…"
    return text, blocker


def read_line(number: int, raw: str, *, in_actions: bool, in_questions: bool) -> MeetingLine | None:
    """The item a line of a meeting note makes, or None. ``in_actions``: under an actions (or questions)
    heading, where every list item is one, and every line naming its assignee; elsewhere only ``Name: task by
    YYYY-MM-DD``."""
    listed = _LIST_ITEM.match(raw)
    box = listed.group(1) if listed else None
    body = (listed.group(2) if listed else raw).strip()
    if not body:
        return None
    text, blocker = _cleaned(body)
    if not text:
        return None
    assignees: tuple[str, ...] = ()
    named = _ASSIGNED.match(text)
    mention = _MENTION.match(text)
    if named is not None and (found := _assignees(named.group(1))) is not None:
        assignees = found
    elif mention is not None:
        assignees = (f"@{mention.group(1)}",)
    elif (todo := _TODO.match(text)) is not None and (found := _assignees(todo.group(1))) is not None:
        assignees = found
    due_found = list(_DUE.finditer(text))
    due = _valid_date(due_found[-1].group(1)) if due_found else None
    if in_actions:
        if listed is None and not assignees:
            return None  # a paragraph under the heading, not a list item nor "Name: task"
    elif not (named is not None and assignees and due):
        return None  # elsewhere only "Name: task by YYYY-MM-DD" (a checkbox list of the note's own is no item)
    return MeetingLine(number, text, assignees, due, in_questions or text.endswith("?"), blocker,
                       box in ("x", "X"), needs_assignee=not in_actions)


def _heading_kind(title: str) -> str | None:
    words = fold(" ".join(title.strip().rstrip(":").replace("*", "").split()))
    if words in ACTION_HEADINGS:
        return "actions"
    if words in QUESTION_HEADINGS:
        return "questions"
    return None


def parse_items(body: str, first_line: int = 1) -> list[MeetingLine]:
    """The items of a meeting note's body (front matter taken off; ``first_line``: the body's first line's
    number in the note), in reading order, at most MAX_ITEMS."""
    items: list[MeetingLine] = []
    fences = FenceTracker()
    section: tuple[int, str] | None = None  # (heading level, "actions" | "questions") while inside one
    for number, line in enumerate(body.split("\n"), start=first_line):
        line = line.removesuffix("\r")
        if fences.code(line):
            continue
        heading = atx_heading(line)
        if heading is not None:
            level, text = heading
            if section is None or level <= section[0]:
                kind = _heading_kind(text)
                section = (level, kind) if kind is not None else None
            continue
        item = read_line(number, line, in_actions=section is not None,
                         in_questions=section is not None and section[1] == "questions")
        if item is not None:
            items.append(item)
            if len(items) >= MAX_ITEMS:
                break
    return items


def _in_meetings_folder(path: str) -> bool:
    return any(fold(part) == MEETINGS_FOLDER for part in path.split("/")[:-1])


def _may_say_meeting(text: str) -> bool:
    """Could the front matter say ``type: meeting``? (Most notes are read no further: no YAML parsed.)"""
    head = text[:_FRONT_MATTER_PEEK]
    return text.startswith("---") and _TYPE_LINE.search(head) is not None and "meeting" in fold(head)


def parse_meeting(path: str, text: str) -> Meeting | None:
    """The meeting note at project-relative ``path``: its tag and items; None when it is no meeting note."""
    if not is_markdown(path) or not (_in_meetings_folder(path) or _may_say_meeting(text)):
        return None
    front_matter, body, first_line = split_front_matter(text)
    if not is_meeting(path, front_matter):
        return None
    return Meeting(meeting_tag(path, front_matter), tuple(parse_items(body, first_line)))
