"""How much of a text the model reads (meaning/reading.py), and what meaning does with a text it mostly cannot
read (services/meaning.py): no vector asked for it, none offered for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_world import MemoryWorld, build_world
from notewell.meaning.reading import READ_CHARS, unread_share
from notewell.services.meaning import UNREAD_MAX, UNREADABLE, embed_all, unreadable, words_only

FAQ = Path(__file__).parent.parent / "bench" / "data" / "faq_pairs.jsonl"


@pytest.mark.parametrize(("text", "share"), [
    ("Freeze the clock in pricing tests", 0.0), ("Désactiver le cache en production", 0.0),
    ("Deaktiviere den Cache in der Produktion", 0.0), ("Не деплоить в пятницу", 0.0),
    ("השתמש ב-UTC לכל חותמות הזמן", 0.0), ("캐시 활성화", 0.0),  # Hangul is read as its jamo
    ("泄漏", 1.0), ("配置缓存", 1.0), ("   ", 0.0), ("", 0.0)])
def test_the_share_of_a_text_read_as_unknown(text: str, share: float) -> None:
    assert unread_share(text) == share


@pytest.mark.parametrize("text", ["部署前必须运行数据库迁移", "部署前必须运行单元测试", "部署前必须运行集成测试",
                                  "修复内存泄漏", "迁移", "缓存", "泄漏", "When 部署时: 部署前必须运行数据库迁移"])
def test_most_chinese_is_unreadable(text: str) -> None:
    assert unreadable(text)


@pytest.mark.parametrize("text", ["本番環境ではキャッシュを有効にする", "キャッシュの設定", "金曜日にはデプロイしない",
                                  "我们的生产数据库是PostgreSQL，部署在法兰克福。", "Use Redis 缓存 for sessions",
                                  "데이터베이스 마이그레이션을 실행한다", "We deploy on Tuesdays"])
def test_kana_korean_and_mixed_texts_are_read(text: str) -> None:
    assert not unreadable(text)


def test_every_text_of_the_meaning_bench_is_read_in_full() -> None:
    rows = [json.loads(line) for line in FAQ.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert all(unread_share(r["question"]) == 0.0 and unread_share(r["answer"]) == 0.0 for r in rows)


def test_only_the_beginning_the_model_reads_is_measured() -> None:
    assert unread_share("a" * READ_CHARS + "缓存" * 100) == 0.0
    assert unread_share("缓存" * READ_CHARS + " and then English words") == 1.0


@given(st.text(max_size=60))
def test_the_share_is_a_fraction(text: str) -> None:
    assert 0.0 <= unread_share(text) <= 1.0


def test_the_threshold_is_half() -> None:
    assert UNREAD_MAX == 0.5 and unreadable("周五不要部署")  # 3 of its 6 characters are [UNK]


@pytest.fixture
def world(store_url: str, tmp_path: Path) -> MemoryWorld:
    return build_world(store_url, tmp_path)


def test_an_unreadable_query_has_no_vector_and_says_why(world: MemoryWorld) -> None:
    meaning = world.rt.meaning
    assert meaning.query_vector("迁移") is None and meaning.query_vector("database migration") is not None
    assert words_only(meaning, "迁移") == UNREADABLE and words_only(meaning, "database migration") is None
    assert words_only(meaning) is None
    meaning.turn_off("test: off")
    assert words_only(meaning, "迁移") == "test: off"  # meaning off says so first


def test_an_unreadable_memory_or_session_is_never_offered_by_meaning(world: MemoryWorld) -> None:
    alice = world.user("alice")
    leak = world.service.remember(alice, "修复内存泄漏", project="apollo").memory.ref
    world.service.remember(alice, "We deploy on Tuesdays and Thursdays only", project="apollo")
    embed_all(world.rt.meaning)
    assert world.rt.meaning.state().vectors == world.rt.meaning.state().items  # it keeps its vector
    found = world.service.recall(alice, "キャッシュの設定")  # readable kana; 修复内存泄漏 was at 0.49
    assert leak not in [r.memory.ref for r in found.results] and found.words_only is None
    near = world.service.recall(alice, "which weekdays do we release")
    assert near.results and leak not in [r.memory.ref for r in near.results]
