"""Query terms and the ranking blend shared by search_memory and recall.

The blend (docs/memory.md explains it):

    score = 0.70 * relevance + 0.20 * recency + 0.10 * kind

- relevance: the full-text relevance (SQLite: -bm25 with weights title 4, content 1, tags 2, path 2)
  divided by the best relevance among the candidates, so the best text match has 1.0;
- recency: 0.5 ** (age_days / 30), 1.0 for a memory written now, 0.5 a month ago;
- kind: 1.0 for a durable memory, 0.5 for a working one (at equal text relevance, settled knowledge
  first).

With prefer_working, kind is 1.0 for working and 0.0 for durable, and a working memory also gets
``+ recency``: a working memory from the last few days scores above any durable one (whose score is at
most 1.0), while an old working memory (recency near 0) falls back among the others.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime

from notewell.errors import InvalidArgument
from notewell.fold import fold
from notewell.records.memories import MemoryRecord
from notewell.search.engine import MAX_QUERY_CHARS
from notewell.services.memory_checks import check_unicode
from notewell.timestamps import parse_iso
from notewell.word_breaks import has_close_script, pairs

RELEVANCE_WEIGHT = 0.70
RECENCY_WEIGHT = 0.20
KIND_WEIGHT = 0.10
HALF_LIFE_DAYS = 30.0
KIND = {"durable": 1.0, "working": 0.5}
KIND_PREFER_WORKING = {"durable": 0.0, "working": 1.0}

MAX_TERMS = 32
ONE_WORD_RUN = 4  # most Chinese words have at most four characters
_WORD = re.compile(r"[^\W_]+")
# Dropped from tolerant queries (never from strict ones) when other terms remain: they match almost
# every memory and only slow the ranking down.
_STOP_WORDS_TEXT = (  # English function words: a question's "does" or "much" matched every memory holding one
    # (not "can", "us", "may", "any", "up", "more": the CAN bus, us-east-1, May, TypeScript's any, compose up)
    "a about after again all also am an and are as at be because been before being both but by could did do "
    "does doing during each for from had has have he her here him his how i if in into is it its just me might "
    "most much must my of on once only or other our ours over own same shall she should so some such than that "
    "the their them then there these they this those through to too under until very was we were what when "
    "where which while who whom why will with would you your"
)
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split(" "))


def query_terms(query: object, field: str = "query", *, most: int | None = MAX_TERMS) -> list[str]:
    """The distinct case-folded words of a query, in order; InvalidArgument when there are none, or more than
    ``most`` (None: any number)."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument(field, "must not be empty; give the words to look for, e.g. \"token fallback\"")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgument(field, f"is {len(query)} characters; keep it to {MAX_QUERY_CHARS} or fewer")
    check_unicode(field, query)
    terms = list(dict.fromkeys(_WORD.findall(folded(query))))
    if not terms:
        raise InvalidArgument(field, "has no words (letters or digits) to match; punctuation alone is not a query")
    if most is not None and len(terms) > most:
        raise InvalidArgument(field, f"has {len(terms)} distinct words; use at most {MAX_TERMS}")
    return terms


def folded(query: str) -> str:
    """The query case-folded and composed: composed before folding (an accent typed as its own mark), and after
    (folding takes some letters apart again: ΐ, ǰ), so that no word is cut at a mark."""
    return unicodedata.normalize("NFC", fold(unicodedata.normalize("NFC", query)))


def tolerant_terms(terms: list[str]) -> list[str]:
    """Stop words dropped (when other words remain), then each word as word_breaks.pairs sees it: a run of
    Chinese, Japanese or Korean characters as its pairs of characters."""
    kept = [t for t in terms if t not in STOP_WORDS] or terms
    return list(dict.fromkeys(piece for t in kept for piece in pairs(t)))


def tolerant_query_terms(query: object, field: str = "query") -> list[str]:
    """The words a tolerant search looks for: stop words dropped, then the first MAX_TERMS kept (a question
    asked in a long sentence is served, not refused: its meaning is taken from the whole of it)."""
    return tolerant_terms(query_terms(query, field, most=None))[:MAX_TERMS]


def age_days(created: str, now: datetime) -> float:
    try:
        at = parse_iso(created)
    except ValueError:
        return HALF_LIFE_DAYS * 10
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return max(0.0, (now - at).total_seconds() / 86400.0)


def recency(created: str, now: datetime) -> float:
    return float(0.5 ** (age_days(created, now) / HALF_LIFE_DAYS))


def blend(relevance: float, created: str, memory_type: str, now: datetime, *, prefer_working: bool = False) -> float:
    """The score of one memory; ``relevance`` is already normalised to (0, 1]."""
    fresh = recency(created, now)
    kinds = KIND_PREFER_WORKING if prefer_working else KIND
    score = RELEVANCE_WEIGHT * relevance + RECENCY_WEIGHT * fresh + KIND_WEIGHT * kinds.get(memory_type, 0.0)
    if prefer_working and memory_type == "working":
        score += fresh
    return score


def record_text(record: MemoryRecord) -> str:
    """What the tolerant word search reads of a memory (and of a taught item, kept as one): its title, text,
    tags and path, as one text."""
    return "\n".join((record.title, record.content, " ".join(record.tags), record.path))


def one_word(query: str) -> bool:
    """Whether ``query`` is a single word, stop words counted ("why does it crash" is not "crash": a lookup of
    one word leaves out what meaning alone finds, a question does not). A run of Chinese, Japanese or Korean
    characters, which has no spaces to count words by, is one word up to ONE_WORD_RUN characters (数据库,
    "database"), a phrase or a question past it (生产数据库在哪里, "where is the production database")."""
    words = _WORD.findall(folded(query))
    return len(words) == 1 and not (has_close_script(words[0]) and len(words[0]) > ONE_WORD_RUN)
