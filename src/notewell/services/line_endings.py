"""A note's line breaks, written once: "\n" and "\r\n", and a lone "\r" only in a text with no "\n" at all (an
old Mac's note). In any other text a lone "\r" is a character of its line (a terminal's progress line pasted in),
as search, links and a move's line numbers count lines. The edit operations cut a note into lines so
(note_text.split_lines, ``ended_lines``) and readDoc counts and shows its lines so (``shown_lines``).

And a whole note's text sent back by an editor whose line breaks are all "\n" (a browser's textarea sends every
break as CRLF, whatever the note had), given back the breaks the note had: each line the editor left as it was
keeps its own ending, and a new or changed line takes the note's commonest one. So a save changes only the
lines a person changed, in a note with CRLF, CR or mixed endings alike."""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher

_ANY_BREAK = re.compile(r"(\r\n|\r|\n)")  # CommonMark's three, for a CR note and for matching an editor's lines
_LF_BREAK = re.compile(r"(\r?\n)")
MATCHED_PAIRS_MAX = 4_000_000  # changed lines of the note times the editor's: above, matching would take seconds


def ended_lines(text: str) -> list[tuple[str, str]]:
    """(line, its ending) for every line; the last one's ending is "" (the text after the last break). A lone
    "\\r" ends a line only when ``text`` has no "\\n" (an old Mac's note); else it stays inside its line."""
    return _cut(text, _LF_BREAK if "\n" in text else _ANY_BREAK)


def _cut(text: str, breaks: re.Pattern[str]) -> list[tuple[str, str]]:
    parts = breaks.split(text)
    return [(parts[i], parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2)]


def shown_lines(text: str) -> list[str]:
    """The lines as readDoc counts and shows them, without their endings: a final break ends the last line, it
    starts no empty one ("a\rb\r" is two lines), and an empty text is one empty line."""
    lines = [line for line, _ in ended_lines(text)]
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    return lines


def position(text: str, offset: int) -> tuple[int, int]:
    """The line and column (both from 1, a column counting characters) of ``text[offset]``, as readDoc counts
    them: what its offset and column take to read on from there."""
    breaks = _LF_BREAK if "\n" in text else _ANY_BREAK
    line, start = 1, 0
    for found in breaks.finditer(text, 0, offset):
        line, start = line + 1, found.end()
    return line, offset - start + 1


def restored(original: str, edited: str) -> str:
    """``edited`` (breaks all "\\n") with the line endings of ``original`` wherever its lines were kept."""
    old = _cut(original, _ANY_BREAK)  # the editor made every break a line break, a stray CR's too: so match them
    new = edited.split("\n")
    if [line for line, _ in old] == new:
        return original  # nothing changed, not even an ending
    endings = Counter(ending for _, ending in old if ending)
    common = endings.most_common(1)[0][0] if endings else "\n"
    chosen = [common] * (len(new) - 1) + [""]
    head = 0  # the lines kept at the start and at the end are paired in place; only the rest is matched
    while head < min(len(old), len(new)) - 1 and old[head][0] == new[head]:
        chosen[head] = old[head][1] or common
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head - 1 and old[-2 - tail][0] == new[-2 - tail] \
            and old[-1][0] == new[-1]:
        chosen[len(new) - 2 - tail] = old[-2 - tail][1] or common
        tail += 1
    middle_old = old[head:len(old) - tail - 1]
    middle_new = new[head:len(new) - tail - 1]
    if len(middle_old) * len(middle_new) <= MATCHED_PAIRS_MAX:
        # autojunk: lines found everywhere (blank ones) are not matched on their own, or matching them all is
        # nearly cubic (a note of 2,000 lines, each paragraph edited: 30 s); they take the commonest ending
        matcher = SequenceMatcher(None, [line for line, _ in middle_old], middle_new, autojunk=True)
        for tag, old_start, old_end, new_start, _ in matcher.get_opcodes():
            if tag == "equal":
                for offset in range(old_end - old_start):
                    chosen[head + new_start + offset] = middle_old[old_start + offset][1] or common
    else:  # too many lines changed to match them in time: a line the note had takes that line's ending
        had = {line: ending for line, ending in reversed(middle_old) if ending}
        for offset, line in enumerate(middle_new):
            chosen[head + offset] = had.get(line, common)
    for at in range(len(new) - 2):  # a CR ending then an empty line ending LF would read as one CRLF break
        if chosen[at] == "\r" and not new[at + 1] and chosen[at + 1].startswith("\n"):
            chosen[at] = "\r\n"
    return "".join(line + ending for line, ending in zip(new, chosen, strict=True))
