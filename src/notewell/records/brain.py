"""The records of the External Brain: personal projects, taught knowledge, coding sessions.

Taught knowledge is memory with structure: each item is a memory (store.memories, so recall and
recall_context find it) plus a ``brain_knowledge`` row keyed by the memory's ref holding the fields a
memory has no place for (kind, trigger, rule, rationale, source, confidence and the usage counts).
Sessions, their events and which knowledge was injected into or used by them are rows of their own,
with a full-text index over each session's prompt, events, outcome and learnings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

KNOWLEDGE_KINDS: tuple[str, ...] = ("reflex", "recipe", "heuristic", "principle", "anti_principle", "action_item")
VAULT_AUTHOR = "system:vault"  # who writes (and retires) the action items meeting notes yield: the vault itself
MEETING_SOURCE = "meeting_note"  # the source of those items; their memory path is brain-actions/<note path>
EVOLUTION_AUTHOR = "system:evolution"  # who retires knowledge idle below the floor (nightly evolution); undoable


@dataclass(frozen=True)
class BrainProjectRecord:
    """A personal project: it lives under its owner's home (id ``~alice/acme-robotics``)."""

    id: str
    owner_user_id: str
    home: str  # the home project the project's knowledge is stored in, e.g. ~alice
    slug: str
    name: str
    name_key: str  # the name case-folded: one project per (owner, name_key)
    framework: str | None
    language: str | None
    created_at: str


@dataclass(frozen=True)
class KnowledgeInput:
    brain_project: str  # a personal project id or an ordinary project id
    owner_user_id: str
    kind: str  # one of KNOWLEDGE_KINDS
    trigger: str
    rule: str
    rationale: str
    source: str
    confidence: float
    rule_key: str  # the trigger and rule folded: what close-capture deduplicates on
    created: str


@dataclass(frozen=True)
class KnowledgeRecord:
    ref: str  # the memory's ref
    brain_project: str
    project: str  # the Notewell project of the memory (a home for a personal project)
    owner_user_id: str
    kind: str
    trigger: str
    rule: str
    rationale: str
    source: str
    confidence: float
    rule_key: str
    injected_count: int
    used_count: int
    success_count: int
    failure_count: int
    created: str
    last_used_at: str | None
    retired_at: str | None
    tags: tuple[str, ...]
    private_to: str | None = None  # its owner alone sees it (what the brain learned by itself from their sessions)

    @property
    def live(self) -> bool:
        return self.retired_at is None


@dataclass(frozen=True)
class NoteItemRecord:
    """An action item a meeting note yielded, live or retired, and who retired it (VAULT_AUTHOR when the
    line left the note; a person when they resolved it at a session's close)."""

    item: KnowledgeRecord
    retired_by: str | None


@dataclass(frozen=True)
class NoteItemMove:
    """An action item following its meeting note to another path of its project: its memory's new path and text
    (which name the note), and its rationale naming the note there."""

    ref: str
    path: str
    content: str
    content_hash: str
    rationale: str


@dataclass(frozen=True)
class FunnelCount:
    """KEA's funnel (the seed's op=kea.funnel fields): learnings submitted at the close, the extractor's
    findings, what the quality filter passed, what was persisted; summed over ``runs`` runs."""

    submitted: int
    findings: int
    passed: int
    persisted: int
    runs: int = 1


@dataclass(frozen=True)
class HealthCounts:
    """The loop's raw counts for one person (or the whole team) since a moment (docs/brain.md, "The loop's
    health"); action items are in none of them but ``open_action_items``."""

    closed_per_day: tuple[tuple[str, int], ...]  # (YYYY-MM-DD, sessions closed that day), days with any
    injected: int  # knowledge injected into sessions started since
    used: int  # knowledge reported used by those sessions
    captured: tuple[tuple[str, int], ...]  # (close_capture | mined | cross | taught, rules created since)
    rules: tuple[tuple[int, int, float], ...]  # (successes, failures, confidence) of each live rule
    open_action_items: int
    funnel: tuple[tuple[str, FunnelCount], ...] = ()  # (refine | mine | cross, KEA's funnel summed since)


@dataclass(frozen=True)
class Evolution:
    """One nightly evolution's work (action items in none of it): the live rules, how many idle ones decayed,
    and the ones retired below the floor (as they were just before)."""

    live: int
    decayed: int
    retired: tuple[KnowledgeRecord, ...]


@dataclass(frozen=True)
class KnowledgeFilter:
    """Live knowledge of some projects, newest or most confident first."""

    brain_projects: Sequence[str]
    kinds: Sequence[str] = ()  # empty: every kind but action_item
    owner_user_id: str | None = None
    viewer: str | None = None  # a person (user id): their own private items and everyone's others; None: all
    min_successes: int = 0
    order: str = "confidence"  # "confidence" (then newest) or "created" (newest first)
    limit: int = 50
    offset: int = 0  # how many to skip (OFFSET in the store: a page reads no rows before it into Python)


@dataclass(frozen=True)
class SessionRecord:
    id: str
    user_id: str
    token_id: str | None
    brain_project: str
    client_type: str
    prompt: str
    framework: str | None
    started_at: str
    ended_at: str | None = None
    success: bool | None = None
    user_feedback: str | None = None
    sqs: float | None = None
    summary: str | None = None
    event_count: int = 0


@dataclass(frozen=True)
class SessionClose:
    success: bool
    user_feedback: str | None
    sqs: float
    summary: str | None
    ended_at: str


@dataclass(frozen=True)
class EventRecord:
    id: str
    session_id: str
    event_type: str
    payload: dict[str, Any]
    at: str


@dataclass(frozen=True)
class SessionHit:
    session: SessionRecord
    relevance: float  # > 0, larger is better


def payload_json(payload: dict[str, Any]) -> str:
    """The payload as stored; ValueError for a number JSON cannot carry (NaN, or infinity: 1e400 as read)."""
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, allow_nan=False)


PROPOSAL_KINDS = ("merge", "demote", "add_steps")
PROPOSAL_STATES = ("open", "accepted", "rejected")


@dataclass(frozen=True)
class ProposalInput:
    """An edit autoskill proposes to one recipe (``knowledge_ref``): ``new_kind`` and ``new_rule`` are what it
    becomes if a person accepts; ``other_ref``, for a merge, the recipe folded into it (retired). ``key`` makes
    the same proposal once."""

    key: str
    kind: str
    knowledge_ref: str
    other_ref: str | None
    owner_user_id: str
    brain_project: str
    session_id: str
    new_kind: str
    new_rule: str
    reason: str
    created_at: str


@dataclass(frozen=True)
class ProposalRecord:
    id: int
    proposal: ProposalInput
    state: str
    decided_at: str | None
    decided_by: str | None
    result_ref: str | None
