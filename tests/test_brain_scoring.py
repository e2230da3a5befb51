"""The brain's formulas (docs/brain.md): session score, confidence, stages, the hint, the bounded injection."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.records.brain import KNOWLEDGE_KINDS, KnowledgeRecord
from notewell.services import brain_injection
from notewell.services.brain_scoring import after_use, ask_back_hint, session_quality, stage
from notewell.services.token_count import count_tokens


def test_session_quality_formula() -> None:
    assert session_quality(True, "up", 3, 3, 2) == 1.0
    assert session_quality(True, None, 0, 0, 0) == 0.68  # 0.5 + 0.1 + 0.075 (nothing injected: reuse 0.5)
    assert session_quality(True, "down", 4, 1, 1) == 0.61  # 0.5 + 0 + 0.15 * 1/4 + 0.15 * 1/2
    assert session_quality(False, "down", 0, 0, 0) == 0.08  # 0.075, half up


def test_confidence_and_stages() -> None:
    assert after_use(1.0, True) == 1.0 and after_use(0.9, True) == 0.91
    assert after_use(after_use(1.0, False), False) == 0.64 and after_use(0.05, False) == 0.05
    assert stage(1, 0, 1.0) == "seed" and stage(2, 1, 0.5) == "knowledge" and stage(2, 2, 1.0) == "seed"
    assert stage(5, 1, 0.95) == "wisdom" and stage(5, 1, 0.85) == "knowledge"


def test_the_hint_is_a_key_each_door_words() -> None:
    assert ask_back_hint(True, None, learnings_given=True) is None
    assert ask_back_hint(True, "up", learnings_given=False) == "capture-rule"
    assert ask_back_hint(False, None, learnings_given=False) == "capture-correction"
    assert ask_back_hint(True, "down", learnings_given=False) == "capture-correction"


def item(n: int, kind: str, rule: str) -> KnowledgeRecord:
    return KnowledgeRecord(ref=f"mem_{n:04d}", brain_project="p", project="p", owner_user_id="u", kind=kind,
                           trigger=f"when case {n}", rule=rule, rationale="", source="s", confidence=1.0,
                           rule_key="", injected_count=0, used_count=0, success_count=0, failure_count=0,
                           created="2026-01-01", last_used_at=None, retired_at=None, tags=())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(KNOWLEDGE_KINDS[:-1]), st.text(min_size=1, max_size=300)), max_size=12),
       st.integers(min_value=20, max_value=400))
def test_injection_stays_within_its_budget(rules: list[tuple[str, str]], budget: int) -> None:
    ranked = [item(n, kind, rule) for n, (kind, rule) in enumerate(rules)]
    built = brain_injection.build(ranked, budget)
    if not built.ids:
        assert built.text == "" and built.tokens == 0
        return
    assert count_tokens(built.text) <= built.tokens <= budget
    assert built.text.startswith("## What I've Learned About You\n")
    order = [r.ref for r in ranked if r.ref in built.ids]
    assert built.ids == order  # rank order kept; each item whole
    for ref in built.ids:
        assert built.text.count(f"[{ref}]") == 1
    sections = [line for line in built.text.splitlines() if line.startswith("### ")]
    titles = [title for title, _ in brain_injection.SECTIONS]
    assert sections == sorted(sections, key=lambda s: titles.index(s[4:]))  # unconditional rules first


def test_a_learning_is_parsed_once_with_the_close_capture_rules() -> None:
    from notewell.services.brain_learnings import Learning, Learnings

    good = {"trigger": " when testing ", "rule": " use pytest ", "extra": "ignored"}
    assert Learning.parse(good) == Learning("when testing", "use pytest", "", "heuristic", "discovery", 0.9)
    assert Learning.parse({**good, "confidence": 3}) == Learning("when testing", "use pytest", "", "heuristic",
                                                                 "discovery", 0.95)  # clamped, not dropped
    assert Learning.parse({**good, "confidence": 0}) is not None
    for bad in ({**good, "confidence": -0.1}, {**good, "confidence": "high"}, {**good, "confidence": True},
                {**good, "confidence": float("nan")}, {**good, "type": "action_item"}, {**good, "source": "x"},
                {**good, "rule": "  "}, {**good, "trigger": 3}, {**good, "rationale": None}, ["not", "an object"],
                {**good, "rule": "a" * 2001}, {**good, "trigger": "a\x00b"}):
        assert Learning.parse(bad) is None, bad
    given_ = Learnings.parse([good, {"rule": "no trigger"}, good, good, good, good, good])
    assert (len(given_.valid), given_.dropped, given_.submitted, given_.truncated) == (4, 1, 7, 2)
    assert Learnings.parse(None) == Learnings((), 0, 0)
