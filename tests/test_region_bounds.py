"""Where each document's regions lie in a search's ascending list of region ids (store/matches.py): the same
as grouping the ids by document one at a time, for any ids."""

from __future__ import annotations

from itertools import groupby

from hypothesis import given
from hypothesis import strategies as st

from notewell.store.matches import region_bounds
from notewell.store.regions import LAST_SEQ, doc_of, region_id


@given(st.sets(st.tuples(st.integers(1, 2**40), st.integers(0, LAST_SEQ)), max_size=200))
def test_each_documents_regions_are_found_where_they_lie(ids: set[tuple[int, int]]) -> None:
    regions = sorted(region_id(doc, seq) for doc, seq in ids)
    expected, start = {}, 0
    for doc, group in groupby(regions, key=doc_of):
        count = len(list(group))
        expected[doc] = (start, start + count)
        start += count
    assert region_bounds(regions) == expected
