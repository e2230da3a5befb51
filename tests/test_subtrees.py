"""Subtrees (the part of a vault a watcher's sync covers) against its plain definition, with Hypothesis."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from notewell.vault.scan import Subtrees

names = st.sampled_from(["a", "b", "ab", "a.md", "b c"])
paths = st.lists(names, min_size=1, max_size=4).map("/".join)


@given(st.lists(paths, min_size=1, max_size=6), paths)
def test_covers_and_leads_to_as_defined(held: list[str], rel: str) -> None:
    only = Subtrees(held)
    assert only.covers(rel) == any(rel == p or rel.startswith(p + "/") for p in held)
    assert only.leads_to(rel) == (only.covers(rel) or any(p.startswith(rel + "/") for p in held))


def test_the_empty_path_is_everything() -> None:
    assert Subtrees([""]).everything and Subtrees().covers("x/y") and not Subtrees(["x"]).everything
