"""Brain rows: the column lists and row -> record mapping both backends share (dialect-free)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from notewell.records.brain import BrainProjectRecord, EventRecord, KnowledgeRecord, SessionRecord

PROJECT_COLUMNS = "p.id, p.owner_user_id, p.home, p.slug, p.name, p.name_key, p.framework, p.language, p.created_at"
# knowledge rows joined with their memory (m), which holds the tags
KNOWLEDGE_COLUMNS = (
    "k.ref, k.brain_project, k.project, k.owner_user_id, k.kind, k.trigger_text, k.rule_text, k.rationale, k.source,"
    " k.confidence, k.rule_key, k.injected_count, k.used_count, k.success_count, k.failure_count, k.created,"
    " k.last_used_at, k.retired_at, m.tags, m.private_to"
)
KNOWLEDGE_FROM = "brain_knowledge k JOIN memories m ON m.ref = k.ref"
SESSION_COLUMNS = (
    "s.id, s.user_id, s.token_id, s.brain_project, s.client_type, s.prompt, s.framework, s.started_at, s.ended_at,"
    " s.success, s.user_feedback, s.sqs, s.summary, s.event_count"
)
EVENT_COLUMNS = "e.id, e.session_id, e.event_type, e.payload, e.at"


def project_from_row(row: Sequence[Any]) -> BrainProjectRecord:
    return BrainProjectRecord(*row)


def knowledge_from_row(row: Sequence[Any]) -> KnowledgeRecord:
    values = list(row)
    values[9] = float(values[9])
    values[18] = tuple(json.loads(values[18]))
    return KnowledgeRecord(*values)


def session_from_row(row: Sequence[Any]) -> SessionRecord:
    values = list(row)
    values[9] = None if values[9] is None else bool(values[9])
    values[11] = None if values[11] is None else float(values[11])
    return SessionRecord(*values)


def event_from_row(row: Sequence[Any]) -> EventRecord:
    values = list(row)
    values[3] = json.loads(values[3])
    return EventRecord(*values)


def tag_pattern(tag: str) -> str:
    """A LIKE pattern (escape character backslash) finding ``tag`` in a stored JSON array of tags."""
    quoted = json.dumps(tag, ensure_ascii=False)
    return "%" + quoted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
