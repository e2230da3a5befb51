"""Whether two rules say opposite things: the guard that keeps semantic dedup from merging a rule with its opposite.

A sentence model places "Freeze the clock in pricing tests" and "Never freeze the clock in pricing tests" at
cosine 0.98: the words are the same but one. Merged, the correction would reinforce the very rule it was meant
to replace, and the new rule would be lost. So a reworded rule merges only when both say "do" or both say
"don't", neither holds a word whose opposite the other holds in its place ("inside" and "outside", "enable"
and "disable", "before" and "after"), and both are of the same type (services/brain_knowledge.py).

A rule forbids when its head is a negation ("Never ...", "Do not ...", "Don't ...", "Avoid ...", "No ..."), when
a modal or auxiliary is negated anywhere ("must not", "should never", "cannot", "isn't"), or when it holds a
negation of French, German, Spanish, Chinese, Japanese or Korean. A contrast inside a rule that does not
forbid ("Use react-hook-form with zod, not Formik") is not a negation of the rule: it merges with "Build forms
with react-hook-form and zod rather than Formik". A rule read wrongly here is only not merged (a near-copy
is kept), never lost.
"""

from __future__ import annotations

import re

_HEAD = re.compile(r"^\W*(?:never|no|avoid|don'?t|do\s+not|dont|refrain|nie|niemals|kein\w*|vermeide\w*"
                   r"|jamais|ne|n'|évite\w*|evite\w*|nunca|jamás|evita\w*)\b", re.IGNORECASE)
_NEGATED_MODAL = re.compile(
    r"\b(?:must|should|shall|can|could|may|might|will|would|do|does|did|is|are|was|were|need|ought\s+to|has|have)"
    r"\s+(?:not|never)\b|\b(?:mustn|shouldn|shan|can|couldn|mightn|won|wouldn|don|doesn|didn|isn|aren|wasn|weren"
    r"|needn|hasn|haven)'?t\b|\bcannot\b", re.IGNORECASE)
_OTHER_LANGUAGES = re.compile(
    r"\b(?:ne|pas|jamais|nicht|nie|niemals|kein\w*|nunca|jamás)\b|\bn'|[不别勿禁没]|ない|않|말라|금지", re.IGNORECASE)

_OPPOSITES = [("always", "never"), ("enable", "disable"), ("enabled", "disabled"), ("allow", "forbid"),
              ("allow", "deny"), ("allowed", "forbidden"), ("with", "without"), ("inside", "outside"),
              ("include", "exclude"), ("add", "remove"), ("on", "off"), ("true", "false"), ("yes", "no"),
              ("before", "after"), ("first", "last"), ("increase", "decrease"), ("more", "less"),
              ("more", "fewer"), ("above", "below"), ("over", "under"), ("min", "max"), ("minimum", "maximum"),
              ("sync", "async"), ("synchronous", "asynchronous"), ("tabs", "spaces"), ("public", "private"),
              ("keep", "delete"), ("keep", "drop"), ("open", "close"), ("start", "stop"), ("lock", "unlock"),
              ("mandatory", "optional"), ("required", "optional"), ("strict", "lenient"), ("upper", "lower"),
              ("uppercase", "lowercase"), ("ascending", "descending"), ("accept", "reject"), ("pass", "fail"),
              ("local", "remote"), ("dev", "prod"), ("development", "production"), ("staging", "production")]
_OPPOSITE = {pair for a, b in _OPPOSITES for pair in ((a, b), (b, a))}
_WORD = re.compile(r"\w+")


def forbids(rule: str) -> bool:
    """Whether ``rule`` says not to do what it names (see the module's docstring)."""
    return bool(_HEAD.search(rule) or _NEGATED_MODAL.search(rule) or _OTHER_LANGUAGES.search(rule))


def opposed(rule: str, other: str) -> bool:
    """Whether the rules say opposite things: one forbids and the other does not, or a word of one has its
    opposite in the other where the first lacks it."""
    if forbids(rule) != forbids(other):
        return True
    words, others = set(_WORD.findall(rule.casefold())), set(_WORD.findall(other.casefold()))
    return any((a, b) in _OPPOSITE for a in words - others for b in others - words)
