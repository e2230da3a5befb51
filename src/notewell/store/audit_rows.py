"""Audit log entries as rows: the column list and row -> entry mapping both backends share.

Dialect-free: the statements stay with each backend (placeholders differ). ``detail`` is stored as JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from notewell.records.identity import AuditEntry

AUDIT_COLUMNS = "id, at, user_id, token_id, action, target, detail"


def detail_json(detail: dict[str, object] | None) -> str:
    """The JSON text stored for ``detail`` (None: an empty object); keys sorted so equal details store equally."""
    return json.dumps(detail or {}, ensure_ascii=False, sort_keys=True)


def entry_from_row(row: Sequence[Any]) -> AuditEntry:
    """An entry from a row selected as ``AUDIT_COLUMNS``."""
    return AuditEntry(id=row[0], at=row[1], user_id=row[2], token_id=row[3], action=row[4], target=row[5],
                      detail=json.loads(row[6]))
