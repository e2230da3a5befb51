"""Memories as rows: the column list and row <-> record mapping both backends share.

Dialect-free: the statements and the word indexes stay with each backend. Tags are stored as a JSON array.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from notewell.records.memories import MemoryRecord

# every MemoryRecord field, in order, on the memories table aliased ``m``
MEMORY_COLUMNS = (
    "m.ref, m.project, m.author_user_id, m.author_token_id, m.memory_type, m.path, m.title, m.content, m.tags,"
    " m.content_hash, m.created, m.updated, m.expires_at, m.superseded_by, m.deleted_at, m.deleted_by,"
    " m.delete_reason"
)


def tags_json(tags: Sequence[str]) -> str:
    """The stored form of a memory's tags: a JSON array, non-ASCII kept as is."""
    return json.dumps(list(tags), ensure_ascii=False)


def memory_from_row(row: Sequence[Any]) -> MemoryRecord:
    """A memory from a row selected as ``MEMORY_COLUMNS``."""
    values = list(row)
    values[8] = tuple(json.loads(values[8]))
    return MemoryRecord(*values)


def searched_fields(rows: Mapping[int, Sequence[Any]]) -> list[tuple[int, str, str, str, str]]:
    """(id, title, content, tags, path) of rows selected as ``MEMORY_COLUMNS`` by id: what the search highlights."""
    return [(i, r[6], r[7], r[8], r[5]) for i, r in rows.items()]
