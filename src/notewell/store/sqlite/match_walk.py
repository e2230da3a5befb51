"""A page of candidates for a literal found nearly everywhere, by walking documents in order a batch at a time.

For a literal with more than ``FEW_MATCHES`` regions ("the", "th", "e") the page comes from the first
documents in (project, path) order. Collecting every match first and filtering the walk by it (``d.id IN
(...)``) cost what all the matches cost: at 1 GB, 46 ms for "the" and 155 ms for "th" (any of 81
trigrams), for a page of 40. Here the documents are taken in batches in order, and FTS5 is asked only
for the region ids between a batch's first and last document id (it seeks to the first and stops after
the last), so a page costs what its batch's part of the index costs. Ids follow the indexer's order,
which is (project, path) order for a build; where they do not, a batch's range only grows wider. A
walk that passes ``WALK_BATCHES`` batches without filling the page gives way (the matches are sparse
in this scope): None, and the caller collects them all after all.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from notewell.records.documents import CandidateDoc
from notewell.store.regions import doc_of, id_range
from notewell.store.sqlite.trigram_shards import match_any_shard, shard_params

WALK_BATCHES = 8
BATCH_PER_PAGE = 2  # a batch holds this many times the page's documents (at least MIN_BATCH)
MIN_BATCH = 64


def walk_matches(conn: sqlite3.Connection, terms: str, where: str, params: list[Any],
                 limit: int) -> list[CandidateDoc] | None:
    """Up to ``limit`` candidates in order in ``where`` (documents ``d``) whose regions match ``terms`` (fewer:
    the scope holds no more); None when ``WALK_BATCHES`` batches did not fill the page."""
    batch = max(MIN_BATCH, limit * BATCH_PER_PAGE)
    found: list[CandidateDoc] = []
    last: tuple[str, str] | None = None
    for _ in range(WALK_BATCHES):
        after, after_params = ("", []) if last is None else (" AND (d.project, d.path) > (?, ?)", list(last))
        docs = conn.execute(f"SELECT d.id, d.project, d.path FROM documents d WHERE {where}{after}"
                            " ORDER BY d.project, d.path LIMIT ?", [*params, *after_params, batch]).fetchall()
        if not docs:
            return found
        regions: dict[int, list[int]] = {}
        low, high = id_range(min(d[0] for d in docs))[0], id_range(max(d[0] for d in docs))[1]
        for (rid,) in conn.execute(match_any_shard(), shard_params(terms, low, high)):
            regions.setdefault(doc_of(rid), []).append(rid)
        for doc_id, project, path in docs:
            if doc_id in regions:
                found.append(CandidateDoc(doc_id, project, path, tuple(regions[doc_id])))
                if len(found) == limit:
                    return found
        last = (docs[-1][1], docs[-1][2])
        if len(docs) < batch:
            return found
    return None
