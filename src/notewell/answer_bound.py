"""How large one tool answer may be, on every tool: one limit, kept by the tools and guarded at the door.

An agent's context is the scarce thing: an answer of 188 KB (listDocs at 1,000 documents once) costs some
47,000 tokens. So no tool answer is longer than ANSWER_BYTES_MAX bytes of JSON (UTF-8, as the MCP text block
carries it). The tools that page (listDocs, readDoc, search_notes) keep the bound themselves, so their own note
names the exact next offset. Every other answer passes ``fit_answer`` on its way out: an answer over the bound
first has its long texts (over a quarter of the bound each, in bytes) shortened, down to that quarter at most,
when that keeps more of its largest list than dropping the list's tail would, then loses the tail of its
largest lists (and, when no list is left to cut, the end of its longest text) until
it fits, and says so in ``truncated`` and ``note`` (after the tool's own note, which is kept) with how to get
the rest: each cut field's own way on where the tool gives one (``ways``: getBrain's contents are read whole
with readDoc), the tool's general advice for the others. Long texts go first so that one large item (a memory
of 90,000 characters at the top of a recall) is shown shortened beside the others rather than dropping them all.
Every tool's output schema carries those two fields (``with_cut_fields``), so a client that validates answers
accepts a cut one; a tool whose output schema is a product's to the letter (search_notes) keeps it, and its cut
answer says so in the note that schema has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

ANSWER_BYTES_MAX: Final = 32 * 1024
"""No tool answer is longer than this many bytes of JSON (UTF-8, as the MCP text block is)."""

PAGE_BYTES_MAX: Final = ANSWER_BYTES_MAX - 300
"""A paging tool ends its page within this, leaving room for the note that names the next page."""

CUT_NOTE: Final = f"This answer was cut to stay within {ANSWER_BYTES_MAX // 1024} KB of JSON: {{what}}. {{advice}}"
WHAT_BYTES: Final = 240
"""Room kept in a cut answer's note for what was cut (its first three cuts, by where they are)."""
ASK_FOR_LESS: Final = ("To get the rest, ask for less at a time (a smaller limit or max_tokens, a narrower path or "
                       "query).")


ITEM_SEPARATOR: Final = ", "  # json.dumps' own, which the door uses

Way = Callable[[dict[str, Any]], str | None]
"""How to get the rest of one field of an answer, given the whole answer (before the cut), so that it can name
the exact arguments (readDoc's path of the brain.md whose contents were cut); None or "" where the answer holds
nothing of it to cut (a brain without a parent)."""


def json_bytes(value: Any) -> int:
    """The length of ``value`` as the door sends it: JSON as json.dumps writes it, UTF-8."""
    return len(json.dumps(value, ensure_ascii=False).encode())


def text_within(text: str, budget: int) -> str:
    """The longest start of ``text`` whose JSON string (quotes included) is at most ``budget`` bytes."""
    if json_bytes(text) <= budget:
        return text
    low, high = 0, len(text)  # json_bytes(text[:low]) <= budget < json_bytes(text[:high])
    while high - low > 1:
        middle = (low + high) // 2
        if json_bytes(text[:middle]) <= budget:
            low = middle
        else:
            high = middle
    return text[:low]


def leading_items_within(answer: dict[str, Any], items: list[Any], budget: int = ANSWER_BYTES_MAX) -> int:
    """How many leading items of ``items`` (a list inside ``answer``) keep the answer within ``budget`` bytes."""
    size = json_bytes(answer) - json_bytes(items) + 2  # the answer with the list emptied
    taken = 0
    for item in items:
        size += json_bytes(item) + (len(ITEM_SEPARATOR) if taken else 0)
        if size > budget:
            break
        taken += 1
    return taken


def fit_answer(answer: dict[str, Any], budget: int = ANSWER_BYTES_MAX, schema: dict[str, Any] | None = None,
               advice: str | None = None, ways: Mapping[str, Way] | None = None) -> dict[str, Any]:
    """``answer`` itself when it is within ``budget`` bytes of JSON; otherwise a copy cut to fit, saying so in
    ``note`` (and ``truncated``, unless ``schema``, the tool's output schema, is a product's without it), with how
    to get the rest: for each cut top-level field that ``ways`` names, its way; for the others ``advice``, this
    tool's arguments or another tool (by default ASK_FOR_LESS)."""
    if json_bytes(answer) <= budget:
        return answer
    cut: dict[str, Any] = json.loads(json.dumps(answer))  # a deep copy of plain JSON: the tool's own data is kept
    if schema is None or "truncated" in schema.get("properties", {"truncated": None}):
        cut["truncated"] = True
    own = cut.get("note") if isinstance(cut.get("note"), str) else ""  # the tool's own note comes first, kept
    ways_of = {key: way_on for key, way in (ways or {}).items() if key in answer and (way_on := way(answer))}

    def note(what: str, fields: list[str] | None) -> str:
        """The note for ``what`` was cut, the ways on of the cut top-level ``fields`` (None: of every field)."""
        named = list(ways_of) if fields is None else [f for f in dict.fromkeys(fields) if f in ways_of]
        general = [advice or ASK_FOR_LESS] if fields is None or any(f not in ways_of for f in fields) else []
        way_on = " ".join([*general, *dict.fromkeys(ways_of[f] for f in named)])
        return " ".join(part for part in (own, CUT_NOTE.format(what=what, advice=way_on)) if part)

    cut["note"] = note("-" * WHAT_BYTES, None)  # as long as the final note may be: the loop cuts to the bound itself
    lists: dict[str, tuple[int, int]] = {}  # each list cut: (items kept, items it had before any cut)
    texts: dict[str, tuple[int, int]] = {}  # each text shortened: where -> (characters kept, characters it had)
    long_text = budget // 4  # a text longer than this is shortened before any list loses an item
    while json_bytes(cut) > budget:
        text = max(_texts(cut), key=lambda found: json_bytes(found[3]), default=None)
        largest = max(_lists(cut), key=lambda found: json_bytes(found[1]), default=None)
        shorten = text is not None and json_bytes(text[3]) > long_text and (
            largest is None or not largest[1] or _keeps_more(cut, text, largest[0], budget, long_text))
        if not shorten and largest is not None and largest[1]:
            name, items = largest
            keep = min(leading_items_within(cut, items, budget), len(items) - 1)  # at least one goes each turn
            lists[name] = (keep, lists.get(name, (0, len(items)))[1])
            del items[keep:]
            continue
        if text is None or not text[3]:
            break
        where, holder, slot, value = text
        over = json_bytes(cut) - budget
        kept = text_within(value, max(json_bytes(value) - over, long_text if shorten else 2))
        holder[slot] = kept
        texts[where] = (len(kept), texts.get(where, (0, len(value)))[1])  # shortened twice: counted from the first
    said = [f"the first {keep} of {total} items of {name}" for name, (keep, total) in lists.items()] + [
        f"the first {kept:,} of {total:,} characters of {where}" for where, (kept, total) in texts.items()
        if not _dropped(where, lists)]  # a text shortened, then dropped with its item, is not named
    what = ", ".join(said[:3]) + (f" and {len(said) - 3} more cuts" if len(said) > 3 else "")
    what = what or "nothing could be cut"
    if json_bytes(what) > WHAT_BYTES:  # names from the data can be long: never longer than the room kept
        what = text_within(what, WHAT_BYTES - len(" …")) + "…"
    cut["note"] = note(what, [field_of(where) for where in [*lists, *texts] if not _dropped(where, lists)])
    return cut


def field_of(where: str) -> str:
    """The top-level field a cut is in: ``results`` for ``results[3].content``, ``parent`` for ``parent.title``."""
    return re.split(r"[.\[]", where, maxsplit=1)[0]


def _dropped(where: str, lists: dict[str, tuple[int, int]]) -> bool:
    """Whether the text at ``where`` (``results[5].content``) was in an item a list cut dropped."""
    for name, (keep, _) in lists.items():
        head = f"{name}[" if name != "the answer" else "["
        if where.startswith(head):
            index = where[len(head):].split("]", 1)[0]
            if index.isdigit() and int(index) >= keep:
                return True
    return False


def _keeps_more(cut: dict[str, Any], text: tuple[str, Any, Any, str], name: str, budget: int,
                long_text: int) -> bool:
    """Whether shortening ``text`` (to ``long_text`` at most) lets more of the list ``name`` keep its place than
    dropping the list's tail does: one 90,000-character memory at the top of a recall is shortened, and twelve
    of 9,000 each are dropped whole, three kept entire (shortening each would keep three, shortened)."""
    _, holder, slot, value = text
    before = leading_items_within(cut, dict(_lists(cut))[name], budget)
    if before == 0:
        return True
    holder[slot] = text_within(value, max(json_bytes(value) - (json_bytes(cut) - budget), long_text))
    try:
        return leading_items_within(cut, dict(_lists(cut))[name], budget) > before
    finally:
        holder[slot] = value


def with_cut_fields(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """A tool's output schema with the optional ``truncated`` and ``note`` a cut answer carries."""
    if schema is None or "properties" not in schema:
        return schema
    properties = dict(schema["properties"])
    properties.setdefault("truncated", {"type": "boolean", "description": (
        f"True when this answer is not all there is (it was cut to stay within {ANSWER_BYTES_MAX // 1024} KB "
        "of JSON, or the tool says more follow); the note says how to get the rest.")})
    properties.setdefault("note", {"type": "string", "description": "What was left out and how to get it."})
    return {**schema, "properties": properties}


def _lists(value: Any, name: str = "") -> Iterator[tuple[str, list[Any]]]:
    """Every list inside ``value``, named by where it is (``documents``, ``results[3].lines``)."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _lists(child, f"{name}.{key}" if name else key)
    elif isinstance(value, list):
        yield name or "the answer", value
        for index, child in enumerate(value):
            yield from _lists(child, f"{name}[{index}]")


def _texts(value: Any, name: str = "") -> Iterator[tuple[str, Any, Any, str]]:
    """Every string inside ``value`` (but the answer's own note) with where it is (``results[0].content``),
    what holds it and its key or index in that: (where, holder, slot, text)."""
    if isinstance(value, dict):
        for key, child in value.items():
            where = f"{name}.{key}" if name else key
            if isinstance(child, str):
                if not (not name and key == "note"):
                    yield where, value, key, child
            else:
                yield from _texts(child, where)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            where = f"{name}[{index}]"
            if isinstance(child, str):
                yield where, value, index, child
            else:
                yield from _texts(child, where)
