"""The audit trail: one entry for every change to identity, access or memory, with who made it."""

from __future__ import annotations

from notewell.access.principal import Principal
from notewell.records.identity import AuditEntry
from notewell.store.base import AuditRepository
from notewell.timestamps import now_iso


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
