"""How many regions hold a plan's index terms, estimated from what ANALYZE keeps, so that a search for a
literal found nearly everywhere walks the documents in order at once instead of asking the index first.

A GIN index answers with a bitmap only: it reads every posting list the query names, whatever its LIMIT.
For "the" on the 1 GB library corpus that read alone took 15 ms of the search's 20 (PostgreSQL 15, 155,342
regions), only to find more than ``FEW_MATCHES`` regions, after which the walk ran anyway. SQLite counts
its matches cheaply (FTS5 stops at the limit); PostgreSQL's statistics hold, for the index's expression
(``show_trgm(words)``) and for ``grams``, the share of rows holding each of their most common elements
(``pg_stats.most_common_elems``, up to 1,000 of each at the default statistics target). A term not among
them is rarer than every one listed and counts as rare here: the index is asked, as without statistics.
Statistics that are missing or stale only make the choice less sharp, never a result wrong: both ways give
the same documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import psycopg

from notewell.records.plan import And, Lit, Plan
from notewell.store.postgres.trigram_words import grams_asked, in_grams, literals, short_runs, spelled, spelled_trigrams

_STATS = (
    "SELECT s.tablename, s.most_common_elems::text::text[], s.most_common_elem_freqs FROM pg_stats s"
    " WHERE s.schemaname = current_schema() AND s.most_common_elems IS NOT NULL"
    " AND ((s.tablename = 'document_regions_trigrams' AND s.attname = 'show_trgm')"
    " OR (s.tablename = 'document_regions' AND s.attname = 'grams'))"
)
_REGIONS = "SELECT reltuples FROM pg_class WHERE oid = 'document_regions'::regclass"


@dataclass(frozen=True)
class TermShares:
    """The regions counted by the last ANALYZE, and the share of them holding each common term."""

    regions: float
    trigrams: Mapping[str, float]  # show_trgm(words)'s elements
    grams: Mapping[str, float]  # grams' elements (runs of one or two symbols, pairs of wide characters; spelled)

    def regions_holding(self, plan: Plan) -> float:
        """About how many regions the index would name for ``plan`` (index_sql's terms): a literal's rarest
        term bounds it, an AND its rarest part, an OR the sum of its parts; a term not counted as common
        counts as held by none. A plan asked of ``grams`` alone ("中文") counts its pairs, not its trigrams."""
        return self._holding(plan, all(in_grams(lit) for lit in literals(plan)))

    def _holding(self, plan: Plan, grams_only: bool) -> float:
        if isinstance(plan, Lit):
            if grams_only:
                shares = [self.grams.get(term, 0.0) for term in grams_asked(plan)]
            else:
                shares = [self.trigrams.get(t, 0.0) for t in spelled_trigrams(plan)]
                shares += [self.grams.get(spelled(run), 0.0) for run in short_runs(plan)]
            return self.regions * min(shares, default=1.0)  # no term at all: every region is named
        parts = [self._holding(p, grams_only) for p in plan.parts]
        return min(parts) if isinstance(plan, And) else min(self.regions, sum(parts))


def read_term_shares(conn: psycopg.Connection) -> TermShares | None:
    """The statistics as they are now; None before the first ANALYZE of the regions."""
    row = conn.execute(_REGIONS).fetchone()
    if row is None or row[0] is None or row[0] <= 0:
        return None
    common: dict[str, dict[str, float]] = {"document_regions_trigrams": {}, "document_regions": {}}
    for table, elements, freqs in conn.execute(_STATS).fetchall():
        # most_common_elem_freqs ends with three more numbers (the least and most frequent, and nulls)
        common[table] = dict(zip(elements, freqs[: len(elements)], strict=True))
    if not any(common.values()):
        return None
    return TermShares(float(row[0]), common["document_regions_trigrams"], common["document_regions"])
