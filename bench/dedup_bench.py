"""Semantic dedup threshold: similarities of reworded rules against different-but-related ones.

    .venv/bin/python bench/dedup_bench.py

bench/data/dedup_pairs.json holds 10 pairs of one rule said two ways and 10 pairs of two different rules on
the same subject (written by us). For each threshold the benchmark prints how many rewordings would merge and
how many different rules would be merged wrongly; services/brain_knowledge.py's DEDUP_SIMILARITY is the
lowest threshold that merges no different pair, with a margin (docs/brain.md, "Semantic dedup").
"""

from __future__ import annotations

import json
from pathlib import Path

from notewell.meaning.model import load
from notewell.services.brain_knowledge import DEDUP_SIMILARITY

PAIRS = Path(__file__).with_name("data") / "dedup_pairs.json"


def main() -> int:
    pairs = json.loads(PAIRS.read_text(encoding="utf-8"))
    model = load()

    def similarity(a: str, b: str) -> float:
        x, y = model.embed([a, b])
        return float(x @ y)

    same = sorted(similarity(a, b) for a, b in pairs["same"])
    different = sorted(similarity(a, b) for a, b in pairs["different"])
    print("reworded: ", " ".join(f"{s:.2f}" for s in same))
    print("different:", " ".join(f"{s:.2f}" for s in different))
    for threshold in (0.60, 0.70, 0.75, DEDUP_SIMILARITY, 0.85, 0.90):
        merged = sum(s >= threshold for s in same)
        wrong = sum(s >= threshold for s in different)
        mark = "  <- DEDUP_SIMILARITY" if threshold == DEDUP_SIMILARITY else ""
        print(f"threshold {threshold:.2f}: {merged}/{len(same)} rewordings merged, {wrong}/{len(different)} "
              f"different rules merged{mark}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
