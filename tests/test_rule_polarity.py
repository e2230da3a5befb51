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


# the pairs an outside probe saw merged (cosine 0.84 to 0.88): the new rule was lost
PROBED_OPPOSITES = [
    ("Activer le cache en production", "Désactiver le cache en production"),
    ("Aktiviere den Cache in der Produktion", "Deaktiviere den Cache in der Produktion"),
    ("本番環境ではキャッシュを有効にする", "本番環境ではキャッシュを無効にする"),
    ("השתמש ב-UTC לכל חותמות הזמן", "אל תשתמש ב-UTC לחותמות הזמן"),
    ("Usar UTC para todas las marcas de tiempo", "Desactivar UTC para todas las marcas de tiempo")]


@pytest.mark.parametrize(("rule", "other"), PROBED_OPPOSITES)
def test_opposites_in_other_languages_are_held_apart(rule: str, other: str) -> None:
    assert opposed(rule, other) and opposed(other, rule)


@pytest.mark.parametrize(("rule", "other"), [
    ("Lock the release branch", "Unlock the release branch"), ("Accept valid tokens", "Accept invalid tokens"),
    ("Installer le paquet en CI", "Désinstaller le paquet en CI"), ("Datei verschlüsseln", "Datei entschlüsseln"),
    ("Enable the cache", "Disable the cache"), ("Encode the payload", "Decode the payload"),
    ("Import the fixtures", "Export the fixtures"), ("Upload the artifacts", "Download the artifacts"),
    ("Habilitar el caché", "Deshabilitar el caché"), ("Use the cache", "Deactivate the cache"),
    ("キャッシュは可能", "キャッシュは不可能"), ("キャッシュ有り", "キャッシュ無し"),
    ("外部接続を許可する", "外部接続を禁止する"), ("部署前运行迁移", "部署后运行迁移"),
    ("캐시 활성화", "캐시 비활성화"),
    ("Immer mit Cache testen", "Immer ohne Cache testen")])
def test_a_word_reversed_by_a_prefix_or_its_opposite_holds_two_rules_apart(rule: str, other: str) -> None:
    assert opposed(rule, other)


@pytest.mark.parametrize(("rule", "other"), [
    ("Activer le cache en production", "En production, activer le cache"),
    ("Désactiver le cache en production", "En production, il faut désactiver le cache"),
    ("Disable the cache in production", "Deactivate the cache in production"),
    ("本番環境ではキャッシュを有効にする", "本番ではキャッシュを有効化する"),
    ("本番環境ではキャッシュを無効にする", "本番ではキャッシュを無効化する"),
    ("Usar UTC para todas las marcas de tiempo", "Todas las marcas de tiempo en UTC"),
    ("Fix the bug first", "Debug the issue first"), ("Keep styles inline", "Write styles inline"),
    ("Use no more than three retries", "Retry at most three times")])
def test_rewordings_in_other_languages_are_not_held_apart(rule: str, other: str) -> None:
    assert not opposed(rule, other)


@pytest.mark.parametrize("rule", [
    "אל תשתמש ב-UTC", "לא לפרוס ביום שישי", "En producción no se despliega", "Não use tabs",
    "Gebruik nooit tabs", "Не деплоить в пятницу", "Les tabulations sont interdites", "لا تستخدم التوقيت المحلي",
    "使わずにデプロイする", "キャッシュを使いません", "캐시 없이 배포", "배포하지 마세요", "无需重启服务"])
def test_a_rule_that_forbids_in_other_languages(rule: str) -> None:
    assert forbids(rule)


@pytest.mark.parametrize("rule", ["שלח את הדוח אל הצוות", "Déployer en mai", "Use no more than three retries",
                                  "非常に重要", "无论如何都要测试", "非生产环境", "Run as a non-root user",
                                  "Use non-blocking sockets", "非同期処理を使う", "使用无服务器架构部署",
                                  "Run containers as non\u2011root", "Use non\u2013blocking sockets"])
def test_words_that_only_look_like_a_negation(rule: str) -> None:
    assert not forbids(rule)


@pytest.mark.parametrize(("rule", "opposite"), [
    ("Run the container as a non-root user", "Do not run the container as a non-root user"),
    ("Use non-blocking sockets in the gateway", "Never use non-blocking sockets in the gateway"),
    ("非同期処理を使う", "非同期処理を使わない"), ("使用无服务器架构部署", "不要使用无服务器架构部署")])
def test_a_rule_about_a_negative_noun_and_its_opposite_are_held_apart(rule: str, opposite: str) -> None:
    """non-root, non-blocking, 非同期, 无服务器 read as a negation made both rules forbid, and they merged."""
    assert opposed(rule, opposite)
