"""What a check of the store's file for damage found (store/sqlite/integrity.py)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Integrity:
    """What the checks found: ``damaged`` maps a part (a full-text index by its table name, or "tables") to
    SQLite's words; ``unchecked`` the parts the budget left out."""

    damaged: dict[str, str] = field(default_factory=dict)
    unchecked: list[str] = field(default_factory=list)
    cannot_write: bool = False  # some were left unchecked because the store cannot write (FTS5's check is a write)
    busy: bool = False  # some were left unchecked because another process held the store's write lock

    @property
    def tables_damaged(self) -> bool:
        return "tables" in self.damaged
