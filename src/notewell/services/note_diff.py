"""What a write changed, in bounded form: the changed line range, a unified diff and a one-line summary.

The range is found from the lines both versions share at the start and at the end, so it covers every
changed line and nothing else (``last < first`` when lines were only removed). The diff is one unified
hunk over that range with two lines of context, cut at DIFF_MAX_CHARS characters, with ``truncated`` saying so.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from notewell.services.note_text import split_lines

DIFF_MAX_CHARS = 8000  # the unified diff a write answers with
DIFF_CONTEXT_LINES = 2
VERSION_CHARS = 16  # a version is this many hex digits of the note's sha256


def version_of(data: bytes) -> str:
    """The version of a note's bytes: what readDoc, the writes and the journal name it by."""
    return hashlib.sha256(data).hexdigest()[:VERSION_CHARS]


@dataclass(frozen=True)
class Change:
    first_line: int  # 1-based, in the new text
    last_line: int  # first_line - 1 when lines were only removed
    removed: int  # lines of the old text replaced
    added: int  # lines of the new text in their place
    diff: str
    truncated: bool

    @property
    def summary(self) -> str:
        if not self.removed and not self.added:
            return "no line changed"
        if not self.added:
            return f"{self.removed} lines removed before line {self.first_line}"
        return f"lines {self.first_line}-{self.last_line}: {self.removed} removed, {self.added} added"


def change(old: str, new: str, path: str) -> Change:
    before, after = split_lines(old), split_lines(new)
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end = 0
    while end < min(len(before), len(after)) - start and before[-1 - end] == after[-1 - end]:
        end += 1
    removed, added = len(before) - start - end, len(after) - start - end
    diff, truncated = _one_hunk(before, after, start, end, path) if removed or added else ("", False)
    return Change(start + 1, start + added, removed, added, diff, truncated)


def _one_hunk(before: list[str], after: list[str], start: int, end: int, path: str) -> tuple[str, bool]:
    """The unified diff of one changed block (lines ``start`` to ``-end`` of each side) with its context, at
    most DIFF_MAX_CHARS characters, and whether it was cut. Linear in the note's size: a 1 MB note's edit is
    never compared line against line as difflib would."""
    lead = max(start - DIFF_CONTEXT_LINES, 0)
    old_stop, new_stop = len(before) - end, len(after) - end
    trail = min(end, DIFF_CONTEXT_LINES)
    old_count, new_count = old_stop - lead + trail, new_stop - lead + trail
    lines = [f"--- a/{path}\n", f"+++ b/{path}\n",
             f"@@ -{_range(lead, old_count)} +{_range(lead, new_count)} @@\n",
             *(" " + line for line in before[lead:start]),
             *("-" + line for line in before[start:old_stop]),
             *("+" + line for line in after[start:new_stop]),
             *(" " + line for line in before[old_stop:old_stop + trail])]
    out: list[str] = []
    size = 0
    for line in lines:
        line = line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        if size + len(line) > DIFF_MAX_CHARS:
            return "".join(out), True
        out.append(line)
        size += len(line)
    return "".join(out), False


def _range(start: int, count: int) -> str:
    """A hunk's range as unified diffs write it: the first line (1-based; the line before, when empty), count."""
    return f"{start + 1 if count else start},{count}"
