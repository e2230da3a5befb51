"""Which literals must every match contain: the candidate plan for a plain query or a regex.

For a regex this is Russ Cox's trigram-index method ("Regular Expression Matching with a Trigram
Index"): walk the parsed pattern, keep for each piece the small set of exact strings it can match
(when there is one), join those sets across concatenation and alternation, and fall back to an
AND/OR of required literals where they grow too large. The pattern is parsed with Python's own regex
parser after RE2 has accepted it, RE2's own spellings respelled first (re2_spelling.py); where that parser
and RE2 read a pattern differently, or it cannot parse it, the plan is "no literal" (a scan): slower, never
wrong.
"""

from __future__ import annotations

import re._constants as C
import re._parser as sre
import warnings
from dataclasses import dataclass
from typing import cast

from notewell.fold import fold
from notewell.records.plan import And, Lit, Or, Plan, simplify
from notewell.search.re2_spelling import python_spelling

MAX_EXACT = 16  # largest set of exact strings kept before turning it into a required-literal plan
MAX_CLASS = 8  # a character class of at most this many characters counts as exact


@dataclass(frozen=True)
class _Info:
    exact: frozenset[str] | None  # every string this piece can match, when small; None when unknown
    plan: Plan | None  # what any match of this piece must contain; None: nothing known


_ANY = _Info(None, None)
_EMPTY = _Info(frozenset({""}), None)


def _folded(literal: str) -> str:
    """The literal as the folded index holds it wherever it stands in a text.

    Folding drops a combining dot above (U+0307) that follows an "i" (see fold.py): in a text, a literal
    that starts with that dot may lose it to the letter before it, so the leading dot is not required.
    """
    return fold(literal).lstrip("\u0307")


def plain_plan(query: str) -> Plan | None:
    return simplify(Lit(_folded(query)))


def regex_plan(pattern: str) -> Plan | None:
    spelled = python_spelling(pattern)  # RE2's own spellings (\x{..}, \Q..\E, \pL, [[:alpha:]]) as Python reads them
    if spelled is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = sre.parse(spelled)
    except (sre.error, RecursionError, OverflowError, ValueError):
        return None
    return simplify(_to_plan(_seq(list(parsed))))


def _exact_plan(exact: frozenset[str]) -> Plan | None:
    if not exact or "" in exact:
        return None
    folded = [Lit(_folded(s)) for s in sorted(exact)]
    return folded[0] if len(folded) == 1 else Or(tuple(folded))


def _to_plan(info: _Info) -> Plan | None:
    parts = [p for p in (info.plan, _exact_plan(info.exact) if info.exact is not None else None) if p]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(tuple(parts))


def _and(a: Plan | None, b: Plan | None) -> Plan | None:
    if a is None:
        return b
    if b is None:
        return a
    return And((a, b))


def _seq(items: list[tuple[object, object]]) -> _Info:
    """Concatenation: cross the exact sets while they stay small, else AND what is required.

    Once a piece breaks the run, the exact set describes only the pieces after it: it still says what a
    match contains, but not what the whole sequence matches, so it is returned as a plan, never as the
    sequence's exact set (an enclosing sequence would glue its neighbours to it: "xy(a+bcd)" does not
    contain "xybcd").
    """
    exact: frozenset[str] | None = frozenset({""})
    plan: Plan | None = None
    whole = True
    for item in items:
        info = _node(item)
        if exact is not None and info.exact is not None and len(exact) * len(info.exact) <= MAX_EXACT:
            exact = frozenset(a + b for a in exact for b in info.exact)
            plan = _and(plan, info.plan)
            continue
        if exact is not None:
            plan = _and(plan, _exact_plan(exact))
        plan = _and(plan, _to_plan(info) if info.exact is not None else info.plan)
        exact = info.exact
        whole = False
    if whole:
        return _Info(exact, plan)
    return _Info(None, _and(plan, _exact_plan(exact)) if exact is not None else plan)


def _node(item: tuple[object, object]) -> _Info:
    op, arg = item
    if op is C.LITERAL:
        return _Info(frozenset({chr(arg)}), None)  # type: ignore[arg-type]
    if op is C.AT:
        return _EMPTY
    if op is C.IN:
        return _class(arg)  # type: ignore[arg-type]
    if op is C.SUBPATTERN:
        return _seq(list(arg[-1]))  # type: ignore[index]
    if op is C.BRANCH:
        return _branch([_seq(list(b)) for b in arg[1]])  # type: ignore[index]
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
        low, high, sub = cast("tuple[int, int, list[tuple[object, object]]]", arg)
        if low == 0:
            return _EMPTY if high == 0 else _ANY
        inner = _seq(list(sub))
        if low == high == 1:
            return inner
        return _Info(None, _to_plan(inner) if inner.exact is not None else inner.plan)
    return _ANY


def _class(items: list[tuple[object, object]]) -> _Info:
    chars: set[str] = set()
    for op, arg in items:
        if op is C.LITERAL:
            chars.add(chr(arg))  # type: ignore[arg-type]
        elif op is C.RANGE and arg[1] - arg[0] < MAX_CLASS:  # type: ignore[index]
            chars.update(chr(c) for c in range(arg[0], arg[1] + 1))  # type: ignore[index]
        else:
            return _ANY
        if len(chars) > MAX_CLASS:
            return _ANY
    return _Info(frozenset(chars), None) if chars else _ANY


def _branch(infos: list[_Info]) -> _Info:
    if all(i.exact is not None for i in infos):
        union = frozenset().union(*(i.exact for i in infos if i.exact is not None))
        if len(union) <= MAX_EXACT:
            plans = [i.plan for i in infos]
            common = plans[0] if plans and all(p == plans[0] for p in plans) else None
            return _Info(union, common)
    branch_plans = [_to_plan(i) for i in infos]
    if any(p is None for p in branch_plans):
        return _ANY
    return _Info(None, Or(tuple(p for p in branch_plans if p is not None)))
