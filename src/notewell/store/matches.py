"""The regions the trigram index named for one search, and their documents in order, kept for its pages.

Both backends look a search's matching regions up once, on its first page, and answer its next pages from
them (``SearchPages``): asking again cost the index lookup and the documents' once more per page (on
PostgreSQL 14 ms of 38 for ``def \\w+_callback\\(`` at 1 GB; on SQLite 7 of 18 ms for ``文件``, whose
second page grouped the same 2,650 regions again). A later page answers from the first page's moment, as
a search should. PostgreSQL keeps the documents in order too (``Matches``); SQLite orders a page's in SQL
(sorting the 1,537 documents of ``中文`` to show 64 took 3.9 ms, the page alone 1.4).

PostgreSQL's are held as flat lists of numbers and strings, and turned into candidates a page at a time:
at 1 GB a regex names 3,444 regions in 2,436 documents, and a tuple and a candidate for each of them made the garbage
collector run during the search (p95 31.8 ms against 28.1 with it off).
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from notewell.records.documents import CandidateDoc, DocKey, Scope
from notewell.records.plan import Plan
from notewell.store.regions import REGION_BITS

Kept = TypeVar("Kept")

# At most this many regions named by the index in all, a search reads them without testing their words first
# (store/postgres/documents.py, ``texts``): a named region nearly always holds the literal then, and testing
# costs more than reading (at 1 GB, "levenshtein": its 60 regions' words hold 1.3 MB, tested in 1.3 ms; 24 of
# the 60 are read for nothing without the test, 0.5 ms). With more, a literal whose trigrams are everywhere
# ("strasse": 5,070 regions named, 18 hold it) still reads only the regions that hold it.
UNTESTED_REGIONS = 256


def region_bounds(regions: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Where each document's regions start and end in ``regions`` (ascending ids), found in one pass over
    them in numpy (a search of 576 candidates bisected twice for each: 1.3 ms; a loop in Python over the
    3,000 regions of ``qz`` at 1 GB: 1.4 ms, this half of it)."""
    if not regions:
        return {}
    docs = np.asarray(regions, dtype=np.int64) >> REGION_BITS
    cuts = np.flatnonzero(docs[1:] != docs[:-1]) + 1
    starts = np.concatenate(([0], cuts)).tolist()
    ends = np.concatenate((cuts, [len(regions)])).tolist()
    return dict(zip(docs[starts].tolist(), zip(starts, ends, strict=True), strict=True))


@dataclass(frozen=True)
class Matches:
    """PostgreSQL's: the regions and their documents in (project, path) order, as flat lists."""

    regions: list[int]  # the region ids, ascending
    ids: list[int]  # the documents in the scope, in (project, path) order
    projects: list[str]
    paths: list[str]
    exact: bool = False  # every named region holds the literal in its words (trigram_words.index_exact)
    _bounds: dict[int, tuple[int, int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_bounds", region_bounds(self.regions))

    def page(self, after: DocKey | None, limit: int | None) -> list[CandidateDoc]:
        """The documents after the key ``after``, at most ``limit``, each naming its regions."""
        start = 0 if after is None else bisect_right(
            range(len(self.ids)), after, key=lambda i: (self.projects[i], self.paths[i]))
        stop = len(self.ids) if limit is None else min(len(self.ids), start + limit)
        few = self.exact or len(self.regions) <= UNTESTED_REGIONS
        page = []
        for i in range(start, stop):
            first, last = self._bounds.get(self.ids[i], (0, 0))
            page.append(CandidateDoc(self.ids[i], self.projects[i], self.paths[i], tuple(self.regions[first:last]),
                                     few))
        return page


class SearchPages(Generic[Kept]):
    """Per thread, the matches of the search it is paging through (None: too many to collect).

    A search is one plan object asked for page after page (the engine makes a plan per search); its first
    page (``after`` None) always looks the matches up again, so a search never sees another one's."""

    def __init__(self) -> None:
        self._local = threading.local()

    def kept(self, plan: Plan, scope: Scope, after: DocKey | None) -> tuple[bool, Kept | None]:
        """Whether this is a later page of the search last kept by this thread, and its matches if so."""
        last: tuple[Plan, Scope, Kept | None] | None = getattr(self._local, "last", None)
        if after is not None and last is not None and last[0] is plan and last[1] == scope:
            return True, last[2]
        return False, None

    def keep(self, plan: Plan, scope: Scope, found: Kept | None) -> None:
        self._local.last = (plan, scope, found)
