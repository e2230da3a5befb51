"""What a check of the store's file for damage found (store/sqlite/integrity.py)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Integrity:
    """What the checks found: ``damaged`` maps a part (a full-text index by its table name, or "tables") to
    SQLite's words; the parts left unchecked, by why: the time budget ran out (``unchecked``), the store cannot
    write (``unwritable``: FTS5's check is a write), another process held the write lock (``busy``)."""

    damaged: dict[str, str] = field(default_factory=dict)
    unchecked: list[str] = field(default_factory=list)
    unwritable: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)

    @property
    def tables_damaged(self) -> bool:
        return "tables" in self.damaged


@dataclass(frozen=True)
class DerivedRows:
    """How a table a trigger derives from other rows (PostgreSQL's ``live_memory_stems``, from the live memories)
    compares with them, in one snapshot: how many rows it should hold (``expected``) and holds (``held``), both
    None when the time budget ran out before they were counted; how many rows were found to differ (missing, left
    over, or holding other values) among those compared, and whether every row was (``whole``: False when the
    budget ran out first); and whether its trigger is on (``kept``), without which the next writes go unfollowed."""

    expected: int | None
    held: int | None
    differing: int
    whole: bool
    kept: bool

    @property
    def differs(self) -> bool:
        return bool(self.differing) or not self.kept or (
            self.expected is not None and self.held is not None and self.expected != self.held)
