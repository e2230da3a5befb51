"""A document's text in regions: what both stores keep, index and hand to the search, instead of whole texts.

A large document (a changelog, a license collection, release notes) holds nearly every word, so its
trigrams match nearly every rare query: indexed whole, it was a false candidate for most searches and
was read and verified whole (on 220 MB of real documents, 59 candidates and 15.6 MB of text for the
word "kerberos", found in 31 files). Cut into regions of about ``REGION_BYTES`` at line ends, each
region is indexed, read and verified on its own, so a search reads the regions that hold its
trigrams and a false candidate costs one region. A match never spans lines (the matcher's rule), so
cutting at line ends loses none.

A region's id is its document's id shifted left by ``REGION_BITS``, plus its place in the document:
the regions of a document are one range of ids, in order, and a trigram row's id names its document
without a lookup. A document has at most ``MAX_REGIONS`` (32) regions: a text larger than 32 times
``REGION_BYTES`` (512 KB) gets larger regions (64 KB for a 2 MB file, the default limit). Few bits
keep the index small: FTS5 stores each trigram's row ids as varint deltas, and a document's id
shifted left by 20 bits made the trigram index 3.6 times larger than by 5 (0.53x the text against
0.26x, on the 170 MB library corpus). A region's text is stored compressed with LZ4 (about 0.4x for
source code and prose; decompressing runs at gigabytes per second, well ahead of the verifier).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import lz4.block

from notewell.records.documents import CandidateDoc

REGION_BYTES = 16 * 1024
REGION_BITS = 5
MAX_REGIONS = 1 << REGION_BITS
LAST_SEQ = MAX_REGIONS - 1


class Region(NamedTuple):
    seq: int  # its place in the document, from 0
    first_line: int  # the document's line number of its first line, from 1
    data: bytes  # its UTF-8 text, whole lines (the last region may lack the final line end)


def region_id(doc_id: int, seq: int) -> int:
    return (doc_id << REGION_BITS) | seq


def doc_of(region: int) -> int:
    return region >> REGION_BITS


def id_range(doc_id: int) -> tuple[int, int]:
    """The first and last region id a document can have (both included)."""
    return region_id(doc_id, 0), region_id(doc_id, LAST_SEQ)


def region_spans(candidates: Sequence[CandidateDoc]) -> list[tuple[int, int]]:
    """The (first, last) region ids to read for ``candidates``, in order: a candidate's matching regions,
    or its whole range when the index did not name them."""
    spans: list[tuple[int, int]] = []
    for candidate in candidates:
        if candidate.regions is None:
            spans.append(id_range(candidate.id))
        else:
            spans.extend((rid, rid) for rid in candidate.regions)
    return spans


def split(data: bytes) -> list[Region]:
    """``data`` (a document's UTF-8 text) cut after the first line end at or past each region's size.

    A line longer than a region stays whole in one region. An empty text is one empty region, so that
    every document has at least one.
    """
    size = max(REGION_BYTES, -(-len(data) // MAX_REGIONS))
    regions: list[Region] = []
    start, line = 0, 1
    while True:
        cut = data.find(b"\n", start + size - 1) + 1 if start + size < len(data) else 0
        end = cut or len(data)
        regions.append(Region(len(regions), line, data[start:end]))
        if not cut or end == len(data):
            return regions
        line += data.count(b"\n", start, end)
        start = end


class RegionChanges(NamedTuple):
    """What a new text changes of a document's stored regions: a rewrite touches only these."""

    stale: list[Region]  # stored regions to take out of the index and the store (their text changed, or gone)
    fresh: list[Region]  # new regions to store and index (in the places of stale ones, or past the old end)
    moved: list[Region]  # stored regions whose text stays but whose first line is now another


def region_changes(stored: Sequence[Region], new: Sequence[Region]) -> RegionChanges:
    """How ``new`` (a text's regions, from split) differs from ``stored`` (the document's regions as stored).

    A region is kept when the one in its place holds the same bytes: an edit of a long note changes the
    regions it touches (an append its last one), not the other 31, so only those are indexed again. A
    region whose bytes stay but whose first line moved (lines added or removed above it) keeps its words;
    only its line number is rewritten.
    """
    old = {r.seq: r for r in stored}
    stale = [r for r in stored if r.seq >= len(new) or new[r.seq].data != r.data]
    fresh = [r for r in new if r.seq not in old or old[r.seq].data != r.data]
    moved = [r for r in new if r.seq in old and old[r.seq].data == r.data and old[r.seq].first_line != r.first_line]
    return RegionChanges(stale, fresh, moved)


def pack(data: bytes) -> bytes:
    return bytes(lz4.block.compress(data, store_size=True))


def unpack(stored: bytes) -> bytes:
    return bytes(lz4.block.decompress(stored))
