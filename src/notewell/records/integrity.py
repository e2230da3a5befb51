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
