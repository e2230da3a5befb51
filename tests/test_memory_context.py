"""recall_context: never over max_tokens, never an item cut mid-sentence; the token counter; documents."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import IndexedVault, make_vault
from memory_world import build_world
from notewell.services.context_pack import SHORTENED_MARK, PackItem, pack, render, sentence_ends
from notewell.services.token_count import _PRE_TOKEN, _word_cost, count_tokens

words = st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzéß0123 "), min_size=1, max_size=12)
sentences = st.builds(lambda ws, end: " ".join(ws).strip().capitalize() + end,
                      st.lists(words, min_size=1, max_size=12), st.sampled_from([".", "!", "?", ".\n", "", "。", "？"]))
item_texts = st.builds(lambda ss: " ".join(ss), st.lists(sentences, min_size=1, max_size=8))


@settings(max_examples=100, deadline=None)
@given(st.lists(item_texts, min_size=0, max_size=8), st.integers(min_value=20, max_value=400))
def test_pack_never_exceeds_the_budget_nor_cuts_mid_sentence(texts: list[str], max_tokens: int) -> None:
    items = [PackItem("memory", f"mem_{i}", f"title {i}", "apollo/notes", text, 1.0 - i / 10)
             for i, text in enumerate(texts)]
    result = pack("q", items, max_tokens)
    assert result.tokens_used == count_tokens(result.text) <= max_tokens
    by_ref = {item.ref: item for item in items}
    for packed in result.items:
        item = by_ref[packed.ref]
        if packed.complete:
            assert render(item, item.text) in result.text
        else:  # ended at a sentence boundary of the original text, and said so
            ends = sentence_ends(item.text)
            assert any(render(item, item.text[:end].rstrip() + SHORTENED_MARK) in result.text for end in ends)
    reported = {packed.ref for packed in result.items} | {left.ref for left in result.left_out}
    assert reported == set(by_ref)
    order = [packed.ref for packed in result.items]
    assert order == sorted(order, key=lambda ref: int(ref.split("_")[1]))  # relevance order kept


@settings(deadline=None)
@given(st.text(max_size=300))
def test_counter_sees_every_character(text: str) -> None:
    assert sum(len(m.group()) for m in _PRE_TOKEN.finditer(text)) == len(text)


@settings(deadline=None)
@given(st.text(max_size=120), st.text(max_size=120))
def test_counter_never_counts_a_newline_join_above_its_parts(a: str, b: str) -> None:
    """What lets the packer count items one by one: items are joined with a newline."""
    assert count_tokens(a + "\n" + b) <= count_tokens(a) + count_tokens("\n") + count_tokens(b)


@settings(deadline=None)
@given(st.text(alphabet=st.sampled_from("ab Zé(_-'\t\n.1"), max_size=80) | st.text(max_size=80))
def test_counter_fast_path_counts_as_the_definition(text: str) -> None:
    """count_tokens counts plain ASCII words without _word_cost: the same count as charging every word by it."""
    plain = 0
    for m in _PRE_TOKEN.finditer(text):
        piece = m.group()
        if m.lastgroup == "word":
            plain += _word_cost(piece)
        elif m.lastgroup == "marks":
            plain += max(1, -(-len(piece.strip()) // 2))
        else:
            plain += 1
    assert count_tokens(text) == plain


def test_counter_shapes() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello") == 1
    assert count_tokens("hello world") == 2
    assert count_tokens("2026") == 2  # digit groups of at most three
    assert count_tokens("internationalisation") == 4
    assert count_tokens("naïve") == 2


def test_context_with_documents_and_memories(tmp_path: Path, index_vault: Callable[[Path], IndexedVault]) -> None:
    vault = make_vault(tmp_path, {
        "apollo/plan.md": "# Plan\n\nThe rollout starts with the pilot region.\nThen the rollout reaches every "
                          "region by June.\n\nUnrelated paragraph about budgets.\n",
        "hermes/plan.md": "# Hermes\n\nThe rollout of Hermes is secret.\n",
    })
    indexed = index_vault(vault)
    world = build_world(Path(indexed.db), vault)
    alice = world.user("alice")
    world.service.remember(alice, "Rollout lesson: pilot regions first, then everyone.", project="apollo")
    result = world.service.recall_context(alice, "rollout region", max_tokens=300, include_documents=True)
    kinds = [item.kind for item in result.items]
    assert "memory" in kinds and "document" in kinds
    assert any(item.ref.startswith("apollo/plan.md#L") for item in result.items)
    assert not any(item.ref.startswith("hermes/") for item in result.items)  # alice cannot read hermes
    assert "secret" not in result.text and result.tokens_used <= 300
    small = world.service.recall_context(alice, "rollout region", max_tokens=50, include_documents=True)
    assert small.tokens_used <= 50 and small.left_out
    world.store.close()


def test_a_chinese_question_finds_its_passage(tmp_path: Path, index_vault: Callable[[Path], IndexedVault]) -> None:
    """A run of Chinese is looked up by its pairs of characters (2 each: a Latin word of 2 letters is not)."""
    vault = make_vault(tmp_path, {
        "apollo/部署.md": "# 部署\n\n部署流程：先检查服务器状态，再重启服务。\n\n另一段关于预算的文字。\n",
        "apollo/other.md": "# Other\n\nThe CI of the decision log.\n",
    })
    indexed = index_vault(vault)
    world = build_world(Path(indexed.db), vault)
    alice = world.user("alice")
    result = world.service.recall_context(alice, "部署流程在哪里", max_tokens=300, include_documents=True)
    refs = [item.ref for item in result.items]
    assert refs[0] == "apollo/部署.md#L3-3" and all(ref.startswith("apollo/部署.md#") for ref in refs), refs
    assert not world.service.recall_context(alice, "ci of", max_tokens=300, include_documents=True).items
    world.store.close()


def test_a_word_folding_takes_apart_finds_its_passage(tmp_path: Path,
                                                       index_vault: Callable[[Path], IndexedVault]) -> None:
    """ΐ folds into ι and a mark: the query's words were composed again, the passage's text not, and a passage
    holding πρωτεΐνη scored nothing."""
    vault = make_vault(tmp_path, {"apollo/bio.md": "# Bio\n\nΗ πρωτεΐνη είναι έτοιμη.\n"})
    world = build_world(Path(index_vault(vault).db), vault)
    result = world.service.recall_context(world.user("alice"), "πρωτεΐνη", max_tokens=300, include_documents=True)
    assert [item.ref for item in result.items] == ["apollo/bio.md#L3-3"], result.items
    world.store.close()
