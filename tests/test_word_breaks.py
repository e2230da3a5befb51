"""Chinese, Japanese and Korean characters as words of their own in the memories' word indexes (word_breaks.py):
the rule, the strict search against a brute force on both backends, and a store indexed before it upgraded."""

from __future__ import annotations

import hashlib
import random
import re

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from notewell.fold import fold
from notewell.records.memories import MemoryInput, MemoryQuery
from notewell.services.memory_rank import one_word, query_terms, tolerant_terms
from notewell.store import Store, open_store
from notewell.word_breaks import CLOSE_PATTERN, has_close_script, pairs, unspaced, word_text

NOW = "2026-11-29T12:00:00.000000Z"
_WORD = re.compile(r"[^\W_]+")


def test_each_close_character_is_spaced_apart_and_other_text_is_kept() -> None:
    assert word_text("数据库是PostgreSQL") == "数 据 库 是 PostgreSQL" == word_text(word_text("数据库是PostgreSQL"))
    assert word_text("plain text, café") == "plain text, café"
    assert unspaced(" 数  据  库 ") == "数据库"
    assert has_close_script("운영") and has_close_script("カタカナ") and not has_close_script("naïve")


def test_a_tolerant_word_is_its_pairs_of_characters() -> None:
    assert pairs("数据库") == ["数据", "据库"]
    assert pairs("库") == ["库"]
    assert pairs("是postgresql的") == ["是", "postgresql", "的"]
    assert pairs("deploy") == ["deploy"]
    assert tolerant_terms(["the", "生产数据库"]) == ["生产", "产数", "数据", "据库"]


def test_a_short_run_is_one_word_and_a_sentence_is_not() -> None:
    assert one_word("数据库") and one_word("deploy")
    assert not one_word("生产数据库在哪里") and not one_word("deploy days")


@given(st.text(alphabet="数据库生产あア한 aZ，-_ßẞ\u0301\u0323eSs", max_size=30))
def test_word_text_is_its_own_fixed_point(text: str) -> None:
    """A merge import reads stored pieces through word_text again: it must change nothing the second time
    (ẞ then a mark composed with the S it became)."""
    assert word_text(word_text(text)) == word_text(text)


@given(st.text(alphabet="数据库生产あア한 aZ，-_", max_size=30))
def test_spacing_makes_each_close_character_a_word_and_keeps_every_other_word(text: str) -> None:
    expected: list[str] = []
    for word in _WORD.findall(text):
        for run in re.findall(f"{CLOSE_PATTERN}+|(?:(?!{CLOSE_PATTERN}).)+", word):
            expected.extend(run if has_close_script(run) else [run])
    assert _WORD.findall(word_text(text)) == expected
    run = "".join(c for c in text if has_close_script(c))
    assert unspaced(word_text(run)) == run


# --- the strict search against a brute force, on both backends -----------------------------------------

_ALPHABET = ["数", "据", "库", "生", "产", "デ", "ー", "タ", "데", "이", "a", "b", "x", " ", "，", "-"]


def _tokens(text: str) -> list[str]:
    return _WORD.findall(fold(word_text(text)))


def _holds(tokens: list[str], wanted: list[str]) -> bool:
    n = len(wanted)
    return any(tokens[i:i + n] == wanted for i in range(len(tokens) - n + 1))


def _memory(i: int, content: str) -> MemoryInput:
    return MemoryInput(ref=f"mem_{i:04d}", project="apollo", author_user_id="u1", author_token_id=None,
                       memory_type="durable", path="", title=f"t{i}", content=content, tags=(),
                       content_hash=hashlib.sha256(content.encode()).hexdigest(), created=NOW)


def test_strict_search_finds_a_run_exactly_where_its_characters_stand_in_order(store_url: str) -> None:
    """A query word of close characters (or mixed with Latin letters) matches the memories whose text holds
    its characters in order with nothing but spaces or punctuation between them; a Latin word stays whole."""
    rng = random.Random(7)
    texts = ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 24))) for _ in range(150)]
    store = open_store(store_url)
    try:
        for i, text in enumerate(texts):
            store.memories.add(_memory(i, text))
        asked = 0
        for _ in range(150):
            source = rng.choice(texts)
            start = rng.randrange(len(source))
            query = source[start:start + rng.randint(1, 4)]
            if not _WORD.search(query):
                continue
            terms = query_terms(query)
            wanted = {f"mem_{i:04d}" for i, text in enumerate(texts)
                      if all(_holds(_tokens(text), _tokens(term)) for term in terms)}
            found = {h.record.ref for h in store.memories.strict(MemoryQuery(["apollo"], terms, NOW, 1000))}
            assert found == wanted, query
            asked += 1
        assert asked > 100
    finally:
        store.close()


# --- a store indexed before the rule, opened by this version ---------------------------------------------

CHINESE = "我们的生产数据库是PostgreSQL，部署在法兰克福。"


def _index_as_before(store: Store, store_url: str) -> None:
    """Index the memories as an older version did (each run one word) and forget that the upgrade ran."""
    if store_url.startswith("postgresql://"):
        with psycopg.connect(store_url, autocommit=True) as conn:
            conn.execute("UPDATE memories SET words = to_tsvector('simple', content),"
                         " stems = to_tsvector('simple', content)")
            conn.execute("DELETE FROM schema_migrations WHERE component = 'word_breaks'")
        return
    conn = store.db.conn  # type: ignore[attr-defined]
    for table in ("memory_words", "memory_stems"):
        conn.execute(f"INSERT INTO {table} ({table}, rowid, title, content, tags, path) SELECT 'delete', id,"
                     " notewell_word_text(title), notewell_word_text(content), notewell_word_text(tags),"
                     " notewell_word_text(path) FROM memories")
        conn.execute(f"INSERT INTO {table} (rowid, title, content, tags, path)"
                     " SELECT id, title, content, tags, path FROM memories")
    conn.execute("DELETE FROM schema_migrations WHERE component = 'word_breaks'")


def test_a_store_indexed_before_finds_its_chinese_memories_once_opened(store_url: str) -> None:
    store = open_store(store_url)
    try:
        store.memories.add(_memory(1, CHINESE))
        store.memories.add(_memory(2, "The deploy runs on Tuesdays."))
        store.memories.add(_memory(3, "Die Hauptstraße ist gesperrt."))
        _index_as_before(store, store_url)
        asked = MemoryQuery(["apollo"], ["数据库"], NOW, 10)
        assert store.memories.strict(asked) == []  # as the older version answered
    finally:
        store.close()
    store = open_store(store_url)
    try:
        assert [h.record.ref for h in store.memories.strict(asked)] == ["mem_0001"]
        assert [h.record.ref for h in store.memories.strict(MemoryQuery(["apollo"], ["deploy"], NOW, 10))] == [
            "mem_0002"]
        assert [h.record.ref for h in store.memories.strict(MemoryQuery(["apollo"], ["hauptstrasse"], NOW, 10))] == [
            "mem_0003"]
        store.memories.forget("mem_0001", "u1", "test", NOW)  # taken out of the index as it was put in again
        assert store.memories.strict(asked) == []
        assert store.memories.tolerant(MemoryQuery(["apollo"], pairs("数据库"), NOW, 10)) == []
    finally:
        store.close()


@pytest.mark.parametrize("query", ["数据库", "PostgreSQL", "法兰克福", "部署 生产"])
def test_both_backends_explain_a_match_in_the_words_as_written(store_url: str, query: str) -> None:
    store = open_store(store_url)
    try:
        store.memories.add(_memory(1, CHINESE))
        hits = store.memories.strict(MemoryQuery(["apollo"], query_terms(query), NOW, 10, explain=True))
        words = dict(hits[0].matched)["content"]
        assert {fold(w) for w in words} == {fold(w) for w in query.split()}
    finally:
        store.close()


@pytest.mark.parametrize(("written", "asked"), [
    ("Die Hauptstraße ist gesperrt.", "Hauptstraße"), ("Die Hauptstraße ist gesperrt.", "hauptstrasse"),
    ("Die HAUPTSTRASSE ist gesperrt.", "Hauptstraße"),
    ("Le résumé est prêt.", "re\u0301sume\u0301"), ("Le re\u0301sume\u0301 est prêt.", "résumé"),
    ("운영 데이터베이스는 준비됨", "\u1103\u1166\u110b\u1175\u1110\u1165"),  # 데이터 typed as its jamo
    ("Η πρωτεΐνη είναι έτοιμη.", "πρωτεΐνη"),  # folding takes ΐ apart again: the query was cut at its mark
])
def test_a_word_is_found_however_its_letters_were_typed(store_url: str, written: str, asked: str) -> None:
    store = open_store(store_url)
    try:
        store.memories.add(_memory(1, written))
        for search in (store.memories.strict, store.memories.tolerant):
            terms = query_terms(asked) if search == store.memories.strict else tolerant_terms(query_terms(asked))
            assert [h.record.ref for h in search(MemoryQuery(["apollo"], terms, NOW, 10))] == ["mem_0001"], search
    finally:
        store.close()
