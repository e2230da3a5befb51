"""bench/search_bench.py still runs end to end (on a tiny corpus: a smoke test, not a timing)."""

from __future__ import annotations

import gzip
import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, make_vault

pytestmark = pytest.mark.usefixtures("rg")  # ripgrep missing is a failure (conftest.rg), never a skip


def load_bench() -> object:
    spec = importlib.util.spec_from_file_location("search_bench", REPO_ROOT / "bench" / "search_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["search_bench"] = module
    spec.loader.exec_module(module)
    return module


def test_bench_reports_every_query_and_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = make_vault(tmp_path, {
        "alpha/lev.py": "def levenshtein(a, b):\n    return 0\n",
        "alpha/docs/notes.txt": "see Levenshtein distance\nqz\n",
        "beta/cb.py": "def on_callback(x):\n    return x\n# d41d8cd98f00b204e9800998ecf8427e\n",
        "beta/skip.md": "levenshtein in a type the bench does not index\n",
    })
    before = sorted(p.name for p in corpus.rglob("*"))
    out = tmp_path / "report.md"
    bench = load_bench()
    assert bench.main(["--corpus", str(corpus), "--runs", "2", "--rg-runs", "1", "--out", str(out)]) == 0  # type: ignore[attr-defined]
    report = out.read_text(encoding="utf-8")
    assert report in capsys.readouterr().out
    assert "ripgrep and Notewell read the same 3 files." in report
    assert "| rare literal | `levenshtein` | 2 (2) |" in report
    assert "| regex with a literal | `def \\w+_callback\\(` | 1 (1) |" in report
    for target in ("selective substring p95", "regex with a literal p95", "index build", "index size"):
        assert f"| {target} |" in report
    assert sorted(p.name for p in corpus.rglob("*")) == before  # nothing written into the corpus


def test_bench_refuses_a_store_that_is_not_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = make_vault(tmp_path, {"alpha/a.py": "x = 1\n"})
    bench = load_bench()
    db = str(tmp_path / "index.db")
    assert bench.main(["--corpus", str(corpus), "--db", db, "--runs", "1", "--rg-runs", "1"]) == 0  # type: ignore[attr-defined]
    assert bench.main(["--corpus", str(corpus), "--db", db, "--runs", "1", "--rg-runs", "1"]) == 2  # type: ignore[attr-defined]
    assert "already holds documents" in capsys.readouterr().err


def test_scale_mode_reports_both_sizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Scale mode on a tiny stand-in for the standard library: both copies built, queried in children,
    reported side by side (SQLite only here; PostgreSQL is the same code with --pg)."""
    source = make_vault(tmp_path / "src", {
        "lev.py": "def levenshtein(a, b):\n    return 0\n", "sub/cb.py": "def on_callback(x):\n    return x\n",
        "sub/notes.txt": "qz\n", ".hidden.py": "levenshtein\n", "skip.md": "levenshtein\n",
    })
    pages = tmp_path / "man"
    (pages / "zh_CN" / "man1").mkdir(parents=True)
    (pages / "zh_CN" / "man1" / "ls.1.gz").write_bytes(gzip.compress("列出目录内容 中文\n".encode()))
    bench = load_bench()
    monkeypatch.setattr(bench, "scale_source", lambda: source)
    monkeypatch.setattr(bench, "manual_pages", lambda: pages)  # Debian's, where manpages-zh is installed
    out = tmp_path / "scale.md"
    root = tmp_path / "scale"
    assert bench.main(["--scale", str(root), "--backends", "sqlite", "--runs", "1", "--rg-runs", "1",  # type: ignore[attr-defined]
                       "--out", str(out)]) == 0
    report = out.read_text(encoding="utf-8")
    assert "| figure | SQLite 0 MB | SQLite 0 MB |" in report
    assert "| rare literal: files (candidates); rg files | 1 (1); 1 | 6 (6); 6 |" in report
    assert sorted(p.name for p in (root / "stdlib-x6").iterdir() if p.is_dir()) == [
        *(f"copy{n}" for n in range(1, 7)), "zh"]
    assert sorted(p.relative_to(root / "stdlib-x1").as_posix() for p in (root / "stdlib-x1").rglob("*.*")) == [
        ".corpus-complete", "copy1/lev.py", "copy1/sub/cb.py", "copy1/sub/notes.txt", "zh/zh_CN/man1/ls.1.txt"]
    assert "| CJK word: files (candidates); rg files | 1 (1); 1 | 1 (1); 1 |" in report
