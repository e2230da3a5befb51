"""bench/backends_bench.py still runs end to end on both real stores (a tiny corpus: a smoke test, not a timing)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, make_vault
from notewell.config import Settings
from notewell.indexer import sync
from notewell.store.factory import open_store


def load_bench() -> object:
    sys.path.insert(0, str(REPO_ROOT / "bench"))  # its own import: search_bench
    spec = importlib.util.spec_from_file_location("backends_bench", REPO_ROOT / "bench" / "backends_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def index(corpus: Path, db: str) -> None:
    store = open_store(db)
    try:
        sync(Settings(vault=corpus, db=db, file_types=sys.modules["search_bench"].FILE_TYPES), store)
    finally:
        store.close()


FILES = {"copy1/lev.py": "def levenshtein(a, b):\n    return 0  # qz\n",
         "copy1/cb.py": "def on_callback(x):\n    return x\n# d41d8cd98f00b204e9800998ecf8427e\n",
         "zh/ls.txt": "列出目录内容\n中文 文件\n"}


def test_both_stores_timed_in_turns_with_the_same_answers(tmp_path: Path, pg_url: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    corpus = make_vault(tmp_path, FILES)
    bench = load_bench()
    sqlite_db = str(tmp_path / "index.db")
    index(corpus, sqlite_db)
    index(corpus, pg_url)
    argv = ["--corpus", str(corpus), "--sqlite", sqlite_db, "--pg", pg_url, "--rounds", "2", "--runs", "1"]
    assert bench.main([*argv, "--query", "on_callback"]) == 0  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert "| rare literal `levenshtein` | 1 |" in out
    assert "| CJK word `中文` | 1 |" in out
    assert "| on_callback `on_callback` | 1 |" in out
    assert out.count("x |") == len(sys.modules["search_bench"].QUERIES) + 1  # a ratio for every query


def test_stores_of_different_corpora_are_refused(tmp_path: Path, pg_url: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    corpus = make_vault(tmp_path, FILES)
    bench = load_bench()
    sqlite_db = str(tmp_path / "index.db")
    index(corpus, sqlite_db)  # PostgreSQL's store left empty
    assert bench.main(["--corpus", str(corpus), "--sqlite", sqlite_db, "--pg", pg_url]) == 2  # type: ignore[attr-defined]
    assert "both stores must hold the same corpus" in capsys.readouterr().err
