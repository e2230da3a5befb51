"""The injection: ranked knowledge as markdown for the agent's context, bounded in tokens.

    ## What I've Learned About You
    ### Unconditional Rules        principles (ALWAYS) and anti-principles (NEVER): first, they hold everywhere
    ### Reflexes                   "When <trigger>: <rule>"
    ### Recipes
    ### Heuristics

Items are taken in rank order and each goes in whole or not at all; the block never exceeds
``max_tokens`` (services.tokens counts). Knowledge text is data written by the person, not commands to
the server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from notewell.records.brain import KnowledgeRecord
from notewell.services.tokens import count_tokens

HEADING = "## What I've Learned About You"
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Unconditional Rules", ("principle", "anti_principle")),
    ("Reflexes", ("reflex",)),
    ("Recipes", ("recipe",)),
    ("Heuristics", ("heuristic",)),
)
ACTION_HEADING = "## Open Action Items"


_CONDITIONS = ("when ", "if ", "before ", "after ", "while ", "whenever ", "for ", "in ", "on ")


def when(trigger: str) -> str:
    """"When <trigger>", unless the trigger already starts with such a word ("when …", "before …")."""
    t = trigger.strip()
    if t.lower().startswith(_CONDITIONS):
        return t[0].upper() + t[1:]
    return f"When {t}"


def line(item: KnowledgeRecord) -> str:
    text = item.rule.strip()
    if item.kind == "principle":
        text = f"ALWAYS: {text}"
    elif item.kind == "anti_principle":
        text = f"NEVER: {text}"
    if item.trigger.strip():
        text = f"{when(item.trigger)}: {text}"
    if item.rationale.strip():
        text += f" (why: {item.rationale.strip()})"
    return f"- {text} [{item.ref}]"


@dataclass(frozen=True)
class Injection:
    text: str
    ids: list[str]  # the items in the text, in rank order
    tokens: int


def render(chosen: Sequence[KnowledgeRecord]) -> str:
    parts = [HEADING]
    for title, kinds in SECTIONS:
        lines = [line(k) for k in chosen if k.kind in kinds]
        if lines:
            parts += [f"### {title}", *lines]
    return "\n".join(parts)


def build(ranked: Sequence[KnowledgeRecord], max_tokens: int) -> Injection:
    """The best items (in rank order) that fit together in ``max_tokens``; empty when none does."""
    chosen: list[KnowledgeRecord] = []
    for item in ranked:
        if count_tokens(render([*chosen, item])) <= max_tokens:
            chosen.append(item)
    if not chosen:
        return Injection("", [], 0)
    text = render(chosen)
    return Injection(text, [k.ref for k in chosen], count_tokens(text))


def action_items(items: Sequence[KnowledgeRecord]) -> str:
    lines = [f"- {'[blocker] ' if 'blocker' in k.tags else ''}{k.rule.strip()} [{k.ref}]" for k in items]
    return "\n".join([ACTION_HEADING, *lines])
