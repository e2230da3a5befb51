"""The journal of notes written by agents and people through Notewell: one row per write, append-only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

JournalAction = Literal["write", "edit", "move", "delete", "undo"]


@dataclass(frozen=True)
class JournalEntry:
    id: int
    at: str
    user_id: str
    token_id: str | None
    tool: str  # the door's name of the call: write_note, PATCH, notewell undo, ...
    action: JournalAction
    project: str
    path: str  # project-relative, where the note was before the write
    new_path: str | None  # a move's destination (project-relative, same project)
    before_version: str | None  # None: there was no note
    after_version: str | None  # None: there is no note after it (a delete)
    undoes: int | None = None  # an undo's entry: the id of the entry it undid
    before: bytes | None = None  # the note's bytes before an edit, overwrite or delete (only when asked for)
