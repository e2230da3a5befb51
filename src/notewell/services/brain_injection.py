"""The injection: ranked knowledge as markdown for the agent's context, bounded in tokens.

    ## What I've Learned About You
    ### Unconditional Rules        principles (ALWAYS) and anti-principles (NEVER): first, they hold everywhere
    ### Reflexes                   "When <trigger>: <rule>"
    ### Recipes
    ### Heuristics

Items are taken in rank order and each goes in whole or not at all, a person's rule once (of two of their items of
one kind with the same words and rationale, under triggers that differ by their numbers alone, the better
ranked); the block never exceeds
``max_tokens`` (services.tokens counts), nor, when it is given, ``max_bytes`` of JSON (a session's opening
injection, kept far below an answer's bound so that the door never cuts it). Knowledge text is data written by
the person, not commands to the server, and each item is one line: its trigger, rule and rationale have their
line breaks made spaces, so that no item (another writer's in a shared project) can add a heading or a line of
its own to the block.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from notewell.answer_bound import json_bytes
from notewell.records.brain import KnowledgeRecord
from notewell.services.token_count import count_tokens

HEADING = "## What I've Learned About You"
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Unconditional Rules", ("principle", "anti_principle")),
    ("Reflexes", ("reflex",)),
    ("Recipes", ("recipe",)),
    ("Heuristics", ("heuristic",)),
)
ACTION_HEADING = "## Open Action Items"
_NUMBERS = re.compile(r"\d+")


_CONDITIONS = ("when ", "if ", "before ", "after ", "while ", "whenever ", "for ", "in ", "on ")


def one_line(text: str) -> str:
    """``text`` with every run of white space (line and paragraph separators included) made one space."""
    return " ".join(text.split())


def when(trigger: str) -> str:
    """"When <trigger>", unless the trigger already starts with such a word ("when …", "before …")."""
    t = one_line(trigger)
    if t.lower().startswith(_CONDITIONS):
        return t[0].upper() + t[1:]
    return f"When {t}"


def line(item: KnowledgeRecord) -> str:
    text = one_line(item.rule)
    if item.kind == "principle":
        text = f"ALWAYS: {text}"
    elif item.kind == "anti_principle":
        text = f"NEVER: {text}"
    if item.trigger.strip():
        text = f"{when(item.trigger)}: {text}"
    if item.rationale.strip():
        text += f" (why: {one_line(item.rationale)})"
    return f"- {text} [{item.ref}]"


@dataclass(frozen=True)
class Injection:
    text: str
    ids: list[str]  # the items in the text, in rank order
    tokens: int  # its lines and headings counted one by one: never below the count of the whole block


def render(chosen: Sequence[KnowledgeRecord]) -> str:
    parts = [HEADING]
    for title, kinds in SECTIONS:
        lines = [line(k) for k in chosen if k.kind in kinds]
        if lines:
            parts += [f"### {title}", *lines]
    return "\n".join(parts)


def _section(kind: str) -> str:
    return next(f"### {title}" for title, kinds in SECTIONS if kind in kinds)


def build(ranked: Sequence[KnowledgeRecord], max_tokens: int, max_bytes: int | None = None) -> Injection:
    """The best items (in rank order) that fit together in ``max_tokens`` (and in ``max_bytes`` of JSON, as an
    answer carries the text, when given); empty when none does.

    Each line and heading is counted once: joining texts with newlines never counts more than the parts
    plus one token per newline (services.tokens), so the sum bounds the block's count.
    """
    chosen: list[KnowledgeRecord] = []
    used = count_tokens(HEADING)
    sections: set[str] = set()
    said: set[tuple[str, str, str, str, str]] = set()
    for item in ranked:
        # a person's same rule under a trigger that differs by its numbers alone once, the best ranked: rules the
        # brain mined from two of their sessions ("Fix ticket 412 …", "Fix ticket 977 …") are kept apart by their
        # tasks' numbers, and a second line said nothing new and took the budget of another rule. Under another
        # trigger it says where else the rule holds ("run it without --dry-run" for the staging script and for
        # terraform against production), with another rationale why, and two people's are two items: each
        # holds theirs
        rule = (item.owner_user_id, item.kind, one_line(item.rule).casefold(),
                _NUMBERS.sub("#", one_line(item.trigger).casefold()), one_line(item.rationale).casefold())
        if rule in said:
            continue
        section = _section(item.kind)
        cost = count_tokens(line(item)) + 1 + (0 if section in sections else count_tokens(section) + 1)
        if used + cost <= max_tokens and (max_bytes is None or json_bytes(render([*chosen, item])) <= max_bytes):
            chosen.append(item)
            sections.add(section)
            said.add(rule)
            used += cost
    if not chosen:
        return Injection("", [], 0)
    return Injection(render(chosen), [k.ref for k in chosen], used)


def action_items(items: Sequence[KnowledgeRecord]) -> str:
    lines = [f"- {'[blocker] ' if 'blocker' in k.tags else ''}{one_line(k.rule)} [{k.ref}]" for k in items]
    return "\n".join([ACTION_HEADING, *lines])
