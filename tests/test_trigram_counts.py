"""The trigram counts (store/sqlite/trigram_counts.py): taken after a build and a large sync, each the
number of regions whose indexed words hold the trigram; a query asks FTS5 for a run's rarest trigrams."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import index_into, make_vault
from notewell.indexer import sync
from notewell.records.documents import Scope
from notewell.search.literals import plain_plan
from notewell.store.regions import unpack
from notewell.store.sqlite.documents import fts_query
from notewell.store.sqlite.trigram_counts import RAREST, rarest


def _counted(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT trigram, regions FROM trigram_counts"))


def _brute_force(db: Path) -> dict[str, int]:
    """Each trigram's number of regions, from the regions' texts (folded words, then their characters each
    between spaces, as the index holds them)."""
    counts: dict[str, int] = {}
    with sqlite3.connect(db) as conn:
        for (body,) in conn.execute("SELECT body FROM document_regions"):
            words = " ".join(dict.fromkeys(unpack(body).decode().casefold().split()))
            indexed = words + " " + " ".join(sorted(set(words) - {" "})) + " "
            grams = {indexed[i : i + 3] for i in range(len(indexed) - 2)}
            for gram in grams:
                counts[gram] = counts.get(gram, 0) + 1
    return counts


def test_counts_after_a_build_and_after_a_large_sync(tmp_path: Path) -> None:
    files = {f"p/n{n}.md": f"alpha beta {n}\nlevenshtein\n" if n % 4 == 0 else f"alpha gamma {n}\n" for n in range(20)}
    vault = make_vault(tmp_path, files)
    indexed = index_into(vault, tmp_path / "index.db")
    assert _counted(tmp_path / "index.db") == _brute_force(tmp_path / "index.db")
    assert _counted(tmp_path / "index.db")["lev"] == 5
    for n in range(0, 20, 2):  # half the documents change: counted again
        (vault / "p" / f"n{n}.md").write_text("levenshtein distance\n", encoding="utf-8")
    sync(indexed.runtime.settings, indexed.store)
    assert _counted(tmp_path / "index.db") == _brute_force(tmp_path / "index.db")
    assert _counted(tmp_path / "index.db")["lev"] == 10
    (vault / "p" / "n1.md").write_text("levenshtein again\n", encoding="utf-8")  # one in twenty: not counted
    sync(indexed.runtime.settings, indexed.store)
    assert _counted(tmp_path / "index.db")["lev"] == 10
    result = indexed.search("levenshtein")  # the drifted count changes no answer
    assert len(result.matches) == 11 and result.candidates == 11
    # both runs of a literal are asked for: no document holds "alpha" beside "levenshtein" any more
    assert indexed.store.documents.candidates(Scope(projects=["p"]), plain_plan("alpha levenshtein")) == []
    indexed.runtime.close()


def test_a_run_asks_for_its_rarest_trigrams() -> None:
    counts = {"lev": 20, "eve": 60_000, "ven": 40_000, "ens": 50_000, "nsh": 1_900, "sht": 790, "hte": 4_700,
              "tei": 3_400, "ein": 20_000}
    assert rarest(["lev", "eve", "ven", "ens", "nsh", "sht", "hte", "tei", "ein"], counts) == ["lev", "sht", "nsh"]
    assert len(rarest(list(counts), counts)) == RAREST
    assert rarest(["new", "lev"], counts) == ["new", "lev"]  # not counted: came after the count, so rare
    assert rarest(["abc", "bcd", "cde", "def"], {}) == ["abc", "bcd", "cde", "def"]  # nothing counted: all
    query = fts_query(plain_plan("levenshtein group"), {**counts, "gro": 5, "rou": 9, "oup": 7})
    assert query == '"lev" AND "sht" AND "nsh" AND "gro" AND "oup" AND "rou"'


def test_a_first_build_merges_its_shards_counts_in_every_script(tmp_path: Path) -> None:
    """The shards' threads count their own trigrams; the merged counts equal a recount for trigrams held by
    one shard only, by both, and in scripts whose UTF-8 takes two, three and four bytes (the merge of the
    shards' sorted counts must agree with SQLite's order, or a trigram would come twice)."""
    lines = ["alpha beta", "Straße größer", "中文文件 系统", "emoji 🙂🙃 text", "alpha 中文 🙂", "ǅ ǆ Ǆ"]
    files = {f"p/n{n}.md": f"{lines[n % len(lines)]} {n}\n{lines[(n * 5) % len(lines)]}\n" for n in range(30)}
    files["p/only-one.md"] = "zyxwvut\n"  # its trigrams in one shard only
    vault = make_vault(tmp_path, files)
    indexed = index_into(vault, tmp_path / "index.db")
    counted = _counted(tmp_path / "index.db")
    assert counted == _brute_force(tmp_path / "index.db")
    assert counted["zyx"] == 1 and counted["中文文"] == 10
    indexed.runtime.close()
