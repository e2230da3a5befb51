"""The PostgreSQL trigram index's condition (store/postgres/trigram_words.py) against pg_trgm itself: a
region whose text holds a literal always satisfies ``show_trgm(words) @> trigrams`` (the index never
drops a match), and ``words_sql`` holds when the spelled literal is in the spelled words: always when a word
holds the literal, and rarely when it does not (a spelled run can begin inside a character's spelling:
":1" is spelled "zbx1", which holds "bx1"), which the verifier then drops."""

from __future__ import annotations

import psycopg
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.fold import fold
from notewell.search.literals import plain_plan
from notewell.store.postgres.trigram_words import index_sql, indexed_words, spelled, words_sql

TEXT = st.text(st.sampled_from("ab_(){}.:é ßÅ\tx1z\n"), min_size=0, max_size=60)


def _holds(conn: psycopg.Connection, where: tuple[str, list[object]], words: str) -> bool:
    row = conn.execute(f"SELECT {where[0]} FROM (SELECT %s::text AS words) w", [*where[1], words]).fetchone()
    return row is not None and bool(row[0])


def test_a_literal_in_the_text_is_never_dropped(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")

        @settings(max_examples=150, deadline=None)
        @given(text=TEXT, start=st.integers(0, 60), length=st.integers(3, 20))
        def check(text: str, start: int, length: int) -> None:
            literal = text[start : start + length]
            plan = plain_plan(literal)
            if plan is None:
                return
            words = indexed_words(text)
            assert _holds(conn, index_sql(plan, "w.words"), words), (text, literal)
            assert _holds(conn, words_sql(plan, "w.words"), words), (text, literal)

        check()


def test_the_word_test_follows_the_spelling_and_the_index_holds_whatever_it_holds(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")

        @settings(max_examples=100, deadline=None)
        @given(text=TEXT, literal=st.text(st.sampled_from("ab_(é.x1"), min_size=3, max_size=6))
        def check(text: str, literal: str) -> None:
            plan = plain_plan(literal)
            assert plan is not None
            words = indexed_words(text)
            in_the_spelling = spelled(fold(literal)) in words
            assert _holds(conn, words_sql(plan, "w.words"), words) == in_the_spelling, (text, literal)
            if any(fold(literal) in word for word in fold(text).split()):
                assert in_the_spelling, (text, literal)
            if in_the_spelling:
                assert _holds(conn, index_sql(plan, "w.words"), words), (text, literal)

        check()
