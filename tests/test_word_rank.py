"""Both backends rank a word search alike: PostgreSQL computes FTS5's bm25 (store/postgres/word_rank.py), so the
same memories and the same query give the same relevance, number for number, on SQLite and on PostgreSQL,
through adds, supersedes, forgets, restores and moves (the totals a trigger keeps on PostgreSQL)."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_cli
from notewell.records.brain import EventRecord, SessionRecord
from notewell.records.memories import MemoryHit, MemoryInput, MemoryQuery
from notewell.services.memory_rank import query_terms, tolerant_terms
from notewell.store import Store, open_store
from notewell.store.postgres.lexemes import Phrase
from notewell.store.postgres.word_rank import MEMORY_FIELDS, ONE_FIELD, Scorer, cover_weights

NOW = "2026-11-29T12:00:00.000000Z"
# A few words most memories hold, some few hold, forms sharing a stem, a hyphenated and a Chinese word
COMMON = ["deploy", "server", "team", "release", "database"]
RARE = ["frankfurt", "postgres", "refund", "offsite", "kubernetes", "ledger", "quorum", "sign-off", "数据库"]
FORMS = ["deploys", "deploying", "deployment", "servers", "released", "releasing"]
FILLER = ["we", "run", "on", "the", "every", "tuesday", "with", "a", "small", "review", "for", "large"]


def _text(rng: random.Random, words: int) -> str:
    pool = COMMON * 6 + RARE + FORMS * 2 + FILLER * 4
    return " ".join(rng.choice(pool) for _ in range(words))


def _memory(i: int, rng: random.Random, project: str) -> MemoryInput:
    content = _text(rng, rng.randint(1, 60))
    return MemoryInput(ref=f"mem_{i:04d}", project=project, author_user_id="u1", author_token_id=None,
                       memory_type="durable", path=rng.choice(["", "ops", "ops/deploy", "finance"]),
                       title=_text(rng, rng.randint(0, 4)), content=content,
                       tags=tuple(rng.sample(COMMON + RARE[:3], rng.randint(0, 2))),
                       content_hash=hashlib.sha256(content.encode()).hexdigest(), created=NOW)


def _queries(rng: random.Random) -> list[str]:
    vocabulary = COMMON + RARE + FORMS + FILLER + ["dep", "relea", "nothing-like-it", "team team", "数据"]
    return [" ".join(rng.sample(vocabulary, rng.randint(1, 4))) for _ in range(60)]


def _answers(store: Store, queries: list[str]) -> list[list[tuple[str, float]]]:
    out = []
    for q in queries:
        terms = query_terms(q)
        for search, asked in ((store.memories.strict, terms), (store.memories.tolerant, tolerant_terms(terms))):
            hits: list[MemoryHit] = search(MemoryQuery(["apollo"], asked, NOW, 20, explain=False))
            out.append([(h.record.ref, h.relevance) for h in hits])
    return out


def _same(sqlite: list[list[tuple[str, float]]], postgres: list[list[tuple[str, float]]], queries: list[str]) -> None:
    assert any(len(a) > 3 for a in sqlite)  # the queries find something to order
    for i, (a, b) in enumerate(zip(sqlite, postgres, strict=True)):
        assert [r for r, _ in a] == [r for r, _ in b], (queries[i // 2], a, b)
        assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-9), (queries[i // 2], a, b)


def test_sqlite_and_postgresql_give_the_same_relevance_through_every_change(pg_url: str, tmp_path: Path) -> None:
    stores = [open_store(str(tmp_path / "index.db")), open_store(pg_url)]
    try:
        for store in stores:
            rng = random.Random(11)
            # another project's memories count in the index's totals, as FTS5 counts them
            for i in range(120):
                store.memories.add(_memory(i, rng, "apollo" if i % 4 else "hermes"))
        queries = _queries(random.Random(5))
        _same(*(_answers(s, queries) for s in stores), queries)
        for store in stores:
            rng = random.Random(12)
            for i in range(1, 120, 7):
                store.memories.forget(f"mem_{i:04d}", "u1", "test", NOW)
            for i in (i for i in range(2, 120, 9) if i % 7 != 1):
                new = _memory(500 + i, rng, "apollo" if i % 4 else "hermes")
                store.memories.add(new, supersedes=f"mem_{i:04d}")
            store.memories.restore("mem_0008", NOW)
            moved = _text(rng, 30)
            store.memories.move("mem_0003", "moved", moved, hashlib.sha256(moved.encode()).hexdigest())
        _same(*(_answers(s, queries) for s in stores), queries)
    finally:
        for store in stores:
            store.close()


def _sessions(store: Store, rng: random.Random) -> None:
    """Sessions of two people, each a prompt and a few events (each a piece of the session index)."""
    for i in range(60):
        user = "u1" if i % 3 else "u2"
        store.brain.add_session(SessionRecord(f"ses_{i:03d}", user, None, "apollo", "claude-code",
                                              _text(rng, rng.randint(1, 12)), None, NOW))
        for j in range(rng.randint(0, 3)):
            store.brain.add_event(EventRecord(f"evt_{i:03d}_{j}", f"ses_{i:03d}", "note", {}, NOW),
                                  _text(rng, rng.randint(1, 40)))


def test_sqlite_and_postgresql_order_a_session_search_alike(pg_url: str, tmp_path: Path) -> None:
    """brain_session_search's words: each session's best piece by bm25, the same number on both backends."""
    stores = [open_store(str(tmp_path / "index.db")), open_store(pg_url)]
    try:
        for store in stores:
            _sessions(store, random.Random(21))
        queries = _queries(random.Random(6))
        answers = [[[(h.session.id, h.relevance) for h in store.brain.search_sessions(
            "u1", ["apollo"], tolerant_terms(query_terms(q)), None, 10)] for q in queries] for store in stores]
        assert sum(len(a) > 3 for a in answers[0]) > 20
        for q, a, b in zip(queries, *answers, strict=True):
            assert [s for s, _ in a] == [s for s, _ in b], (q, a, b)
            assert [r for _, r in a] == pytest.approx([r for _, r in b], rel=1e-9), (q, a, b)
    finally:
        for store in stores:
            store.close()


@given(st.lists(st.text(alphabet="ab'\\ :,1é数", min_size=1, max_size=6), min_size=1, max_size=5, unique=True),
       st.data())
def test_the_lexemes_asked_are_read_back_from_a_tsvector_s_text(lexemes: list[str], data: st.DataObject) -> None:
    """A tsvector's text quotes each lexeme, doubling quotes and backslashes: each asked lexeme (whole, or each
    lexeme a prefix begins) is read back with its positions and weights, and no other (by substring search, or by
    the regular expression where the text holds an escaped character)."""
    places = {lexeme: data.draw(st.lists(st.tuples(st.integers(1, 16383), st.sampled_from("ABD")), min_size=1,
                                         max_size=3, unique_by=lambda p: p[0])) for lexeme in lexemes}
    text = " ".join("'" + lex.replace("\\", "\\\\").replace("'", "''") + "':"
                    + ",".join(f"{p}{'' if w == 'D' else w}" for p, w in at) for lex, at in places.items())
    asked = data.draw(st.sampled_from(lexemes))
    prefix = data.draw(st.booleans())
    found = Scorer([Phrase((asked,), prefix)], MEMORY_FIELDS).lexemes_in(text)
    expected = {lex for lex in lexemes if (lex.startswith(asked) if prefix else lex == asked)}
    assert set(found) == expected
    for lex in expected:
        assert found[lex] == ",".join(f"{p}{'' if w == 'D' else w}" for p, w in places[lex])


def test_a_store_migrated_to_postgresql_ranks_as_its_source(pg_url: str, tmp_path: Path) -> None:
    """`notewell migrate` loads the memories and session pieces with the totals' triggers off and counts them once
    at the end: the migrated store's words rank as the SQLite source's, and keep doing so as memories change."""
    source = tmp_path / "index.db"
    lite = open_store(str(source))
    try:
        rng = random.Random(11)
        for i in range(120):
            lite.memories.add(_memory(i, rng, "apollo" if i % 4 else "hermes"))
        _sessions(lite, random.Random(21))
        lite.memories.forget("mem_0005", "u1", "test", NOW)
    finally:
        lite.close()
    result = run_cli("migrate", "--from", f"sqlite:{source}", "--to", pg_url)
    assert result.exit_code == 0, result.output
    stores = [open_store(str(source)), open_store(pg_url)]
    try:
        queries = _queries(random.Random(5))
        for change in range(2):
            _same(*(_answers(s, queries) for s in stores), queries)
            sessions = [[[h.session.id for h in s.brain.search_sessions(
                "u1", ["apollo"], tolerant_terms(query_terms(q)), None, 10)] for q in queries] for s in stores]
            assert sessions[0] == sessions[1]
            for store in stores:  # the trigger keeps the totals again after the load
                store.memories.forget(f"mem_{10 + change:04d}", "u1", "test", NOW)
                store.memories.add(_memory(900 + change, random.Random(change), "apollo"))
    finally:
        for store in stores:
            store.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet="ab'\\ :é数", min_size=1, max_size=5), min_size=1, max_size=5, unique=True),
       st.data())
def test_postgresql_counts_a_one_token_phrase_s_weighed_instances_as_the_positions_say(
        pg_url: str, lexemes: list[str], data: st.DataObject) -> None:
    """A phrase of one token is counted in SQL (``ts_rank_cd`` of its query, without normalization, over the
    fields' weights scaled to at most 1): the same number as the one read from the tsvector's positions, for a
    whole lexeme and for a prefix, with quotes and backslashes, on both field sets. Positions are unique across
    lexemes, as a text's tokens are."""
    fields = data.draw(st.sampled_from([MEMORY_FIELDS, ONE_FIELD]))
    positions = data.draw(st.lists(st.integers(1, 16383), min_size=len(lexemes), max_size=len(lexemes) * 4,
                                   unique=True))
    owner = [data.draw(st.integers(0, len(lexemes) - 1)) if i >= len(lexemes) else i for i in range(len(positions))]
    letters = sorted(fields)
    places = {lex: [(p, data.draw(st.sampled_from(letters))) for p, o in zip(positions, owner, strict=True) if o == i]
              for i, lex in enumerate(lexemes)}
    text = " ".join("'" + lex.replace("\\", "\\\\").replace("'", "''") + "':"
                    + ",".join(f"{p}{'' if w == 'D' else w}" for p, w in sorted(at)) for lex, at in places.items())
    phrase = Phrase((data.draw(st.sampled_from(lexemes)),), data.draw(st.booleans()))
    with psycopg.connect(pg_url) as conn:
        vector, weighed = conn.execute("SELECT CAST(%s AS tsvector)::text, ts_rank_cd(CAST(%s AS real[]),"
                                       " CAST(%s AS tsvector), CAST(%s AS tsquery), 0)",
                                       (text, cover_weights(fields), text, phrase.tsquery())).fetchone()
    expected = Scorer([phrase], fields).frequencies(vector).get(0, 0.0)
    assert weighed * max(fields.values()) == expected
    assert expected == sum(fields[w] for lex, at in places.items()
                           if (lex.startswith(phrase.tokens[0]) if phrase.prefix else lex == phrase.tokens[0])
                           for _, w in at)
