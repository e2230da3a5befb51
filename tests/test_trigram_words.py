"""The PostgreSQL index's condition (store/postgres/trigram_words.py) against pg_trgm itself: a region
whose text holds a literal always satisfies ``show_trgm(words) @> trigrams`` and ``grams @> short runs
and wide pairs`` (the index never drops a match; for a literal of one or two letters or digits, or of two
characters beyond ASCII, it holds exactly when a word holds the literal), and ``words_sql`` holds when the
spelled literal is in the spelled words: always when a word holds the literal, and rarely when it does not
(a spelled run can begin inside a character's spelling: ":1" is spelled "zbx1", which holds "bx1"), which
the verifier then drops."""

from __future__ import annotations

import psycopg
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


def test_two_characters_beyond_ascii_are_answered_exactly_by_their_pair(pg_url: str) -> None:
    """"中文", "文件": the pair alone is asked (no trigram: asked both, the planner tested the trigrams row by
    row), and it holds exactly when a word holds the two characters together, not wherever 中 stands before
    any such character and 文 anywhere (as the spelled trigrams said)."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        @settings(max_examples=150, deadline=None)
        @given(text=st.text(st.sampled_from("中文件国é a_\n"), max_size=40),
               literal=st.text(st.sampled_from("中文件国é"), min_size=2, max_size=2))
        def check(text: str, literal: str) -> None:
            plan = plain_plan(literal)
            assert plan is not None and index_exact(plan)
            where = index_sql(plan, "w.words", "w.grams")
            assert "show_trgm" not in where[0]
            assert _holds(conn, where, text) == any(literal in word for word in fold(text).split()), (text, literal)

        check()
        assert not _holds(conn, index_sql(plain_plan("中文"), "w.words", "w.grams"), "中国 文")  # type: ignore[arg-type]
        for mixed in ("中", "a中", "中文a", "中 a", "th中文"):  # not two such characters alone: not exact
            plan = plain_plan(mixed)
            assert plan is not None and not index_exact(plan), mixed


def test_pairs_are_asked_beside_no_trigram(pg_url: str) -> None:
    """The wide pairs are asked only when every literal of the plan is made of such characters: beside a
    literal's trigrams the planner could take the pairs' index and compute every named region's trigrams."""
    plans = [plain_plan("中文 系统"), regex_plan(r"中文.*系统"), regex_plan(r"中文|系统"),
             regex_plan(r"中文.*levenshtein")]
    for plan in plans:
        assert plan is not None
        where = index_sql(plan, "w.words", "w.grams")[0]
        assert not ("show_trgm" in where and "grams @>" in where), (plan, where)
    words_only = plain_plan("中文 系统")
    assert words_only is not None and "show_trgm" not in index_sql(words_only, "w.words", "w.grams")[0]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for plan in plans:
            assert plan is not None
            assert _holds(conn, index_sql(plan, "w.words", "w.grams"), "系统 中文 levenshtein"), plan
        assert not _holds(conn, index_sql(words_only, "w.words", "w.grams"), "系中 统文")


def test_short_runs_are_asked_beside_no_trigram(pg_url: str) -> None:
    """A run of one or two letters is never asked of ``grams`` beside another run's trigrams either ("中文 ab",
    "中文.*qz", "中 ab"): given both, the planner took the grams index for "ab" (held by every region) and
    computed each named region's trigrams (750 ms for "一丁 ab" over 3,000 regions of Chinese text, 1.5 s
    for "一丁.*qz"). A plan whose runs are all pairs of wide characters or short runs asks ``grams`` alone."""
    for plan in (plain_plan("中文 ab"), regex_plan(r"中文.*qz"), plain_plan("中 ab"), regex_plan(r"中.*ab"),
                 plain_plan("x. ab")):
        assert plan is not None
        where = index_sql(plan, "w.words", "w.grams")[0]
        assert not ("show_trgm" in where and "grams @>" in where), (plan, where)
    both = plain_plan("中文 ab")
    assert both is not None and "show_trgm" not in index_sql(both, "w.words", "w.grams")[0]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for query, text in (("中文 ab", "ab 中文"), ("中 ab", "中 ab"), ("x. ab", "ab x.")):
            plan = plain_plan(query)
            assert plan is not None and _holds(conn, index_sql(plan, "w.words", "w.grams"), text), query
        assert not _holds(conn, index_sql(both, "w.words", "w.grams"), "中 文 ab")
        assert not _holds(conn, index_sql(both, "w.words", "w.grams"), "中文 a b")
