"""The audit trail: one entry for every change to identity, access or memory, with who made it."""

from __future__ import annotations

from collections.abc import Iterator

from notewell.access.principal import Principal
from notewell.records.identity import AuditEntry
from notewell.store.base import AuditRepository
from notewell.timestamps import now_iso

PAGE_ENTRIES = 500
"""Entries a read of ``AuditTrail.since`` holds: what a whole log's listing holds at once, whatever its size."""


class AuditTrail:
    def __init__(self, entries: AuditRepository) -> None:
        self.entries = entries

    def record(self, p: Principal, action: str, target: str, detail: dict[str, object] | None = None) -> AuditEntry:
        """Append an entry for a change p made (never pass secrets in ``detail``)."""
        return self.entries.append(now_iso(), p.user_id, p.token_id, action, target, detail)

    def record_system(self, at: str, actor: str, action: str, target: str,
                      detail: dict[str, object] | None = None) -> AuditEntry:
        """Append an entry for a change Notewell made by itself (``actor``: system:evolution, ...) at ``at``."""
        return self.entries.append(at, actor, None, action, target, detail)

    def since(self, at: str | None) -> Iterator[AuditEntry]:
        """The entries at or after ``at`` (None: all), oldest first (by id), read PAGE_ENTRIES at a time: a keyset on
        the id from the least id at or after ``at`` (the ``at`` index gives it), each page a range of the primary
        key. It read them all into one list. An entry appended meanwhile comes at the end, if after the last read."""
        first = self.entries.first_since(at)
        if first is None:
            return
        after = first - 1
        while True:
            page = self.entries.list_since(at, PAGE_ENTRIES, after=after)
            yield from page
            if len(page) < PAGE_ENTRIES:
                return
            after = page[-1].id
