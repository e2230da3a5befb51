"""The multiset rule of a merge for rows without a key (store/shared/merge_match.py): after merging an export
into a store, each row content is held as many times as the larger of the store's and the export's counts of it,
whatever order or batch the rows come in; merging it again loads nothing."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.store import open_store
from notewell.store.shared import merge_match

# a few moments and actions, so that identical rows are common, in the store and in the export alike
ENTRY = st.tuples(st.sampled_from(["2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:01.000000Z"]),
                  st.sampled_from(["memory.remember", "grant.add"]), st.sampled_from(["a", "b", None]))


def rows(entries: list[tuple[str, str, str | None]]) -> list[dict[str, Any]]:
    return [{"id": i, "at": at, "user_id": "local", "token_id": token, "action": action, "target": "t",
             "detail": "{}"} for i, (at, action, token) in enumerate(entries, start=1)]


def held(store_rows: list[tuple[Any, ...]]) -> Counter[tuple[Any, ...]]:
    return Counter(row[1:] for row in store_rows)


@settings(max_examples=40, deadline=None)
@given(st.lists(ENTRY, max_size=12), st.lists(ENTRY, max_size=12), st.integers(1, 4))
def test_a_merge_holds_each_content_as_often_as_the_larger_count(target: list[Any], export: list[Any],
                                                                 batch: int) -> None:
    original = merge_match.BATCH_ROWS
    merge_match.BATCH_ROWS = batch  # identical rows split across batches as well as within one
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = open_store(str(Path(tmp) / "index.db"))
            try:
                audit = next(t for t in store.tables.tables() if t.name == "audit_log")
                with store.tables.loading() as loader:
                    loader.insert(audit, audit.names, rows(target))
                select = "SELECT id, at, action, token_id FROM audit_log ORDER BY id"
                for attempt in range(2):
                    with store.tables.loading(merge=True) as loader:
                        added = loader.insert(audit, audit.names, rows(export))
                    with store.tables.reading() as reader:
                        now = held([tuple(r) for r in reader.conn.execute(select).fetchall()])
                    want = Counter(target) | Counter(export)  # the larger count of each content
                    assert now == want
                    assert added == (sum(want.values()) - len(target) if attempt == 0 else 0)
            finally:
                store.close()
    finally:
        merge_match.BATCH_ROWS = original
