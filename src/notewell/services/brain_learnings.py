"""Learnings: the durable rules an agent hands in at a session's close, typed and checked once.

As external-brain's close-capture: a field it does not know is ignored, and the confidence is clamped to
at most 0.95 (3 is kept as 0.95); a negative one, or one that is not a number, makes the item invalid, as does
a text that is empty, too long, or holds what no store keeps or no reader should get (``unfit``: a NUL, a lone
UTF-16 surrogate, a control character other than a tab or a line break). An invalid learning is dropped and
counted, never blocking the close; only the first LEARNINGS_MAX are read. Whatever KEA's extractors write (a
model's answer, the deterministic miner's rules) is checked here too (kea_prompt, kea_refine, kea_filter).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from notewell.services.brain_limits import (
    LEARNING_KINDS,
    LEARNING_SOURCES,
    LEARNINGS_MAX,
    MAX_RULE_CHARS,
    MAX_TRIGGER_CHARS,
)
from notewell.services.brain_scoring import CAPTURE_CONFIDENCE_MAX

LEARNING_CONFIDENCE_DEFAULT = 0.9
# NUL (PostgreSQL stores none), the C0 controls but tab and line breaks, DEL, and lone UTF-16 surrogates (a JSON
# escape such as "\udc80" is no character: no store encodes it, and the meaning model's tokenizer refuses it)
_UNFIT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def unfit(text: str) -> bool:
    """Whether ``text`` holds a character no learning may hold (``_UNFIT``)."""
    return _UNFIT.search(text) is not None


def rule_key(trigger: str, rule: str) -> str:
    """What close-capture compares: trigger and rule, case-folded, punctuation and spacing ignored."""
    words = re.findall(r"[^\W_]+", f"{trigger} {rule}".casefold())
    return " ".join(words)


@dataclass(frozen=True)
class Learning:
    trigger: str
    rule: str
    rationale: str
    type: str  # one of LEARNING_KINDS
    source: str  # one of LEARNING_SOURCES
    confidence: float  # 0 to CAPTURE_CONFIDENCE_MAX

    @staticmethod
    def parse(raw: object) -> Learning | None:
        """The learning ``raw`` (a JSON object) describes, or None when it breaks a rule."""
        if not isinstance(raw, dict):
            return None
        trigger, rule, rationale = raw.get("trigger"), raw.get("rule"), raw.get("rationale", "")
        if not isinstance(trigger, str) or not isinstance(rule, str) or not isinstance(rationale, str):
            return None
        if not trigger.strip() or not rule.strip() or len(trigger) > MAX_TRIGGER_CHARS \
                or len(rule) > MAX_RULE_CHARS or len(rationale) > MAX_RULE_CHARS \
                or unfit(trigger + rule + rationale):
            return None
        kind, source, confidence = raw.get("type", "heuristic"), raw.get("source", "discovery"), \
            raw.get("confidence", LEARNING_CONFIDENCE_DEFAULT)
        if kind not in LEARNING_KINDS or source not in LEARNING_SOURCES:
            return None
        if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not confidence >= 0.0:  # NaN
            return None
        return Learning(trigger.strip(), rule.strip(), rationale.strip(), kind, source,
                        min(float(confidence), CAPTURE_CONFIDENCE_MAX))

    @property
    def text(self) -> str:
        """What session search finds it by."""
        return f"{self.trigger} {self.rule} {self.rationale}"

    @property
    def key(self) -> str:
        return rule_key(self.trigger, self.rule)

    def payload(self) -> dict[str, Any]:
        """The learning_captured event's payload."""
        return {"trigger": self.trigger, "rule": self.rule, "rationale": self.rationale, "type": self.type,
                "source": self.source, "confidence": self.confidence}


@dataclass(frozen=True)
class Learnings:
    """The learnings of one close: the valid ones among the first LEARNINGS_MAX, and the counts."""

    valid: tuple[Learning, ...]
    dropped: int  # invalid among the first LEARNINGS_MAX
    submitted: int

    @staticmethod
    def parse(raw: Sequence[object] | None) -> Learnings:
        given = list(raw or [])
        parsed = [Learning.parse(item) for item in given[:LEARNINGS_MAX]]
        valid = tuple(item for item in parsed if item is not None)
        return Learnings(valid, len(parsed) - len(valid), len(given))

    @property
    def truncated(self) -> int:
        return max(0, self.submitted - LEARNINGS_MAX)


@dataclass(frozen=True)
class LearningsReport:
    submitted: int
    kept: int  # valid among the first five
    dropped: int  # invalid among the first five
    truncated: int  # beyond the first five
    captured: list[str]  # knowledge ids created
    deduplicated: int  # valid but already known (the same rule, or one of the same meaning)
    reinforced: list[str] = field(default_factory=list)  # ids of known rules of the same meaning, reinforced
    rejected: int = 0  # valid, but judged not durable or not specific by KEA's refine: not kept as knowledge
    unwritable: int = 0  # kept by KEA, but the session's owner may not write its project: not kept as knowledge
