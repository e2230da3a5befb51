"""Words and meaning fused into one relevance, from 0 to 1 (docs/memory.md, "Meaning").

Each candidate comes from the full-text search (its text relevance over the best text match's), from the
vector search (its cosine similarity to the query), or from both:

    meaning   = clip((similarity - SIMILARITY_FLOOR) / (SIMILARITY_FULL - SIMILARITY_FLOOR), 0, 1)
    words     = text relevance / best text relevance of this query   (0 when no word matched)
                x words_trust(similarity, best similarity of the query)
    relevance = MEANING_WEIGHT x meaning + (1 - MEANING_WEIGHT) x words

Without a single vector in the scope (meaning off, or nothing embedded yet), the relevance is the words part
alone, as it was before meaning. The meaning part is calibrated across queries: a similarity of 0.8 or more
counts in full, 0.3 or less not at all, whatever was asked, so a caller can cut on it. The words part counts as
far as the match is one of meaning too (``words_trust``): a memory that shares one word with a question and
little else ("ship" in the memory about shipping labels, 0.31) no longer outranks the one that answers it in
other words (0.52), and one whose meaning is unrelated (WORDS_UNRELATED or less) is left out. A candidate found
by meaning alone is kept only from ``meaning_bar``: MEANING_MIN, and NOISE_MARGIN above the query's similarity to
texts that say nothing (the nearest vectors of an unrelated query are still someone's nearest: "zzz" is at 0.39
from a memory "ok"), and "nothing found" beats a confident wrong answer. A query that is one identifier
(``E4013``, ``Z_FULL_FLUSH``, ``--track-origins``, ``getUserName``, ``README.md``: ``identifier``) gets no
candidate of meaning alone: its neighbours in meaning are other codes and names ("E4013" is at 0.38 from the
memory about E4012), and an agent looking one up wants it or nothing. The weights were chosen on the paraphrase
benchmarks (bench/meaning_bench.py, docs/performance.md) among blends and reciprocal rank fusion (``rrf``, kept
for that comparison): this blend gave the best top-3 without losing a single exact-identifier query that full
text finds.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from notewell.fold import fold
from notewell.store.vector_search import Nearest
from notewell.word_breaks import word_text

SIMILARITY_FLOOR = 0.30
SIMILARITY_FULL = 0.80
MEANING_MIN = 0.35
NOISE_MARGIN = 0.15
MEANING_WEIGHT = 0.6
WORDS_UNRELATED = 0.05
WORDS_TRUSTED = 0.25
LITERAL_ELSE = 0.5  # an identifier looked up: the most a hit holding its words but not it as written counts
RRF_K = 60

# what codes and names have and words do not: an inner underscore, camelCase, a capital then digits (E4013,
# ORA-00942), three digits (404), a leading dash (--track-origins), a dotted extension (README.md, Foo::bar)
_IDENTIFIER = re.compile(r"\S*(?:\w_\w|[a-z][A-Z]|[A-Z]-?\d|\d{3}|::)\S*|--?\w\S*|\S+\.[A-Za-z][A-Za-z0-9]{0,7}")

_WORDS = re.compile(r"[^\W_]+")

T = TypeVar("T")
H = TypeVar("H")


@dataclass(frozen=True)
class Fused(Generic[T, H]):
    item: T
    relevance: float  # 0 to 1, calibrated as the module says
    hit: H | None  # the full-text hit, when words found it
    similarity: float | None  # the cosine similarity, when meaning found it

    @property
    def matched(self) -> list[str]:
        """How it was found: "words", "meaning" or both."""
        return [*(["words"] if self.hit is not None else []),
                *(["meaning"] if self.similarity is not None and self.similarity >= MEANING_MIN else [])]


def identifier(query: str) -> bool:
    """Whether ``query`` is one identifier (see ``_IDENTIFIER``); a word with a hyphen ("sign-in"), a slash
    ("CI/CD") or a digit between letters ("k8s", "i18n") is not one: meaning may still find its neighbours."""
    return _IDENTIFIER.fullmatch(query.strip()) is not None


def identifier_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` as the word index reads them, for telling whether a text holds an identifier:
    accents dropped (NFKD), case folded, any other character a separator ("ORA-00942", "`ora_00942`" and
    "ORA 00942" are the same two words; a code wrapped in backticks or quotes is the code), and a Chinese,
    Japanese or Korean character a word of its own (PostgreSQL in 数据库是PostgreSQL: word_breaks.py)."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", word_text(text)) if not unicodedata.combining(c))
    return tuple(_WORDS.findall(fold(plain)))


def _holds(words: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    """Whether ``wanted`` runs, word after word, somewhere in ``words``."""
    if not wanted:
        return True
    n = len(wanted)
    return any(words[i:i + n] == wanted for i, w in enumerate(words) if w == wanted[0])


def meaning_relevance(similarity: float) -> float:
    return min(1.0, max(0.0, (similarity - SIMILARITY_FLOOR) / (SIMILARITY_FULL - SIMILARITY_FLOOR)))


def words_trust(similarity: float | None, best: float) -> float:
    """How much of a words match counts, from its similarity in meaning to the query: all of it at the best
    similarity of any candidate (``best``; at least WORDS_TRUSTED), none at WORDS_UNRELATED or below, and all of
    it when its similarity is unknown (not embedded yet)."""
    if similarity is None:
        return 1.0
    return min(1.0, max(0.0, (similarity - WORDS_UNRELATED) / (max(WORDS_TRUSTED, best) - WORDS_UNRELATED)))


def meaning_bar(noise: float | None) -> float:
    """The similarity a candidate of meaning alone needs: MEANING_MIN, and NOISE_MARGIN above the query's
    similarity to texts that say nothing (``noise``: MeaningService.noise)."""
    return max(MEANING_MIN, (noise if noise is not None else 0.0) + NOISE_MARGIN)


def fuse(hits: Sequence[H], relevance: Callable[[H], float], item_of: Callable[[H], T],
         near: Sequence[Nearest[T]], key: Callable[[T], Hashable], *, lookup: bool = False,
         exact: str | None = None, text_of: Callable[[H], str] | None = None,
         similar: Mapping[Hashable, float] | None = None, noise: float | None = None) -> list[Fused[T, H]]:
    """The candidates of both searches, each once, with their fused relevance, best first (then by key).
    ``lookup``: the query is one word; when words found it, candidates of meaning alone are left out (a file
    name or an identifier that full text answers has no neighbours worth showing). ``exact``: the query when it
    is one identifier (``identifier``): candidates of meaning alone are left out whatever words found, and so
    are those of words whose text (``text_of``) does not hold the identifier (case folded): the tolerant word
    search found ORA-00942 for ORA-00943 by their shared "ora", and a code looked up wants that code or nothing;
    those that hold its words but not the identifier as written (the word "check" for "--check") come after
    those that do (``_as_written_first``)."""
    if exact and text_of is not None:
        wanted = identifier_words(exact)
        hits = [h for h in hits if _holds(identifier_words(text_of(h)), wanted)]
        words = _as_written_first(hits, relevance, item_of, key, exact, text_of)
    else:
        best = max((relevance(h) for h in hits), default=0.0) or 1.0
        words = {key(item_of(h)): (h, relevance(h) / best) for h in hits}
    if not near:  # meaning off, or nothing in scope embedded yet: words alone, weighed as they always were
        alone = [Fused(item_of(h), round(text, 6), h, None) for h, text in words.values()]
        return sorted(alone, key=lambda f: (-f.relevance, str(key(f.item))))
    similarity = {key(n.item): n for n in near}
    bar, closest = meaning_bar(noise), max(n.similarity for n in near)
    out: list[Fused[T, H]] = []
    for k in [*words, *(k for k in similarity if k not in words)]:
        hit, text = words.get(k, (None, 0.0))
        nearest = similarity.get(k)
        sim = nearest.similarity if nearest is not None else (similar or {}).get(k)
        if hit is not None:
            item = item_of(hit)
            if not (lookup or exact):
                text *= words_trust(sim, closest)
                if not text:  # words found it, but its meaning is unrelated: "set up" and "every up migration"
                    continue
        elif nearest is not None and nearest.similarity >= bar and not (lookup and hits) and not exact:
            item = nearest.item
        else:
            continue
        meaning = meaning_relevance(sim) if sim is not None else 0.0
        out.append(Fused(item, round(MEANING_WEIGHT * meaning + (1 - MEANING_WEIGHT) * text, 6), hit, sim))
    return sorted(out, key=lambda f: (-f.relevance, str(key(f.item))))


def _as_written_first(hits: Sequence[H], relevance: Callable[[H], float], item_of: Callable[[H], T],
                      key: Callable[[T], Hashable], exact: str,
                      text_of: Callable[[H], str]) -> dict[Hashable, tuple[H, float]]:
    """The words part of an identifier's hits: those holding it as written ("--check") from LITERAL_ELSE to 1,
    those holding only its words (the word "check", in many more texts, often shorter: a better full-text
    relevance) below LITERAL_ELSE, each group relative to its best."""
    literal = exact.strip().casefold()
    holds = {key(item_of(h)): literal in text_of(h).casefold() for h in hits}
    best = {group: max((relevance(h) for h in hits if holds[key(item_of(h))] is group), default=0.0) or 1.0
            for group in (True, False)}
    out: dict[Hashable, tuple[H, float]] = {}
    for h in hits:
        k = key(item_of(h))
        share = relevance(h) / best[holds[k]]
        out[k] = (h, LITERAL_ELSE + (1 - LITERAL_ELSE) * share if holds[k] else LITERAL_ELSE * share)
    return out


def rrf(hits: Sequence[H], item_of: Callable[[H], T], near: Sequence[Nearest[T]],
        key: Callable[[T], Hashable]) -> list[Fused[T, H]]:
    """Reciprocal rank fusion of the two lists (each in its own best-first order), normalised to 0..1."""
    scores: dict[Hashable, float] = {}
    found: dict[Hashable, tuple[T, H | None, float | None]] = {}
    for rank, h in enumerate(hits):
        k = key(item_of(h))
        scores[k] = scores.get(k, 0.0) + 1.0 / (RRF_K + rank + 1)
        found[k] = (item_of(h), h, None)
    for rank, n in enumerate(near):
        k = key(n.item)
        scores[k] = scores.get(k, 0.0) + 1.0 / (RRF_K + rank + 1)
        item, hit, _ = found.get(k, (n.item, None, None))
        found[k] = (item, hit, n.similarity)
    top = 2.0 / (RRF_K + 1)
    fused = [Fused(found[k][0], s / top, found[k][1], found[k][2]) for k, s in scores.items()]
    return sorted(fused, key=lambda f: (-f.relevance, str(key(f.item))))
