"""Builds bench/data/faq_pairs.jsonl: question -> answer pairs from public FAQs that Debian installs.

Sources (none written by us; each pair keeps its source): XZ Utils' FAQ (0BSD,
/usr/share/doc/xz-utils/faq.txt.gz), zlib's FAQ (zlib licence, /usr/share/doc/zlib1g-dev/FAQ.gz), Valgrind's FAQ
(GPL-2, /usr/share/doc/valgrind/FAQ.txt.gz) and Git's gitfaq(7) (GPL-2, /usr/share/man/man7/gitfaq.7.gz, as
`man` renders it). The answer becomes a memory; the question is the query. A question that shares words with
its answer is kept (the benchmark reports the word-sharing part apart: no regression on exact terms).

    .venv/bin/python bench/meaning_pairs.py [--out FILE]   # rewrites bench/data/faq_pairs.jsonl (or FILE)
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
from pathlib import Path

OUT = Path(__file__).with_name("data") / "faq_pairs.jsonl"
ANSWER_CHARS = 700


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _gunzip(path: str) -> str:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read()


def xz() -> list[tuple[str, str]]:
    text = _gunzip("/usr/share/doc/xz-utils/faq.txt.gz")
    pairs = re.findall(r"\nQ:\s+(.*?)\n\s*\nA:\s+(.*?)(?=\n\s*\nQ:|\Z)", text, re.S)
    return [(_clean(q), _clean(a)) for q, a in pairs]


def zlib() -> list[tuple[str, str]]:
    text = _gunzip("/usr/share/doc/zlib1g-dev/FAQ.gz")
    pairs = re.findall(r"\n\s*\d+\. (.*?)\n\s*\n(.*?)(?=\n\s*\d+\. |\Z)", text, re.S)
    return [(_clean(q), _clean(a)) for q, a in pairs]


def valgrind() -> list[tuple[str, str]]:
    text = _gunzip("/usr/share/doc/valgrind/FAQ.txt.gz")
    pairs = re.findall(r"\n(\d+\.\d+)\. (.*?\?)\s*\n(.*?)(?=\n-{20,}|\Z)", text, re.S)
    return [(_clean(q), _clean(a)) for _, q, a in pairs]


def gitfaq() -> list[tuple[str, str]]:
    text = subprocess.run(["man", "-P", "cat", "gitfaq"], capture_output=True, text=True,
                          env={"MANWIDTH": "200", "PATH": "/usr/bin:/bin"}).stdout
    pairs = re.findall(r"\n {7}([A-Z][^\n]*\?)\n(.*?)(?=\n {7}[A-Z][^\n]*\?\n|\n[A-Z]{3,}|\Z)", text, re.S)
    return [(_clean(q), _clean(a)) for q, a in pairs]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the pairs go (default {OUT})")
    out: Path = parser.parse_args(argv).out
    rows = []
    for source, pairs in (("xz-utils FAQ", xz()), ("zlib FAQ", zlib()), ("Valgrind FAQ", valgrind()),
                          ("gitfaq(7)", gitfaq())):
        for question, answer in pairs:
            if not 12 <= len(question) <= 300 or len(answer) < 40:
                continue
            rows.append({"source": source, "question": question, "answer": answer[:ANSWER_CHARS]})
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} pairs -> {out}")


if __name__ == "__main__":
    main()
