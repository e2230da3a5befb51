"""Semantic dedup threshold: similarities of reworded rules against different-but-related ones.

    .venv/bin/python bench/dedup_bench.py

bench/data/dedup_pairs.json holds 10 pairs of one rule said two ways, 10 pairs of two different rules on
the same subject and 10 pairs of a rule and its opposite (written by us); then 10 long rules with one thing
swapped for another (Redis for Memcached) and 10 said with a word or two otherwise (database and DB, s and
seconds, write and add). For each
threshold the benchmark prints how many rewordings would merge and how many different or opposite rules would be
merged wrongly, the opposites with and without the guard of services/rule_polarity.py (which must keep every
rewording), the swapped things with the guard with and without the model's look at the swapped words;
services/brain_knowledge.py's DEDUP_SIMILARITY is the lowest threshold that merges no different pair, with a
margin (docs/brain.md, "Semantic dedup"). A sentence model places a rule and its opposite close together
(they share every word but one), so no threshold separates them: the guard does.
"""

from __future__ import annotations

import json
from pathlib import Path

from notewell.meaning.model import Embedder, load
from notewell.services.brain_knowledge import DEDUP_SIMILARITY
from notewell.services.rule_polarity import SWAPPED_ALIKE, opposed, swapped_words

PAIRS = Path(__file__).with_name("data") / "dedup_pairs.json"


class WordSense:
    """The model's word senses, as services/meaning.py gives them to the guard."""

    def __init__(self, model: Embedder) -> None:
        self.model = model

    def alike(self, text: str, other: str) -> float:
        x, y = self.model.embed([text, other])
        return float(x @ y)

    def one_word(self, word: str) -> bool:
        return self.model.tokenizer.token_to_id(word) is not None


def main() -> int:
    pairs = json.loads(PAIRS.read_text(encoding="utf-8"))
    model = load()

    def similarity(a: str, b: str) -> float:
        x, y = model.embed([a, b])
        return float(x @ y)

    same = sorted(similarity(a, b) for a, b in pairs["same"])
    different = sorted(similarity(a, b) for a, b in pairs["different"])
    opposite = sorted((similarity(a, b), opposed(a, b)) for a, b in pairs["opposite"])
    sense = WordSense(model)
    guarded_same = sum(opposed(a, b, model=sense) for a, b in pairs["same"])
    swapped = sorted((similarity(a, b), opposed(a, b), opposed(a, b, model=sense)) for a, b in pairs["swapped"])
    renamed = sorted((similarity(a, b), opposed(a, b, model=sense)) for a, b in pairs["renamed"])
    for name in ("swapped", "renamed"):
        words = [(" ".join(w.mine), " ".join(w.theirs)) for a, b in pairs[name] if (w := swapped_words(a, b))]
        print(f"{name} words:", ", ".join(f"{x}/{y} {similarity(x, y):.2f}" for x, y in words))
    print("reworded: ", " ".join(f"{s:.2f}" for s in same))
    print("different:", " ".join(f"{s:.2f}" for s in different))
    print("opposite: ", " ".join(f"{s:.2f}" for s, _ in opposite))
    print(f"the guard (rule_polarity.opposed) holds apart {sum(o for _, o in opposite)}/{len(opposite)} opposites "
          f"and {guarded_same}/{len(same)} rewordings")
    print("swapped:  ", " ".join(f"{s:.2f}" for s, _, _ in swapped))
    print("renamed:  ", " ".join(f"{s:.2f}" for s, _ in renamed))
    print(f"the guard holds apart {sum(o for _, o, _ in swapped)}/{len(swapped)} swapped things by the words alone, "
          f"{sum(o for _, _, o in swapped)}/{len(swapped)} with the model's look at the swapped words (below "
          f"{SWAPPED_ALIKE}), and {sum(o for _, o in renamed)}/{len(renamed)} rules said with other words")
    for threshold in (0.60, 0.70, 0.75, DEDUP_SIMILARITY, 0.85, 0.90):
        merged = sum(s >= threshold for s in same)
        wrong = sum(s >= threshold for s in different)
        flipped = sum(s >= threshold for s, _ in opposite)
        guarded = sum(s >= threshold and not o for s, o in opposite)
        mark = "  <- DEDUP_SIMILARITY" if threshold == DEDUP_SIMILARITY else ""
        swaps = sum(s >= threshold and not o for s, _, o in swapped)
        renames = sum(s >= threshold and not o for s, o in renamed)
        print(f"threshold {threshold:.2f}: {merged}/{len(same)} rewordings merged, {wrong}/{len(different)} "
              f"different rules merged, {flipped}/{len(opposite)} opposites merged ({guarded} with the guard), "
              f"{swaps}/{len(swapped)} swapped things and {renames}/{len(renamed)} renamed merged with it{mark}")
    return 1 if guarded_same else 0


if __name__ == "__main__":
    raise SystemExit(main())
