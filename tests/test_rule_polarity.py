"""The guard that keeps semantic dedup from merging a rule with its opposite (services/rule_polarity.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notewell.services.rule_polarity import forbids, opposed

PAIRS = json.loads((Path(__file__).parent.parent / "bench" / "data" / "dedup_pairs.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("rule", "other"), PAIRS["same"])
def test_a_rewording_is_not_taken_for_an_opposite(rule: str, other: str) -> None:
    assert not opposed(rule, other)


@pytest.mark.parametrize(("rule", "other"), PAIRS["opposite"])
def test_a_rule_and_its_opposite_are_held_apart(rule: str, other: str) -> None:
    assert opposed(rule, other)


@pytest.mark.parametrize("rule", [
    "Never deploy on Fridays", "Do not ship releases on a Friday", "Don't squash commits", "Avoid global state",
    "No force pushes to main", "Pricing tests must not freeze the clock", "Migrations cannot run twice",
    "N'utilisez jamais de tabulations", "Ne déployez pas le vendredi", "Freitags nicht deployen",
    "Keine Tabs verwenden", "周五不要部署", "金曜日にはデプロイしない"])
def test_a_rule_that_forbids(rule: str) -> None:
    assert forbids(rule)


@pytest.mark.parametrize("rule", [
    "Use react-hook-form with zod for forms, not Formik", "Forms use react-hook-form plus zod, never Formik",
    "Stop the server before upgrading", "Notify the on-call engineer", "Keep pull requests under 400 lines",
    "Déployez le mardi", "Immer mit Leerzeichen einrücken", "周二部署"])
def test_a_rule_that_does_not_forbid(rule: str) -> None:
    assert not forbids(rule)


@given(st.text(max_size=80), st.text(max_size=80))
def test_opposed_is_symmetric_and_never_holds_a_rule_against_itself(rule: str, other: str) -> None:
    assert opposed(rule, other) == opposed(other, rule)
    assert not opposed(rule, rule)
