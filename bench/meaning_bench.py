"""Meaning benchmark: does recall find the answer to a question asked in other words?

    .venv/bin/python bench/meaning_bench.py [--db URL_OR_PATH] [--distractors N] [--set faq|man] [--pages N]
                                            [--pairs N]

The pairs are bench/data/faq_pairs.jsonl (public FAQs, bench/meaning_pairs.py names them), or with --set man the
English manual pages installed in /usr/share/man/man1 (Debian's manpages and the system's own; bench/
model_compare.py's man_pairs): a page's one-line summary ("list directory contents", the command's name taken
out) is the question, the first paragraph of its DESCRIPTION the answer, the first N pages that have both.
Every answer is remembered as one memory (plus N distractor memories from the example vault, default 300), the queue is
embedded, then each question is asked five ways, and the rank of its own answer is scored (top-1, top-3, MRR):

- words:   recall with meaning off (the full-text path alone)
- meaning: the vector search alone (MeaningService.nearest_memories)
- hybrid:  recall as served (services/hybrid.py's calibrated blend)
- rrf:     reciprocal rank fusion of the same two lists, for comparison
- strict:  search_memory (XMemo's strict search, unchanged)

"identifier alone" asks, for each answer holding an identifier no other answer has (Z_FULL_FLUSH, --track-
origins), that identifier alone. "shares words" is the subset whose question has a word of 5+ letters in its
answer (exact-term queries: the hybrid must not lose there). The similarity of each question to its answer, and
to the best wrong memory, is summarised too: it is what the thresholds in services/hybrid.py were fitted on.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from harness import VaultText
from model_compare import man_pairs
from notewell.access.principal import LOCAL_OWNER
from notewell.config import load_settings
from notewell.errors import InvalidArgument
from notewell.runtime import build_runtime
from notewell.services import hybrid
from notewell.services.meaning import embed_all
from notewell.services.memory_rank import tolerant_query_terms
from notewell.store.factory import open_store

PAIRS = Path(__file__).with_name("data") / "faq_pairs.jsonl"
PROJECT = "faq"


def score(ranks: Sequence[int | None]) -> str:
    n = len(ranks)
    if not n:
        return "none asked"
    top1 = sum(1 for r in ranks if r == 1)
    top3 = sum(1 for r in ranks if r is not None and r <= 3)
    mrr = sum(1 / r for r in ranks if r) / n if n else 0.0
    return f"top-1 {top1}/{n} ({100 * top1 / n:.0f}%)  top-3 {top3}/{n} ({100 * top3 / n:.0f}%)  MRR {mrr:.3f}"


def rank_of(refs: Sequence[str], wanted: str) -> int | None:
    return refs.index(wanted) + 1 if wanted in refs else None


def _long_words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]{5,}", text.lower()))


_IDENTIFIER = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b[a-z]+[A-Z][A-Za-z]+\b|--[a-z][a-z-]{3,}")


def _identifier_queries(pairs: Sequence[dict[str, str]], refs: Sequence[str]) -> list[tuple[str, str]]:
    """For each answer holding an identifier (snake_case, camelCase, --an-option) found in no other answer,
    that identifier alone as the query: the exact-term case full text is made for."""
    found = [set(_IDENTIFIER.findall(p["answer"])) for p in pairs]
    counts: dict[str, int] = {}
    for names in found:
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    out = []
    for names, ref in zip(found, refs, strict=True):
        unique = sorted(n for n in names if counts[n] == 1)
        if unique:
            out.append((unique[0], ref))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=None)
    parser.add_argument("--distractors", type=int, default=300)
    parser.add_argument("--set", choices=("faq", "man"), default="faq")
    parser.add_argument("--pages", type=int, default=300, help="--set man: how many manual pages")
    parser.add_argument("--pairs", type=int, default=None, help="--set faq: only the first N pairs (a smoke run)")
    args = parser.parse_args(argv)
    if args.pairs is not None and args.pairs < 1:
        parser.error("--pairs: give 1 or more")
    if args.set == "man":
        pairs = [{"question": q, "answer": a, "source": "man"} for q, a in man_pairs("en", args.pages)]
    else:
        pairs = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()][:args.pairs]
    tmp = tempfile.TemporaryDirectory()
    store = open_store(args.db or str(Path(tmp.name) / "meaning.db"))
    rt = build_runtime(load_settings(tmp.name), store)
    if store.identity.project(PROJECT) is None:
        rt.administration.add_project(LOCAL_OWNER, PROJECT)
    refs = [rt.memory.remember(LOCAL_OWNER, p["answer"], project=PROJECT, path=p["source"].split()[0]).memory.ref
            for p in pairs]
    corpus, rng = VaultText(), random.Random(7)
    for n in range(args.distractors):
        rt.memory.remember(LOCAL_OWNER, " ".join(rng.sample(corpus.sentences, 2)) + f" ({n})", project=PROJECT,
                           path="notes")
    taken, seconds = embed_all(rt.meaning)
    print(f"{len(pairs)} questions; {len(pairs) + args.distractors} memories; embedded {taken} in {seconds:.1f} s")

    def words(q: str) -> list[str]:
        rt.meaning.turn_off("benchmark: words only")
        try:
            return [r.memory.ref for r in rt.memory.recall(LOCAL_OWNER, q, limit=10).results]
        finally:
            rt.meaning._off = None

    readable = rt.memory._seen(LOCAL_OWNER)[0]  # the projects whose memories the benchmark's owner reads

    def chosen(q: str):  # type: ignore[no-untyped-def]
        return rt.memory._query(LOCAL_OWNER, readable, tolerant_query_terms(q), None, None, 30)

    def meaning(q: str) -> list[str]:
        return [n.item.ref for n in rt.meaning.nearest_memories(chosen(q), q)][:10]

    def served(q: str) -> list[str]:
        return [r.memory.ref for r in rt.memory.recall(LOCAL_OWNER, q, limit=10).results]

    def rrf(q: str) -> list[str]:
        hits = store.memories.tolerant(chosen(q))
        near = rt.meaning.nearest_memories(chosen(q), q)
        return [f.item.ref for f in hybrid.rrf(hits, lambda h: h.record, near, lambda r: r.ref)][:10]

    def strict(q: str) -> list[str]:
        try:
            return [r.memory.ref for r in rt.memory.search_memory(LOCAL_OWNER, q, limit=10).results]
        except InvalidArgument:  # more words than the strict search takes: it finds nothing
            return []

    ways: dict[str, Callable[[str], list[str]]] = {"words": words, "meaning": meaning, "hybrid": served,
                                                    "rrf": rrf, "strict": strict}
    sharing = [i for i, p in enumerate(pairs) if _long_words(p["question"]) & _long_words(p["answer"])]
    identifiers = _identifier_queries(pairs, refs)
    results = {name: [rank_of(way(p["question"]), ref) for p, ref in zip(pairs, refs, strict=True)]
               for name, way in ways.items()}
    for name, ranks in results.items():
        exact = [rank_of(ways[name](q), ref) for q, ref in identifiers]
        print(f"{name:8} all: {score(ranks)}")
        print(f"{'':8} shares words ({len(sharing)}): {score([ranks[i] for i in sharing])}")
        print(f"{'':8} identifier alone ({len(identifiers)}): {score(exact)}")
    own, wrong = [], []
    for p, ref in zip(pairs, refs, strict=True):
        near = rt.meaning.nearest_memories(chosen(p["question"]), p["question"])
        own += [n.similarity for n in near if n.item.ref == ref]
        wrong += [next((n.similarity for n in near if n.item.ref != ref), 0.0)]
    print(f"similarity question -> own answer: median {statistics.median(own):.3f}, p10 "
          f"{sorted(own)[len(own) // 10]:.3f}; -> best wrong memory: median {statistics.median(wrong):.3f}, p90 "
          f"{sorted(wrong)[9 * len(wrong) // 10]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
