"""The brain's numbers: knowledge ranking, the confidence loop, skill stages and the session score.

All of it is plain arithmetic on counts and dates (docs/brain.md explains each formula):

- rank     = 0.60 x relevance + 0.25 x confidence + 0.15 x recency
             relevance: the memory full-text relevance over the best candidate's (1.0 for the best);
             recency: 0.5 ** (days since taught or last used / 30)
- confidence after a use: success c + 0.10 x (1 - c); failure max(0.05, 0.80 x c)
- stage    seed -> knowledge (2+ successful uses, success rate >= 0.6)
                -> wisdom (5+ successful uses, success rate >= 0.8, confidence >= 0.9)
- sqs      = 0.50 x outcome + 0.20 x feedback + 0.15 x reuse + 0.15 x capture, in [0, 1]
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Literal

from notewell.records.brain import KnowledgeRecord
from notewell.services.memory_rank import recency

RELEVANCE_WEIGHT = 0.60
CONFIDENCE_WEIGHT = 0.25
RECENCY_WEIGHT = 0.15
SUCCESS_STEP = 0.10
FAILURE_FACTOR = 0.80
CONFIDENCE_FLOOR = 0.05
CAPTURE_CONFIDENCE_MAX = 0.95
KNOWLEDGE_MIN_SUCCESSES = 2
KNOWLEDGE_MIN_RATE = 0.6
WISDOM_MIN_SUCCESSES = 5
WISDOM_MIN_RATE = 0.8
WISDOM_MIN_CONFIDENCE = 0.9


def rank(relevance: float, confidence: float, last_touched: str, now: datetime) -> float:
    """The score of one knowledge item; ``relevance`` is already normalised to (0, 1]."""
    return (RELEVANCE_WEIGHT * relevance + CONFIDENCE_WEIGHT * confidence
            + RECENCY_WEIGHT * recency(last_touched, now))


def after_use(confidence: float, success: bool) -> float:
    if success:
        return round(min(1.0, confidence + SUCCESS_STEP * (1.0 - confidence)), 6)
    return round(max(CONFIDENCE_FLOOR, FAILURE_FACTOR * confidence), 6)


def stage(successes: int, failures: int, confidence: float) -> str:
    uses = successes + failures
    rate = successes / uses if uses else 0.0
    if successes >= WISDOM_MIN_SUCCESSES and rate >= WISDOM_MIN_RATE and confidence >= WISDOM_MIN_CONFIDENCE:
        return "wisdom"
    if successes >= KNOWLEDGE_MIN_SUCCESSES and rate >= KNOWLEDGE_MIN_RATE:
        return "knowledge"
    return "seed"


def knowledge_stage(item: KnowledgeRecord) -> str:
    """The stage of a knowledge item: how far successful use has matured it (what every door shows)."""
    return stage(item.success_count, item.failure_count, item.confidence)


def session_quality(success: bool, feedback: str | None, injected: int, used_of_injected: int,
                    learnings_kept: int) -> float:
    """The session quality score (sqs) in [0, 1], rounded half up to 2 places.

    outcome 1 on success else 0; feedback up 1, none 0.5, down 0; reuse the share of injected items the
    agent reported using (0.5 when nothing was injected); capture min(1, learnings kept / 2).
    """
    outcome = 1.0 if success else 0.0
    vote = {"up": 1.0, "down": 0.0}.get(feedback or "", 0.5)
    reuse = used_of_injected / injected if injected else 0.5
    capture = min(1.0, learnings_kept / 2)
    score = 0.50 * outcome + 0.20 * vote + 0.15 * reuse + 0.15 * capture
    return math.floor(score * 100 + 0.5 + 1e-9) / 100  # half up: 0.675 is 0.68, whatever binary makes of it


# The close's ask-back nudge as a key each door words with its own way to teach (mcp/tools/brain_shapes.py
# ASK_BACK, api/routes/sessions.py REST_ASK_BACK): no door's words in here.
AskBack = Literal["capture-correction", "capture-rule", "teach-writable"]


def ask_back_hint(success: bool, feedback: str | None, learnings_given: bool, unwritable: int = 0) -> AskBack | None:
    """The close's ask-back nudge: strong ("capture-correction") after a failure or a down vote, gentle
    ("capture-rule") otherwise, none with learnings; but learnings the session's owner may not write to its
    project (``unwritable``) are lost unless taught elsewhere, which the close must say ("teach-writable")."""
    if unwritable:
        return "teach-writable"
    if learnings_given:
        return None
    return "capture-correction" if not success or feedback == "down" else "capture-rule"
