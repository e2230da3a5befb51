"""How a command prints what it lists: a table on a terminal wide enough for it, else plain lines.

On a terminal wide enough to show every ``whole`` column (ids, refs, paths, emails) uncut and every other
column's longest word, the rows are a Rich table. Otherwise (piped, redirected, a narrow terminal) each row
is one plain line: the command's own form (search: ``path:line: text``), else its cells separated by tabs,
with no header and nothing cut, for grep, cut and awk (--json has the fields by name). Notes (counts, what
was left out, "No users") go to stderr, so stdout holds the rows alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import typer
from rich.cells import cell_len
from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

from notewell.cli.app import console, err_console

Row = Sequence[object]
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # but tab and line feed


@dataclass(frozen=True)
class Col:
    header: str
    whole: bool = False  # never cut or wrapped: the table is shown only when the terminal fits it
    justify: JustifyMethod = "left"


def cell(value: object) -> str:
    """A value as one line: None is "-", tabs and line breaks are spaces, other control characters shown."""
    return "-" if value is None else shown(" ".join(str(value).replace("\t", " ").splitlines()))


def shown(text: str) -> str:
    """``text`` fit for a terminal: each control character (but a tab or a line break) and each bidirectional
    override written as its escape (\\x1b, \\u202e), so stored text never runs as a terminal's command (ESC
    sequences set its title or colours, BEL rings) nor shows a path reversed."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def show_rows(columns: Sequence[Col], rows: Sequence[Row], *, empty: str, note: str = "",
              line: Callable[[Row], str] | None = None) -> None:
    """Print ``rows`` (one value per column) as a table or as plain lines (``line`` of the row's values, else
    its cells joined by tabs); ``empty`` says there are none."""
    cells = [[cell(v) for v in row] for row in rows]
    if not cells:
        err_console.print(empty, highlight=False, markup=False, soft_wrap=True)
        return
    if console.is_terminal and _fits(columns, cells, console.width):
        table = Table(header_style="bold")
        for col, width in zip(columns, _widths(columns, cells), strict=True):
            if col.whole:
                table.add_column(col.header, no_wrap=True, min_width=width, justify=col.justify)
            else:
                table.add_column(col.header, overflow="fold", justify=col.justify)
        for row in cells:
            table.add_row(*(Text(c) for c in row))
        console.print(table)
    else:
        for values, row in zip(rows, cells, strict=True):
            typer.echo(shown(line(values)) if line else "\t".join(row))
    if note:
        err_console.print(note, style="dim", highlight=False, markup=False, soft_wrap=True)


def _widths(columns: Sequence[Col], cells: list[list[str]]) -> list[int]:
    """Each column's narrowest width: a whole column its longest cell, another its longest word."""
    widths = []
    for i, col in enumerate(columns):
        texts = [col.header, *(row[i] for row in cells)]
        if col.whole:
            widths.append(max(cell_len(t) for t in texts))
        else:
            widths.append(max((cell_len(word) for t in texts for word in t.split()), default=1))
    return widths


def _fits(columns: Sequence[Col], cells: list[list[str]], width: int) -> bool:
    """Rich's default box: a border before each column and after the last, one space of padding each side."""
    return sum(_widths(columns, cells)) + 3 * len(columns) + 1 <= width

