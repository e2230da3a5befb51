"""The PostgreSQL index's condition (store/postgres/trigram_words.py) against pg_trgm itself: a region
whose text holds a literal always satisfies ``show_trgm(words) @> trigrams`` and ``grams @> short runs
and wide pairs`` (the index never drops a match; for a literal of one or two letters or digits, or of two
characters beyond ASCII, it holds exactly when a word holds the literal), and ``words_sql`` holds when the
spelled literal is in the spelled words: always when a word holds the literal, and rarely when it does not
(a spelled run can begin inside a character's spelling: ":1" is spelled "zbx1", which holds "bx1"), which
the verifier then drops."""

from __future__ import annotations

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.fold import fold
from notewell.search.literals import plain_plan, regex_plan
from notewell.store.postgres.trigram_words import index_exact, index_sql, index_terms, spelled, words_sql

TEXT = st.text(st.sampled_from("ab_(){}.:é ßÅ\tx1z\n中文"), min_size=0, max_size=60)


def _holds(conn: psycopg.Connection, where: tuple[str, list[object]], text: str) -> bool:
    words, grams = index_terms(text)
    row = conn.execute(f'SELECT {where[0]} FROM (SELECT %s::text AS words, %s::text[] COLLATE "C" AS grams) w',
                       [*where[1], words, grams]).fetchone()
    return row is not None and bool(row[0])


def test_a_literal_in_the_text_is_never_dropped(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")

        @settings(max_examples=150, deadline=None)
        @given(text=TEXT, start=st.integers(0, 60), length=st.integers(1, 20))
        def check(text: str, start: int, length: int) -> None:
            literal = text[start : start + length]
            plan = plain_plan(literal)
            if plan is None:
                return
            assert _holds(conn, index_sql(plan, "w.words", "w.grams"), text), (text, literal)
            assert _holds(conn, words_sql(plan, "w.words"), text), (text, literal)

        check()


def test_the_word_test_follows_the_spelling_and_the_index_holds_whatever_it_holds(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")

        @settings(max_examples=100, deadline=None)
        @given(text=TEXT, literal=st.text(st.sampled_from("ab_(é.x1"), min_size=3, max_size=6))
        def check(text: str, literal: str) -> None:
            plan = plain_plan(literal)
            assert plan is not None
            in_the_spelling = spelled(fold(literal)) in index_terms(text)[0]
            assert _holds(conn, words_sql(plan, "w.words"), text) == in_the_spelling, (text, literal)
            if any(fold(literal) in word for word in fold(text).split()):
                assert in_the_spelling, (text, literal)
            if in_the_spelling:
                assert _holds(conn, index_sql(plan, "w.words", "w.grams"), text), (text, literal)

        check()


@pytest.mark.parametrize(("text_chars", "literal_chars"), [
    ("abxyz19 _é\n", "abxy19"),  # "th", "e", "42": no trigram
    ("中文件国é a_\n", "中文件国é"),  # "中文", "文件": two characters beyond ASCII, asked as their pair
])
def test_a_short_run_is_answered_exactly_by_the_grams(pg_url: str, text_chars: str, literal_chars: str) -> None:
    """Runs of one or two letters or digits, and two characters beyond ASCII: the grams alone are asked (no
    trigram; asked both, the planner could take the grams' index and test the trigrams row by row), and they
    hold exactly when a word holds the run, not, for "中文", wherever 中 stands before any such character and
    文 anywhere (as the spelled trigrams said)."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        @settings(max_examples=150, deadline=None)
        @given(text=st.text(st.sampled_from(text_chars), max_size=40),
               literal=st.text(st.sampled_from(literal_chars), min_size=1 if literal_chars.isascii() else 2,
                               max_size=2))
        def check(text: str, literal: str) -> None:
            plan = plain_plan(literal)
            assert plan is not None and index_exact(plan) == (len(literal) == 2)
            where = index_sql(plan, "w.words", "w.grams")
            assert "show_trgm" not in where[0]
            assert _holds(conn, where, text) == any(literal in word for word in fold(text).split()), (text, literal)

        check()


def test_a_pair_of_wide_characters_is_not_any_two_of_them(pg_url: str) -> None:
    """"中文" is not 中 before another such character and 文 elsewhere; a run with anything else is not exact."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert not _holds(conn, index_sql(plain_plan("中文"), "w.words", "w.grams"), "中国 文")  # type: ignore[arg-type]
        for mixed in ("中", "a中", "中文a", "中 a", "th中文"):  # not two such characters alone: not exact
            plan = plain_plan(mixed)
            assert plan is not None and not index_exact(plan), mixed


def test_grams_are_asked_beside_no_trigram(pg_url: str) -> None:
    """Wide pairs and runs of one or two letters are asked of ``grams`` only when every run of the plan is one
    of them ("中文 系统", "中文 ab"): given grams and trigrams, the planner took the grams index (for "ab", held
    by every region) and computed each named region's trigrams (750 ms for "一丁 ab" over 3,000 regions of
    Chinese text, 1.5 s for "一丁.*qz"). Beside trigrams they are left to the words test and the verifier."""
    queries = [("中文 系统", False), (r"中文.*系统", True), (r"中文|系统", True), (r"中文.*levenshtein", True),
               ("中文 ab", False), (r"中文.*qz", True), ("中 ab", False), (r"中.*ab", True), ("x. ab", False)]
    plans = {query: regex_plan(query) if regex else plain_plan(query) for query, regex in queries}
    for plan in plans.values():
        assert plan is not None
        where = index_sql(plan, "w.words", "w.grams")[0]
        assert not ("show_trgm" in where and "grams @>" in where), (plan, where)
    for alone in ("中文 系统", "中文 ab"):
        assert "show_trgm" not in index_sql(plans[alone], "w.words", "w.grams")[0]  # type: ignore[arg-type]
    held = {"中文 系统": "系统 中文", "中文 ab": "ab 中文", "中 ab": "中 ab", "x. ab": "ab x."}
    not_held = [("中文 系统", "系中 统文"), ("中文 ab", "中 文 ab"), ("中文 ab", "中文 a b")]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for query, plan in plans.items():
            text = held.get(query, "系统 中文 levenshtein qz ab")
            assert _holds(conn, index_sql(plan, "w.words", "w.grams"), text), query  # type: ignore[arg-type]
        for query, text in not_held:
            assert not _holds(conn, index_sql(plans[query], "w.words", "w.grams"), text), (query, text)  # type: ignore[arg-type]
