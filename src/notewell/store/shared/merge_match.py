"""How a merge recognises a row without a key of its own that the target holds already.

An audit entry, a counted sign-in failure or a journal entry has no key but a generated number, which a merge
renumbers past the target's: nothing in the row says it was carried before. Such a row is recognised by its
content instead: every carried column but the generated number (a column naming a number of its own table, an
undo's entry, compared as the number that entry has in the target). The export's rows with the same content are
counted in the order they come, and the k-th of them is the target's k-th identical row when the target holds k
or more: so merging an export twice (or one overlapping it) loads nothing the second time, while two rows the
source holds twice, identical in every column, both load the first time. A store's rows carry no origin: a row
that went A -> B -> C is recognised when A's export is merged into C later, and a store's export merged back into
its source adds nothing (docs/operations.md, "Merge").

The target's identical rows are found by ``MATCHED_BY``'s indexed columns, a batch of the export's rows at a
time, before anything of the table is loaded (so a row this merge loads is never taken for the target's). What
is held in memory grows with the rows recognised alone (a 16-byte digest each, and an id for a journal entry).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from notewell.store.shared.dialect import marks

MATCHED_BY: Mapping[str, tuple[str, ...]] = {
    "audit_log": ("at",),
    "sign_in_failures": ("key",),
    "note_journal": ("project", "path"),
}
"""The tables whose rows have no key of their own, and the indexed columns a merge finds the target's identical
rows by (a table a merge would renumber or append without a key must be named here: tests/test_carry.py merges an
export twice and checks that no table grows)."""
BATCH_ROWS = 500

Lookup = Callable[[str, Sequence[Any]], Iterator[Mapping[str, Any]]]
"""The target's rows meeting a condition (``?`` placeholders, their values), in key order, by column."""


@dataclass
class Recognised:
    """The export's rows the target holds (their ordinals in the file), and the number each such row has in the
    target, by the number it would have been renumbered to (for the columns naming them)."""

    skipped: set[int] = field(default_factory=set)
    renumbered: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Matching:
    """How one table's rows are compared: the columns compared, the generated number, the columns naming a
    number of the same table, each column's kind, and what the merge moves the numbers by."""

    table: str
    compared: tuple[str, ...]
    numbered: str | None
    self_named: tuple[str, ...]
    kinds: Mapping[str, str]
    shift: int


def recognised(matching: Matching, rows: Iterable[Mapping[str, Any]], lookup: Lookup) -> Recognised:
    """Which of ``rows`` (the export's, in file order) the target holds already."""
    found = Recognised()
    used: dict[bytes, int] = {}  # digest -> how many of the target's identical rows the export's took
    batch: list[tuple[int, Mapping[str, Any]]] = []
    for ordinal, row in enumerate(rows):
        batch.append((ordinal, row))
        if len(batch) == BATCH_ROWS:
            _match(matching, batch, lookup, found, used)
            batch.clear()
    if batch:
        _match(matching, batch, lookup, found, used)
    return found


def resolved(matching: Matching, row: Mapping[str, Any], found: Recognised) -> dict[str, Any]:
    """``row`` (its numbers moved already) with each column naming a recognised row naming the target's."""
    return {**row, **{c: found.renumbered.get(row[c], row[c]) for c in matching.self_named if row[c] is not None}}


def _match(matching: Matching, batch: Sequence[tuple[int, Mapping[str, Any]]], lookup: Lookup,
           found: Recognised, used: dict[bytes, int]) -> None:
    held = _held(matching, [row for _, row in batch], lookup)
    for ordinal, row in batch:
        moved = {**row, **{c: row[c] + matching.shift for c in matching.self_named if row[c] is not None}}
        digest = _digest(matching, resolved(matching, moved, found))
        taken = used.get(digest, 0)
        numbers = held.get(digest, [])
        if taken < len(numbers):
            used[digest] = taken + 1
            found.skipped.add(ordinal)
            if matching.numbered is not None and matching.self_named:
                found.renumbered[row[matching.numbered] + matching.shift] = numbers[taken]


def _held(matching: Matching, rows: Sequence[Mapping[str, Any]], lookup: Lookup) -> dict[bytes, list[Any]]:
    """The target's rows sharing ``MATCHED_BY``'s values with ``rows``: digest -> their numbers, in order."""
    by = MATCHED_BY[matching.table]
    keys = sorted({tuple(row[c] for c in by) for row in rows}, key=repr)
    held: dict[bytes, list[Any]] = {}
    for start in range(0, len(keys), BATCH_ROWS):
        chunk = keys[start:start + BATCH_ROWS]
        if len(by) == 1:
            where, params = f"{by[0]} IN ({marks(len(chunk))})", [k[0] for k in chunk]
        else:
            where = f"({', '.join(by)}) IN (VALUES {', '.join(f'({marks(len(by))})' for _ in chunk)})"
            params = [value for k in chunk for value in k]
        for row in lookup(where, params):
            held.setdefault(_digest(matching, row), []).append(row[matching.numbered] if matching.numbered else None)
    return held


def _digest(matching: Matching, row: Mapping[str, Any]) -> bytes:
    """The compared columns' values, alike whether read from a file or from either backend."""
    values = [_canonical(row[c], matching.kinds[c]) for c in matching.compared]
    text = json.dumps(values, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def _canonical(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "flag":
        return int(bool(value))
    if kind == "blob":
        return bytes(value).hex()
    return value
