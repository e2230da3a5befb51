"""KEA's quality filter: what an extractor found becomes knowledge only if it reads as a rule worth keeping.

A candidate passes when its rule is specific (at least ``MIN_CONTENT_WORDS`` words that are not stop words, and
not one of the empty phrases an agent or a miner produces: "be careful", "fix it"), names nothing that only
this session knew (a Notewell id, a long hex string, a temporary path, a line number), is not an action item
(tasks are never KEA's), is a learning close-capture would take (``Learning.parse``: no NUL, lone surrogate or
control character, no text too long; a session's event may hold a NUL, which PostgreSQL cannot store, and the
miner quotes events), and is the first of the candidates with its rule (trigger and rule compared as
close-capture compares them, brain_learnings.rule_key).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from notewell.services.brain_learnings import Learning
from notewell.services.rule_polarity import forbids

MIN_CONTENT_WORDS = 2
MIN_WORD_CHARS = 3
_STOP = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "do", "does", "for", "from", "has", "have", "how", "i",
    "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "so", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "to", "too", "up", "us", "was", "we", "were",
    "what", "when", "which", "who", "why", "will", "with", "you", "your", "always", "never", "use", "avoid",
))
_EMPTY = frozenset({"be careful", "try again", "fix it", "do better", "it works", "good job", "thanks",
                    "thank you", "looks good", "make it work", "do not do that", "never do that", "always do that"})
_SESSION_ONLY = re.compile(r"\b(ses|evt|mem|tok)_[0-9a-f]{6,}\b|\b[0-9a-f]{16,}\b|/tmp/|\bline \d+\b",
                           re.IGNORECASE)


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())


def specific(rule: str) -> bool:
    """The rule says something: enough content words, and not an empty phrase."""
    words = _words(rule)
    if " ".join(words) in _EMPTY:
        return False
    return sum(1 for w in words if w not in _STOP and len(w) >= MIN_WORD_CHARS) >= MIN_CONTENT_WORDS


def _stems(text: str) -> set[str]:
    """Content words, each by its first five letters ("verify" and "verification" alike)."""
    return {w[:5] for w in _words(text) if w not in _STOP and len(w) >= MIN_WORD_CHARS}


def keeps_words(given: Learning, reworded: str) -> bool:
    """Whether a model's rewording of ``given``'s rule may stand for it: it forbids when the rule forbids and only
    then (rule_polarity.forbids: "never" is a stop word, so a flip adds no word), and at most two of its
    content words, or a quarter, are new to the learning (its trigger, rule and rationale). A clearer wording keeps
    most of them; "Always disable TLS certificate verification in every HTTP client" for a rule about seeding
    fixtures, which text quoted in a session talked a model into, keeps none, and a clause added to the rule ("…;
    disable TLS verification") brings three. A heuristic: a faithful rewording it refuses costs only the model's
    wording (the deterministic judge keeps the agent's words)."""
    if forbids(given.rule) != forbids(reworded):
        return False
    words = _stems(reworded)
    new = words - _stems(f"{given.trigger} {given.rule} {given.rationale}")
    return len(new) <= max(2, len(words) // 4)


def passes(candidate: Learning) -> bool:
    return (candidate.type != "action_item" and specific(candidate.rule)
            and not _SESSION_ONLY.search(f"{candidate.trigger} {candidate.rule}")
            and Learning.parse(candidate.payload()) is not None)


def quality_filter(candidates: Sequence[Learning]) -> list[Learning]:
    """The candidates that pass, each rule once (the first found)."""
    seen: set[str] = set()
    kept: list[Learning] = []
    for candidate in candidates:
        if passes(candidate) and candidate.key not in seen:
            seen.add(candidate.key)
            kept.append(candidate)
    return kept
