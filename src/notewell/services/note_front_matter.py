"""Setting fields of a note's front matter, keeping every other line of it as written.

A field is a top-level key of the YAML block between the first line ``---`` and the next ``---`` (or
``...``): its line and the lines that continue it (indented, or a ``- item`` list under it) are replaced by
the new value as PyYAML writes it, a null value removes the field, and a field not there yet is added at
the end of the block. A note without front matter gets one. The result is read back with PyYAML: the
fields must come back with the values asked for, so a key or value the line editing cannot express is
refused, never written half-right.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import yaml

from notewell.errors import InvalidArgument
from notewell.services.note_text import (
    FRONT_MATTER_FENCE,
    as_lines,
    bare,
    ensure_ended,
    front_matter_end,
    newline_of,
    split_lines,
)
from notewell.vault.front_matter_yaml import load_yaml

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
FIELDS_MAX = 32  # fields one set_front_matter may set
_ABSENT = object()


def set_fields(text: str, fields: Mapping[str, object]) -> str:
    if not fields:
        raise InvalidArgument("fields", "name at least one front matter field to set, such as {\"status\": \"done\"}")
    if len(fields) > FIELDS_MAX:
        raise InvalidArgument("fields", f"sets {len(fields)} fields; set at most {FIELDS_MAX} at once")
    for key in fields:
        if not _KEY.match(key):
            raise InvalidArgument("fields", f"{key!r} is not a field name this edit writes: use letters, digits, "
                                            "'_', '-' and '.', starting with a letter or '_'")
    lines = split_lines(text)
    newline = newline_of(text)
    end = front_matter_end(lines)
    if end == 0:
        head, block, rest = [FRONT_MATTER_FENCE + newline], [], [FRONT_MATTER_FENCE + newline, *lines]
        before: dict[str, object] = {}
    else:
        head, block, rest = lines[:1], lines[1:end - 1], lines[end - 1:]
        before = _parsed(block)  # the front matter as it is must be YAML this edit can keep
    for key, value in fields.items():
        block = _set_one(block, key, value, newline)
    expected = {k: v for k, v in {**before, **fields}.items() if not (k in fields and fields[k] is None)}
    result = _parsed(block)
    if result != expected:  # every field, not only those set: no line of another may have been taken or left
        wrong = sorted(k for k in {*expected, *result} if expected.get(k, _ABSENT) != result.get(k, _ABSENT))
        raise InvalidArgument("fields", f"{', '.join(map(repr, wrong))} cannot be written as asked; edit the front "
                                        "matter with replace")
    return "".join([*head, *block, *rest])


def _parsed(block: list[str]) -> dict[str, object]:
    try:
        data = load_yaml("".join(bare(line) + "\n" for line in block)) if block else {}
    except yaml.YAMLError as err:
        raise InvalidArgument("fields", f"the note's front matter is not valid YAML ({_first_line(err)}); "
                                        "fix it with replace first") from err
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InvalidArgument("fields", "the note's front matter is not a set of fields; fix it with replace first")
    return {str(k): v for k, v in data.items()}


def _first_line(err: Exception) -> str:
    return str(err).split("\n", 1)[0]


def _set_one(block: list[str], key: str, value: object, newline: str) -> list[str]:
    start = next((i for i, line in enumerate(block) if _is_key_line(bare(line), key)), None)
    written = [] if value is None else as_lines(_dump(key, value), newline)
    if start is None:
        return [*ensure_ended(block, newline), *written]
    end = scanned = start + 1  # the field's lines run on through its continuing lines and the blank lines between
    while scanned < len(block) and (_continues(bare(block[scanned])) or not bare(block[scanned]).strip()):
        scanned += 1
        if bare(block[scanned - 1]).strip():
            end = scanned
    return [*block[:start], *written, *block[end:]]


def _is_key_line(line: str, key: str) -> bool:
    for spelled in (key, f'"{key}"', f"'{key}'"):
        if line.startswith(spelled):
            after = line[len(spelled):].lstrip(" \t")
            if after.startswith(":") and (len(after) == 1 or after[1] in " \t"):
                return True
    return False


def _continues(line: str) -> bool:
    """Does this line belong to the field above it: indented, or an item of a block list under it?"""
    return line.startswith((" ", "\t", "- ")) or line == "-"


def _dump(key: str, value: object) -> str:
    try:
        return yaml.safe_dump({key: value}, allow_unicode=True, default_flow_style=False, sort_keys=False,
                              width=1 << 30)
    except yaml.YAMLError as err:
        raise InvalidArgument("fields", f"{key!r}: the value cannot be written as YAML ({_first_line(err)})") from err
