"""Literals found nearly everywhere, on SQLite: the walk in batches (store/sqlite/match_walk.py) and a common
pair asked for as its two characters (store/sqlite/short_runs.py) give exactly what a scan of every line
gives, page after page and in any scope. Small vaults never reach the real thresholds, so they are
lowered here: every literal counts as common, a batch holds one document, and a walk gives way after
one, two or many batches, to the lookup of every match by id or to the walk of every matching document."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given

from conftest import index_into, make_vault
from notewell.store.sqlite import documents, match_walk, short_runs
from test_search_property import Backend, CaseMode, Vault, check, filtered_pages, scopes, vaults_with_cases


def _sqlite_store(root: Path) -> Iterator[str]:
    yield str(root / "index.db")


SQLITE = Backend(_sqlite_store, 1.0)


@pytest.mark.parametrize(("batches", "many"), [(1, 0), (2, documents.MANY_MATCHES), (50, 0)])
def test_common_literals_page_through_the_walk(batches: int, many: int) -> None:
    @SQLITE.settings(60)
    @given(vault_cases=vaults_with_cases(), scope=scopes())
    def prop(vault_cases: tuple[Vault, list[tuple[str, bool, CaseMode]]],
             scope: tuple[list[str], str, tuple[str, ...]]) -> None:
        with patch.object(documents, "FEW_MATCHES", 0), patch.object(documents, "MANY_MATCHES", many), \
                patch.object(short_runs, "COMMON_PAIR", -1), \
                patch.object(match_walk, "MIN_BATCH", 1), patch.object(match_walk, "BATCH_PER_PAGE", 1), \
                patch.object(match_walk, "WALK_BATCHES", batches):
            check(SQLITE.stores, *vault_cases)
            filtered_pages(SQLITE, vault_cases, scope, 1, False)

    prop()


def test_a_pair_asks_for_the_trigrams_it_starts_unless_it_is_common(tmp_path: Path) -> None:
    indexed = index_into(make_vault(tmp_path, {"p/a.md": "abc abd\nxab\n", "p/b.md": "zab\n"}), tmp_path / "index.db")
    conn = indexed.store.documents.db.conn  # type: ignore[attr-defined]
    # "ab" starts "abc", "abd" and, at the end of a word, "ab " (the space after it)
    assert short_runs.pair_terms(conn, ["ab", "qq"]) == {"ab": '("ab " OR "abc" OR "abd")', "qq": None}
    with patch.object(short_runs, "COMMON_PAIR", 1):  # counted in 2 regions: common now
        assert short_runs.pair_terms(conn, ["ab"]) == {"ab": '(" a " AND " b ")'}
    assert [m.path for m in indexed.search("ab").matches] == ["a.md", "b.md"]
    indexed.runtime.close()
