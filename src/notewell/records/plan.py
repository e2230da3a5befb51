"""The candidate plan: which literal strings every match must contain.

A plan is a small AND/OR tree of literals (already case-folded). A store turns it into its own index
query (FTS5 MATCH on SQLite, array containment on PostgreSQL); ``None`` means no usable literal, so
the caller must scan. Index terms are taken within runs of non-space characters (both stores index a
region's distinct words, store/index_words.py): a run of three characters or more by its trigrams, a
shorter one ("qz", "中文", "文") by its own index terms (each store says how). So a literal drops out
here only when it holds no run at all (" "); a literal holding NUL becomes the AND of its NUL-free
pieces. Under an AND, the parts without a trigram are dropped when another part carries one: the
trigrams are far more selective, and asking for a one-character term costs a long list.
"""

from __future__ import annotations

from dataclasses import dataclass

TRIGRAM = 3


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class And:
    parts: tuple[Plan, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[Plan, ...]


Plan = Lit | And | Or


def simplify(node: Plan | None) -> Plan | None:
    """Drop what carries no index term: a literal of spaces, an AND of nothing, an OR with an open branch;
    and under an AND, the parts without a trigram beside one that carries a trigram."""
    if node is None:
        return None
    if isinstance(node, Lit):
        if "\x00" in node.text:  # no index carries NUL (FTS5 reads its query as a C string)
            return simplify(And(tuple(Lit(piece) for piece in node.text.split("\x00"))))
        return node if node.text.split() else None
    parts = [simplify(p) for p in node.parts]
    if isinstance(node, And):
        kept = list(dict.fromkeys(p for p in parts if p is not None))
        if any(has_trigram(p) for p in kept):
            kept = [p for p in kept if has_trigram(p)]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else And(tuple(kept))
    if any(p is None for p in parts) or not parts:
        return None
    uniq = tuple(dict.fromkeys(p for p in parts if p is not None))
    return uniq[0] if len(uniq) == 1 else Or(uniq)


def has_trigram(plan: Plan) -> bool:
    """Whether every match of ``plan`` must hold some run of three characters or more."""
    if isinstance(plan, Lit):
        return any(len(run) >= TRIGRAM for run in plan.text.split())
    if isinstance(plan, And):
        return any(has_trigram(p) for p in plan.parts)
    return all(has_trigram(p) for p in plan.parts)


def indexed_runs(text: str) -> list[str]:
    """The runs of a literal an index asks for: those of three characters or more when there are any (the
    short ones beside them add little and cost much), else the short ones."""
    runs = list(dict.fromkeys(text.split()))
    long = [run for run in runs if len(run) >= TRIGRAM]
    return long or runs


def trigrams(text: str, most: int = 12) -> list[str]:
    """The distinct trigrams inside the non-space runs of ``text`` (str.split's idea of space); at most
    ``most`` of them, spread over the whole literal."""
    grams = list(dict.fromkeys(run[i : i + TRIGRAM] for run in text.split() for i in range(len(run) - TRIGRAM + 1)))
    if len(grams) <= most:
        return grams
    step = (len(grams) - 1) / (most - 1)
    return list(dict.fromkeys(grams[round(i * step)] for i in range(most)))
