"""The PostgreSQL index's condition (store/postgres/trigram_words.py) against pg_trgm itself: a region
whose text holds a literal always satisfies ``show_trgm(words) @> trigrams`` and ``grams @> short runs``
(the index never drops a match; for a literal of one or two letters or digits, it holds exactly when a
word holds the literal), and ``words_sql`` holds when the spelled literal is in the spelled words: always
when a word holds the literal, and rarely when it does not (a spelled run can begin inside a
character's spelling: ":1" is spelled "zbx1", which holds "bx1"), which the verifier then drops."""

from __future__ import annotations

import psycopg
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.fold import fold
from notewell.search.literals import plain_plan
from notewell.store.postgres.trigram_words import index_sql, index_terms, spelled, words_sql

TEXT = st.text(st.sampled_from("ab_(){}.:é ßÅ\tx1z\n"), min_size=0, max_size=60)


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


def test_a_run_of_one_or_two_letters_is_answered_exactly_by_the_grams(pg_url: str) -> None:
    """"th", "e", "42": no trigram, so the grams alone answer, and they hold exactly when a word holds the run."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        @settings(max_examples=150, deadline=None)
        @given(text=st.text(st.sampled_from("abxyz19 _é\n"), max_size=40),
               literal=st.text(st.sampled_from("abxy19"), min_size=1, max_size=2))
        def check(text: str, literal: str) -> None:
            plan = plain_plan(literal)
            assert plan is not None
            where = index_sql(plan, "w.words", "w.grams")
            assert "show_trgm" not in where[0]
            assert _holds(conn, where, text) == any(literal in word for word in fold(text).split()), (text, literal)

        check()
