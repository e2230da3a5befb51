"""The edit operations on a note's text, pure: text in, text out, nothing else touched.

Each operation changes only the lines it names and keeps every other byte (line endings included): a
CRLF note stays CRLF, an old Mac's CR note stays CR, and added lines take the note's ending (note_text.newline_of).

- ``append``: the content after the last line (the last line gets an ending first, if it has none).
- ``prepend``: the content before the first line, after the front matter when there is one.
- ``replace``: ``old``, an exact passage that must occur exactly once, becomes the content.
- ``insert_under_heading``: the content goes directly under the heading, after the text already there
  (before its trailing blank lines and its first sub-heading).
- ``replace_section``: the heading's section (the lines after it up to the next heading of the same or a
  higher level) becomes the content; the heading stays, and so do the section's trailing blank lines.
- ``set_front_matter``: fields set in the front matter (note_front_matter.py).

A heading is named with its level and text, as written: ``## Decisions``. It must be exactly one of the
note's headings (note_text: code fences and front matter hold none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from notewell.errors import InvalidArgument
from notewell.services.note_front_matter import set_fields
from notewell.services.note_text import (
    Heading,
    as_lines,
    bare,
    body_end,
    ensure_ended,
    front_matter_end,
    headings,
    newline_of,
    parse_heading,
    section_end,
    split_lines,
)

Operation = Literal["append", "prepend", "replace", "insert_under_heading", "replace_section", "set_front_matter"]
OPERATIONS: tuple[str, ...] = get_args(Operation)
HEADINGS_LISTED_MAX = 20  # how many of the note's headings a refusal lists


@dataclass(frozen=True)
class Edit:
    """One operation with what it needs: ``content`` (all but set_front_matter), ``old`` (replace),
    ``heading`` (the two heading operations), ``fields`` (set_front_matter; a null value removes a field)."""

    operation: Operation
    content: str = ""
    old: str | None = None
    heading: str | None = None
    fields: Mapping[str, object] = field(default_factory=dict)


def check_operation(value: str) -> Operation:
    for known in get_args(Operation):
        if value == known:
            return known  # type: ignore[no-any-return]
    raise InvalidArgument("operation", f"{value!r} is not an operation; choose one of {', '.join(OPERATIONS)}")


# Which operations take each argument besides the operation: any other is refused, never silently left unused.
TAKEN_BY: dict[str, tuple[Operation, ...]] = {
    "content": ("append", "prepend", "replace", "insert_under_heading", "replace_section"),
    "old": ("replace",),
    "heading": ("insert_under_heading", "replace_section"),
    "fields": ("set_front_matter",),
}


def check_arguments(edit: Edit) -> None:
    """InvalidArgument naming an argument the edit's operation does not take (a heading given to append would
    otherwise be dropped, and the edit done as if it were not there), with the operations that take it."""
    given = {"content": bool(edit.content), "old": edit.old is not None, "heading": edit.heading is not None,
             "fields": bool(edit.fields)}
    for name, present in given.items():
        if present and edit.operation not in TAKEN_BY[name]:
            takers = TAKEN_BY[name]
            raise InvalidArgument(name, f"{edit.operation} takes no {name}: only {', '.join(takers)} "
                                        f"take{'s' if len(takers) == 1 else ''} it; leave it out, or choose "
                                        f"{'that operation' if len(takers) == 1 else 'one of those operations'}")


def apply_edit(text: str, edit: Edit, *, markdown: bool = True) -> str:
    """The text after ``edit``; InvalidArgument naming the argument when it cannot apply. Only
    set_front_matter changes the front matter: an edit whose text would open, close or move it (a "---"
    line landing where it would pair with one above) is refused, so no heading or line is swallowed. Front
    matter is markdown's alone: in another file (``markdown`` false: a YAML file's "---" is its own) there is
    none to set, and prepend puts the text at the very top."""
    if edit.operation == "set_front_matter":
        if not markdown:
            raise InvalidArgument("operation", "set_front_matter sets a markdown note's front matter, and this "
                                               "file is not markdown (.md or .markdown); edit its text with "
                                               "replace, append or prepend")
        return set_fields(text, edit.fields)
    if not markdown:
        return _applied(text, edit, front_matter=False)
    after = _applied(text, edit)
    if _front_matter(after) != _front_matter(text):
        raise InvalidArgument("content", "would change the note's front matter (a \"---\" line pairing with "
                                         "the one at the top); set its fields with set_front_matter, or write "
                                         "the line differently")
    return after


def _front_matter(text: str) -> list[str]:
    lines = split_lines(text)
    return [bare(line) for line in lines[:front_matter_end(lines)]]


def _applied(text: str, edit: Edit, *, front_matter: bool = True) -> str:
    if edit.operation == "replace":
        return _replace(text, edit.old, edit.content)
    lines = split_lines(text)
    newline = newline_of(text)
    added = as_lines(edit.content, newline)
    if edit.operation == "append":
        return "".join([*ensure_ended(lines, newline), *added])
    if edit.operation == "prepend":
        at = front_matter_end(lines) if front_matter else 0
        head = ensure_ended(lines[:at], newline)
        return "".join([*head, *(ensure_ended(added, newline) if lines[at:] else added), *lines[at:]])
    found = headings(lines)
    heading = _the_heading(found, edit.heading)
    end = section_end(lines, found, heading)
    if edit.operation == "insert_under_heading":
        at = body_end(found, heading, end)
        while at > heading.index + 1 and not bare(lines[at - 1]).strip():
            at -= 1
        return "".join([*ensure_ended(lines[:at], newline), *added, *lines[at:]])
    start = heading.index + 1
    trailing = end
    while trailing > start and not bare(lines[trailing - 1]).strip():
        trailing -= 1
    kept = lines[trailing:end]
    if end == len(lines) and kept:
        kept = ensure_ended(kept, newline)
    return "".join([*ensure_ended(lines[:start], newline), *added, *kept, *lines[end:]])


OCCURRENCES_COUNTED = 100
"""A passage's occurrences are counted up to this many (each found costs the passage's length again)."""


def occurrences(text: str, passage: str) -> int:
    """How many times ``passage`` occurs in ``text``, overlapping ones too ("aa" twice in "xaaay"; str.count counts
    it once, so a replace would pick one of two places), up to OCCURRENCES_COUNTED."""
    count, at = 0, text.find(passage)
    while at >= 0 and count < OCCURRENCES_COUNTED:
        count += 1
        at = text.find(passage, at + 1)
    return count


def _replace(text: str, old: str | None, content: str) -> str:
    if not old:
        raise InvalidArgument("old", "is required for replace: the exact passage to replace, as the note has it")
    passage = old
    newline = newline_of(text)
    if old not in text and newline != "\n":  # a CRLF (or CR) note, the passage sent with "\n"
        passage = old.replace("\r\n", "\n").replace("\n", newline)
        content = content.replace("\r\n", "\n").replace("\n", newline)
    count = occurrences(text, passage)
    if count != 1:
        many = f"{count:,} times or more" if count >= OCCURRENCES_COUNTED else f"{count} times"
        where = "does not occur in the note" if count == 0 else f"occurs {many} in the note"
        raise InvalidArgument("old", f"{where}; give a passage that occurs exactly once (add the lines around it)")
    return text.replace(passage, content, 1)


def _the_heading(found: list[Heading], wanted: str | None) -> Heading:
    if not wanted or not wanted.strip():
        raise InvalidArgument("heading", "is required: the heading as written, with its level, such as '## Decisions'")
    if parse_heading(wanted.strip()) is None:
        raise InvalidArgument("heading", f"{wanted.strip()[:200]!r} is no heading: write it as the note does, with "
                                         f"its level, such as '## {wanted.strip()[:200]}'")
    parsed = parse_heading(wanted.strip())
    assert parsed is not None
    level, text = parsed
    matches = [h for h in found if h.level == level and h.text == text]
    if len(matches) == 1:
        return matches[0]
    if matches:
        lines = ", ".join(str(h.index + 1) for h in matches)
        raise InvalidArgument("heading", f"{wanted.strip()!r} is on {len(matches)} lines ({lines}); "
                                         "rename one, or use replace with the passage around it")
    listed = ", ".join(repr(h.label) for h in found[:HEADINGS_LISTED_MAX]) or "none"
    more = " …" if len(found) > HEADINGS_LISTED_MAX else ""
    raise InvalidArgument("heading", f"{wanted.strip()!r} is not a heading of the note (outside code blocks); "
                                     f"its headings: {listed}{more}")
