"""Documents and brains as rows: the values and row -> record mapping both backends share.

Dialect-free: the statements, the text encoding and the trigram index stay with each backend.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence
from typing import Any

from notewell.records.documents import BrainHead, BrainRecord, DocumentMeta

BRAIN_HEAD_COLUMNS = "project, folder, title, summary, parent"
BRAIN_COLUMNS = f"{BRAIN_HEAD_COLUMNS}, documents"
BRAIN_PARENT_IDS = (  # a migration step of both backends: a parent was its project-relative folder, now its id
    "UPDATE brains SET parent = CASE WHEN parent = '' THEN project ELSE project || '/' || parent END"
    " WHERE parent IS NOT NULL",
)
# a migration step of both backends: getBrain and listBrains look a brain's sub-brains up by their parent
# (brain_heads_with_parent), which read every brain of the store without it
BRAIN_PARENT_INDEX = ("CREATE INDEX brains_parent ON brains (parent)",)


def extension(path: str) -> str:
    """The stored ``ext`` of a document: its path's extension, lower-cased ('' when it has none)."""
    return posixpath.splitext(path)[1].lower()


def line_count(text: str) -> int:
    """The number of lines of ``text``; a last line without a newline counts, an empty text has none."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def meta_from_row(row: Sequence[Any]) -> DocumentMeta:
    """Document metadata from a row selected in ``DocumentMeta`` field order."""
    return DocumentMeta(*row)


def brain_head_from_row(row: Sequence[Any]) -> BrainHead:
    """A brain from a row selected as ``BRAIN_HEAD_COLUMNS``."""
    return BrainHead(row[0], row[1], row[2], row[3], row[4])


def brain_from_row(row: Sequence[Any]) -> BrainRecord:
    """A brain from a row selected as ``BRAIN_COLUMNS`` (its documents are stored as JSON [path, title] pairs)."""
    return BrainRecord(row[0], row[1], row[2], row[3], row[4], tuple((p, t) for p, t in json.loads(row[5])))
