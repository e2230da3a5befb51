"""The estimate PostgreSQL's store chooses its way by (store/postgres/term_shares.py): a literal is held by
at most as many regions as its rarest term, an AND by its rarest part, an OR by the sum of its parts (never
more than every region); a term the statistics do not list counts as held by none. The index is asked for
the trigrams they do not list, or for the three rarest."""

from __future__ import annotations

from notewell.records.plan import And, Lit, Or
from notewell.search.literals import regex_plan
from notewell.store.postgres.term_shares import TermShares
from notewell.store.postgres.trigram_words import asked_trigrams, spelled, spelled_trigrams

SHARES = TermShares(1000.0, {"the": 0.9, "he ": 0.5, "ret": 0.3, "etu": 0.3, "tur": 0.25, "urn": 0.4},
                    {spelled("qz"): 0.02, "ab": 0.6})


def test_a_literal_counts_as_its_rarest_term() -> None:
    assert SHARES.regions_holding(Lit("the")) == 900
    assert SHARES.regions_holding(Lit("return")) == 250
    assert SHARES.regions_holding(Lit("returns")) == 0  # "rns" is not listed: rare
    assert SHARES.regions_holding(Lit("ab")) == 600
    assert SHARES.regions_holding(Lit("  ")) == 1000  # no term at all: the index would name every region


def test_and_takes_its_rarest_part_and_or_adds_its_parts() -> None:
    assert SHARES.regions_holding(And((Lit("the"), Lit("return")))) == 250
    assert SHARES.regions_holding(Or((Lit("return"), Lit("ab")))) == 850
    assert SHARES.regions_holding(Or((Lit("the"), Lit("ab")))) == 1000
    plan = regex_plan(r"the \w+ return")
    assert plan is not None and SHARES.regions_holding(plan) == 250


def test_the_index_is_asked_for_the_trigrams_the_statistics_do_not_call_common() -> None:
    common = SHARES.trigrams
    assert asked_trigrams(Lit("returns"), None) == ["ret", "etu", "tur", "urn", "rns"]  # no statistics: all
    assert asked_trigrams(Lit("levenshtein"), {"ven": 0.3, "ens": 0.3, "eve": 0.4}) == [
        "lev", "nsh", "sht", "hte", "tei", "ein"]
    assert asked_trigrams(Lit("returns"), common) == ["rns", "tur", "ret"]  # one unlisted: the three rarest
    assert asked_trigrams(Lit("the"), common) == ["the"]
    assert set(asked_trigrams(Lit("return"), common)) <= set(spelled_trigrams(Lit("return")))


def test_a_plan_asked_of_grams_alone_counts_as_its_pairs() -> None:
    """"中文" is asked of ``grams`` as its pair (trigram_words.index_sql), so it is held by as many regions as
    its pair, not as the spelled trigrams of 中 and 文, which a vault of Chinese text holds nearly everywhere
    (the estimate named every region, and the search walked the documents in order where the index names few)."""
    shares = TermShares(1000.0, dict.fromkeys(spelled_trigrams(Lit("中文")), 0.9), {spelled("中文"): 0.01, "ab": 0.6})
    assert shares.regions_holding(Lit("中文")) == 10
    assert shares.regions_holding(Lit("文中")) == 0  # its pair is not listed: rare
    assert shares.regions_holding(Lit("中文 ab")) == 10
    assert shares.regions_holding(Or((Lit("中文"), Lit("ab")))) == 610
