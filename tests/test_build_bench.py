"""bench/build_bench.py still runs end to end (on a tiny corpus: a smoke test, not a timing)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from conftest import REPO_ROOT, make_vault


def test_build_bench_reports_this_checkout_beside_a_peer(tmp_path: Path) -> None:
    corpus = make_vault(tmp_path, {"alpha/a.py": "def levenshtein(a, b):\n    return 0\n",
                                   "beta/b.txt": "words\n", "beta/skip.md": "not a bench type\n"})
    spec = importlib.util.spec_from_file_location("build_bench", REPO_ROOT / "bench" / "build_bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["build_bench"] = bench
    spec.loader.exec_module(bench)
    out = tmp_path / "report.md"
    assert bench.main(["--corpus", str(corpus), "--runs", "1", "--peer", str(REPO_ROOT / "src"),  # type: ignore[attr-defined]
                       "--out", str(out)]) == 0
    report = out.read_text(encoding="utf-8")
    assert "(2 files, 0.0 MB of text)" in report
    assert "| figure | this checkout | peer | this / peer |" in report
    assert "| MB per CPU second |" in report and "| peak RSS MB |" in report
    assert sorted(p.name for p in corpus.rglob("*")) == ["a.py", "alpha", "b.txt", "beta", "skip.md"]
