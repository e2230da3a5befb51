"""Memories as rows: the column list and row <-> record mapping both backends share.

Dialect-free: the statements and the word indexes stay with each backend. Tags are stored as a JSON array.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from notewell.records.memories import MemoryFilter, MemoryInput, MemoryRecord, Narrowing
from notewell.store.path_range import path_bounds

# every MemoryRecord field, in order, on the memories table aliased ``m``
MEMORY_COLUMNS = (
    "m.ref, m.project, m.author_user_id, m.author_token_id, m.memory_type, m.path, m.title, m.content, m.tags,"
    " m.content_hash, m.created, m.updated, m.expires_at, m.superseded_by, m.deleted_at, m.deleted_by,"
    " m.delete_reason, m.private_to"
)
PRIVATE_TO_VIEWER = "(m.private_to IS NULL OR m.private_to = ?)"
"""A private memory only for its author: the condition every search and listing adds, with the viewer's id."""


def tags_json(tags: Sequence[str]) -> str:
    """The stored form of a memory's tags: a JSON array, non-ASCII kept as is."""
    return json.dumps(list(tags), ensure_ascii=False)


def memory_from_row(row: Sequence[Any]) -> MemoryRecord:
    """A memory from a row selected as ``MEMORY_COLUMNS``."""
    values = list(row)
    values[8] = tuple(json.loads(values[8]))
    return MemoryRecord(*values)


def written(memory: MemoryInput) -> MemoryRecord:
    """The record of ``memory`` as its INSERT just wrote it (live, updated when created): what reading its row back
    would give, without the statement. The store assigns nothing a record shows (the row's id is not in it)."""
    return MemoryRecord(memory.ref, memory.project, memory.author_user_id, memory.author_token_id, memory.memory_type,
                        memory.path, memory.title, memory.content, tuple(memory.tags), memory.content_hash,
                        memory.created, memory.created, memory.expires_at, private_to=memory.private_to)


def searched_fields(rows: Mapping[int, Sequence[Any]]) -> list[tuple[int, str, str, str, str]]:
    """(id, title, content, tags, path) of rows selected as ``MEMORY_COLUMNS`` by id: what the search highlights."""
    return [(i, r[6], r[7], r[8], r[5]) for i, r in rows.items()]


def listing_sql(chosen: MemoryFilter, limit: int, offset: int, contains: str) -> tuple[str, list[Any]]:
    """The SELECT of MemoryRepository.listing with ``?`` placeholders; ``contains`` names the backend's
    substring-position function (instr, strpos). A tag is looked for as its JSON string in the stored array."""
    marks = ",".join("?" * len(chosen.projects))
    where = [f"m.project IN ({marks})"]
    params: list[Any] = list(chosen.projects)
    live = ["m.deleted_at IS NULL"]
    if chosen.forgotten_projects:
        live.append(f"m.project IN ({','.join('?' * len(chosen.forgotten_projects))})")
        params += list(chosen.forgotten_projects)
    if chosen.forgotten_author is not None:
        live.append("m.author_user_id = ?")
        params.append(chosen.forgotten_author)
    where.append(f"({' OR '.join(live)})")
    if not chosen.superseded:
        where.append("m.superseded_by IS NULL")
    if chosen.memory_type is not None:
        where.append("m.memory_type = ?")
        params.append(chosen.memory_type)
    if chosen.path_prefix:
        where.append("(m.path = ? OR (m.path >= ? AND m.path < ?))")
        params += path_bounds(chosen.path_prefix, False)
    where.append(PRIVATE_TO_VIEWER)
    params.append(chosen.viewer)
    narrowed, values = narrowing_sql(chosen.narrowing, contains)
    where += narrowed
    params += values
    sql = (f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {' AND '.join(where)}"
           " ORDER BY m.created DESC, m.ref DESC LIMIT ? OFFSET ?")
    return sql, [*params, limit, offset]


def narrowing_sql(narrowing: Narrowing, contains: str) -> tuple[list[str], list[Any]]:
    """WHERE conditions (``?`` placeholders) for a Narrowing of the memories table aliased ``m``; ``contains``
    names the backend's substring-position function (instr, strpos): a tag is looked for as its JSON string
    in the stored array, so a tag never matches part of another."""
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("m.author_user_id", narrowing.author_user_id),
                          ("m.author_token_id", narrowing.author_token_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    for tag in narrowing.tags:
        where.append(f"{contains}(m.tags, ?) > 0")
        params.append(json.dumps(tag, ensure_ascii=False))
    if narrowing.created_since is not None:
        where.append("m.created >= ?")
        params.append(narrowing.created_since)
    if narrowing.created_until is not None:
        where.append("m.created < ?")
        params.append(narrowing.created_until)
    return where, params
