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


@pytest.mark.parametrize(("rule", "other", "trigger", "other_trigger"), [
    ("Freeze the clock", "Don\u2019t freeze the clock", "", ""),  # a typographic apostrophe
    ("Freeze the clock", "Do **not** freeze the clock", "", ""), ("Freeze the clock", "Do _not_ freeze it", "", ""),
    ("Freeze the clock", "Stop freezing the clock", "", ""), ("Freeze the clock", "Freezing it is prohibited", "", ""),
    ("Use a timeout of 30 s", "Use a timeout of 5 s", "", ""),
    ("Run the migrations", "Run the migrations", "on staging", "on production")])
def test_what_a_model_misses_keeps_two_rules_apart(rule: str, other: str, trigger: str, other_trigger: str) -> None:
    assert opposed(rule, other, trigger, other_trigger)


@pytest.mark.parametrize(("rule", "other"), [
    ("Prefer Postgres over SQLite", "Prefer SQLite over Postgres"),
    ("Prefer Postgres over SQLite", "Use SQLite rather than Postgres"),
    ("Put the config over the defaults", "Put the defaults over the config"),
    ("Seed after migrating", "Migrate after seeding"),
    ("Run migrations before deploying", "Deploy before running migrations")])
def test_the_same_things_weighed_the_other_way_round_are_held_apart(rule: str, other: str) -> None:
    assert opposed(rule, other)


@pytest.mark.parametrize(("rule", "other"), [
    ("Prefer pnpm over npm in this repo", "Use pnpm instead of npm here"),
    ("Prefer Postgres over SQLite", "Choose Postgres rather than SQLite for the store"),
    ("Write tests before fixing a bug", "Reproduce a bug with a failing test before you fix it"),
    ("In pricing tests, freeze the clock", "Freeze the clock in pricing tests")])
def test_the_same_things_weighed_the_same_way_are_not_held_apart(rule: str, other: str) -> None:
    assert not opposed(rule, other)


def test_snake_case_and_a_lone_number_do_not_hold_rewordings_apart() -> None:
    assert not opposed("Use snake_case names", "Names are in snake_case")
    assert not opposed("Keep pull requests under 400 lines", "PRs should stay below four hundred changed lines")


@pytest.mark.parametrize("rule", [
    "Never deploy on Fridays", "Do not ship releases on a Friday", "Don't squash commits", "Avoid global state",
    "No force pushes to main", "Pricing tests must not freeze the clock", "Migrations cannot run twice",
    "N'utilisez jamais de tabulations", "Ne déployez pas le vendredi", "Freitags nicht deployen",
    "Keine Tabs verwenden", "周五不要部署", "金曜日にはデプロイしない"])
def test_a_rule_that_forbids(rule: str) -> None:
    assert forbids(rule)


@pytest.mark.parametrize("rule", [
    "Use react-hook-form with zod for forms, not Formik", "Forms use react-hook-form plus zod, never Formik",
    "Notify the on-call engineer", "Keep pull requests under 400 lines",
    "Déployez le mardi", "Immer mit Leerzeichen einrücken", "周二部署"])
def test_a_rule_that_does_not_forbid(rule: str) -> None:
    assert not forbids(rule)


@given(st.text(max_size=80), st.text(max_size=80))
def test_opposed_is_symmetric_and_never_holds_a_rule_against_itself(rule: str, other: str) -> None:
    assert opposed(rule, other) == opposed(other, rule)
    assert not opposed(rule, rule)
