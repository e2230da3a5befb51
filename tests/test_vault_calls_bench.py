"""bench/vault_calls_bench.py still runs end to end: a real `notewell serve`, one MCP session, ripgrep beside it
(on a tiny corpus: a smoke test, not a timing)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, make_vault
from notewell.config import Settings
from notewell.indexer import sync
from notewell.store.factory import open_store

pytestmark = pytest.mark.usefixtures("rg")  # ripgrep missing is a failure (conftest.rg), never a skip


def load_bench() -> object:
    sys.path.insert(0, str(REPO_ROOT / "bench"))  # its own imports: harness, search_bench
    spec = importlib.util.spec_from_file_location("vault_calls_bench", REPO_ROOT / "bench" / "vault_calls_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_call_of_the_table_is_timed_over_mcp_beside_ripgrep(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    corpus = make_vault(tmp_path, {"copy1/lev.py": "def levenshtein(a, b):\n    return 0  # qz\n",
                                   "zh/ls.txt": "列出目录内容\n中文 文件\n"})
    bench = load_bench()
    db = str(tmp_path / "index.db")
    store = open_store(db)
    try:
        sync(Settings(vault=corpus, db=db, file_types=sys.modules["search_bench"].FILE_TYPES), store)
    finally:
        store.close()
    assert bench.main(["--corpus", str(corpus), "--db", db, "--calls", "2", "--rg-runs", "1"]) == 0  # type: ignore[attr-defined]
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and not line.startswith("| call") and not line.startswith("| ---")}
    assert list(rows) == ["listProjects", "listDocs copy1", "searchKnowledge `qz`", "searchKnowledge `ζq`",
                          "searchKnowledge `中文`", "searchKnowledge `文件`", "searchKnowledge `levenshtein`",
                          "getDocs", "recall"]
    assert all(row[5] == "yes" for row in rows.values())  # every answer complete
    assert all(row[6].strip() for label, row in rows.items() if label.startswith("searchKnowledge"))  # ripgrep's p50
    assert sorted(p.name for p in corpus.rglob("*")) == ["copy1", "lev.py", "ls.txt", "zh"]  # nothing written there


def test_an_empty_store_is_refused_with_the_fix(tmp_path: Path) -> None:
    corpus = make_vault(tmp_path, {"copy1/a.py": "x = 1\n"})
    bench = load_bench()
    with pytest.raises(SystemExit, match="an empty store; index"):
        bench.main(["--corpus", str(corpus), "--db", str(tmp_path / "index.db")])  # type: ignore[attr-defined]
