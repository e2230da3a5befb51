"""A document's text cut into regions (store/regions.py): nothing lost, whole lines, the right line numbers."""

from __future__ import annotations

from itertools import pairwise
from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from notewell.records.documents import CandidateDoc
from notewell.store import regions
from notewell.store.regions import doc_of, id_range, pack, region_id, region_spans, split, unpack

texts = st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r\n", "é".encode(), b"xyz" * 5]), max_size=60).map(b"".join)


@given(data=texts, size=st.integers(1, 40))
def test_regions_are_the_text_cut_at_line_ends(data: bytes, size: int) -> None:
    with patch.object(regions, "REGION_BYTES", size):
        cut = split(data)
    assert b"".join(r.data for r in cut) == data
    assert [r.seq for r in cut] == list(range(len(cut)))
    for before, region in pairwise(cut):
        assert before.data.endswith(b"\n") and len(before.data) >= size  # whole lines, at least a region's size
        assert region.first_line == before.first_line + before.data.count(b"\n")
    assert cut[0].first_line == 1
    assert all(r.data for r in cut[1:])  # no empty region but an empty text's one


def test_a_long_line_stays_whole_and_an_empty_text_is_one_region() -> None:
    with patch.object(regions, "REGION_BYTES", 4):
        assert [r.data for r in split(b"ab\n" + b"x" * 20 + b"\nend")] == [b"ab\n" + b"x" * 20 + b"\n", b"end"]
    assert split(b"") == [regions.Region(0, 1, b"")]


def test_a_document_has_at_most_max_regions() -> None:
    with patch.object(regions, "REGION_BYTES", 2), patch.object(regions, "MAX_REGIONS", 4):
        cut = split(b"line\n" * 100)
    assert len(cut) <= 4 and b"".join(r.data for r in cut) == b"line\n" * 100


def test_region_ids_name_their_document_in_order() -> None:
    low, high = id_range(7)
    assert low == region_id(7, 0) < region_id(7, 1) < high == region_id(7, regions.LAST_SEQ) < region_id(8, 0)
    assert doc_of(region_id(7, 12)) == 7
    spans = region_spans([CandidateDoc(7, "p", "a.md"), CandidateDoc(9, "p", "b.md", (region_id(9, 2),))])
    assert spans == [id_range(7), (region_id(9, 2), region_id(9, 2))]


@given(data=st.binary(max_size=5000))
def test_packed_text_comes_back_byte_for_byte(data: bytes) -> None:
    assert unpack(pack(data)) == data
