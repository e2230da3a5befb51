"""Packing ranked items (memories, document passages) into one block of at most max_tokens.

Items are taken in the order given (best first). One that fits whole goes in whole. One that does not
fit is ended at the last sentence boundary that fits (a ".", "!", "?" or "…" followed by a space, a
Chinese or Japanese full stop "。", "！", "？", or a line end), marked with `` […]``, provided at least
one sentence fits; otherwise it is left out. Later, smaller items may still fit. An item whose text was already
only the beginning of its source (a long document: ``PackItem.cut``) is never complete either. Every item left
out or ended early is reported, and the whole block is counted again at the end, so ``tokens_used <= max_tokens``
always holds for the counter in services.tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from notewell.services.token_count import count_tokens

SEPARATOR = "\n"
SHORTENED_MARK = " […]"
# a full stop of Chinese and Japanese (。！？, and their half-width forms) ends a sentence without a space after it
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*(?=\s)|[。！？｡][」』”’）)\]]*|\n")


@dataclass(frozen=True)
class PackItem:
    kind: str  # "memory" or "document"
    ref: str  # a memory ref, or a document location "project/path#L3-9"
    title: str
    label: str  # where it comes from (or why it is there: the link that brought it), shown under the title
    text: str
    relevance: float  # 0..1, the order the caller sorted by
    documents: tuple[str, ...] = ()  # a memory's: the documents it is tied to that the caller may read
    found_by: tuple[str, ...] = ()  # how a search found it ("words", "meaning"); empty: a link brought it (label)
    similarity: float | None = None  # its cosine similarity to the query, when among the nearest in meaning
    cut: str | None = None  # the text is only the beginning of its source: why, and where its rest is read


@dataclass(frozen=True)
class PackedItem:
    kind: str
    ref: str
    title: str
    tokens: int
    complete: bool  # False: ended at a sentence boundary, or its text was only its source's beginning (cut)
    label: str  # the item's label: where it comes from, or why it is there
    documents: tuple[str, ...] = ()  # a memory's: the documents it is tied to that the caller may read
    found_by: tuple[str, ...] = ()  # as PackItem's
    similarity: float | None = None


@dataclass(frozen=True)
class LeftOut:
    kind: str
    ref: str
    title: str
    tokens: int  # what the whole item would have cost
    reason: str


@dataclass
class ContextPack:
    query: str
    max_tokens: int
    text: str = ""
    tokens_used: int = 0
    items: list[PackedItem] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    words_only: str | None = None  # why meaning could not be used (services/meaning.py), None when it was


def render(item: PackItem, text: str) -> str:
    """``[ref] title``, ``(where it comes from)``, then the text; a title the text starts with is not repeated."""
    title = item.title.rstrip("…")
    head = f"[{item.ref}]" if not title or item.text.lstrip().startswith(title) else f"[{item.ref}] {item.title}"
    return f"{head}\n({item.label})\n{text.strip()}\n"


def sentence_ends(text: str) -> list[int]:
    """Offsets just after each sentence (or line) end inside ``text``, and its end."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    return ends


def _ended_early(item: PackItem, budget: int) -> tuple[str, int] | None:
    """The longest sentence-bounded start of the item whose rendering fits ``budget`` tokens."""
    ends = [e for e in sentence_ends(item.text)[:-1] if item.text[:e].strip()]
    lo, hi, best = 0, len(ends) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        rendered = render(item, item.text[: ends[mid]].rstrip() + SHORTENED_MARK)
        cost = count_tokens(rendered)
        if cost <= budget:
            best, lo = (rendered, cost), mid + 1
        else:
            hi = mid - 1
    return best


def pack(query: str, items: list[PackItem], max_tokens: int, costs: Sequence[int] | None = None) -> ContextPack:
    """``costs``: each item's whole rendering counted already (``count_tokens(render(item, item.text))``), in
    the items' order, when the caller had to count them anyway."""
    result = ContextPack(query=query, max_tokens=max_tokens)
    parts: list[str] = []
    separator_cost = count_tokens(SEPARATOR)
    used = 0
    for n, item in enumerate(items):
        whole = render(item, item.text)
        whole_cost = costs[n] if costs is not None else count_tokens(whole)
        extra = separator_cost if parts else 0
        budget = max_tokens - used - extra
        if whole_cost <= budget:
            parts.append(whole)
            used += whole_cost + extra
            result.items.append(PackedItem(item.kind, item.ref, item.title, whole_cost, item.cut is None,
                                           item.label, item.documents, item.found_by, item.similarity))
            if item.cut is not None:
                result.left_out.append(LeftOut(item.kind, item.ref, item.title, whole_cost, item.cut))
            continue
        shortened = _ended_early(item, budget)
        if shortened is None:
            result.left_out.append(LeftOut(item.kind, item.ref, item.title, whole_cost,
                                           "did not fit, not even its first sentence"))
            continue
        text, cost = shortened
        parts.append(text)
        used += cost + extra
        result.items.append(PackedItem(item.kind, item.ref, item.title, cost, False, item.label, item.documents,
                                       item.found_by, item.similarity))
        result.left_out.append(LeftOut(item.kind, item.ref, item.title, whole_cost,
                                       f"ended at a sentence boundary: {cost} of {whole_cost} tokens kept"))
    block = SEPARATOR.join(parts)
    while parts and count_tokens(block) > max_tokens:  # a newline join never counts more: a safety net only
        parts.pop()
        dropped = result.items.pop()
        result.left_out.append(LeftOut(dropped.kind, dropped.ref, dropped.title, dropped.tokens,
                                       "did not fit once the block was counted whole"))
        block = SEPARATOR.join(parts)
    result.text = block
    result.tokens_used = count_tokens(block)
    return result
