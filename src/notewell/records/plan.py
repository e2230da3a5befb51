"""The candidate plan: which literal strings every match must contain.

A plan is a small AND/OR tree of literals (already case-folded). A store turns it into its own trigram
query (FTS5 MATCH on SQLite, pg_trgm LIKE on PostgreSQL); ``None`` means no usable literal, so the
caller must scan. Trigrams are taken within runs of non-space characters (SQLite indexes only those:
see store/sqlite/documents.py), so a literal with no such run of three characters or more ("a b c",
"x") carries no trigram and drops out here; a literal holding NUL becomes the AND of its NUL-free
pieces.
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
    """Drop what carries no trigram: a short literal, an AND of nothing, an OR with an open branch."""
    if node is None:
        return None
    if isinstance(node, Lit):
        if "\x00" in node.text:  # no trigram index carries NUL (FTS5 reads its query as a C string)
            return simplify(And(tuple(Lit(piece) for piece in node.text.split("\x00"))))
        return node if any(len(run) >= TRIGRAM for run in node.text.split()) else None
    parts = [simplify(p) for p in node.parts]
    if isinstance(node, And):
        kept = tuple(dict.fromkeys(p for p in parts if p is not None))
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else And(kept)
    if any(p is None for p in parts) or not parts:
        return None
    uniq = tuple(dict.fromkeys(p for p in parts if p is not None))
    return uniq[0] if len(uniq) == 1 else Or(uniq)


def trigrams(text: str, most: int = 12) -> list[str]:
    """The distinct trigrams inside the non-space runs of ``text`` (str.split's idea of space); at most
    ``most`` of them, spread over the whole literal."""
    grams = list(dict.fromkeys(run[i : i + TRIGRAM] for run in text.split() for i in range(len(run) - TRIGRAM + 1)))
    if len(grams) <= most:
        return grams
    step = (len(grams) - 1) / (most - 1)
    return list(dict.fromkeys(grams[round(i * step)] for i in range(most)))
