"""listBrains reads the brains of every project the caller may read in one statement, whatever their number,
the documents their brain.md lists, or the projects their parents are declared in: it read each project's brains
whole (every brain.md's list of documents, which it does not show) with a statement a project, and asked again
for each brain whose parent is declared in another project whether the caller may read that project. Its answer
is unchanged (the ids, titles and parents as the caller sees them: a hidden parent read as the nearest enclosing
brain of the brain's own project). On both backends, over MCP."""

from __future__ import annotations

from pathlib import Path

import pytest

from statements_world import Served, world

pytestmark = pytest.mark.anyio


def _brain(folder: Path, title: str, documents: int, parent: str | None = None) -> None:
    """A brain over ``folder`` listing ``documents`` documents of its own (written beside it)."""
    folder.mkdir(parents=True, exist_ok=True)
    links = []
    for i in range(documents):
        (folder / f"doc-{i:03d}.md").write_text(f"# Document {i}\n\nText {i}.\n", encoding="utf-8")
        links.append(f"- [Document {i}](doc-{i:03d}.md)")
    front = f"---\nparent: {parent}\n---\n" if parent else ""
    (folder / "brain.md").write_text(f"{front}# {title}\n\nWhat {title} knows.\n\n" + "\n".join(links) + "\n",
                                     encoding="utf-8")


def small(vault: Path) -> None:
    _brain(vault / "alpha", "Alpha", 1)


def large(vault: Path) -> None:
    """Three readable projects of five brains each, 40 documents a brain; beta's brains declare a parent in alpha
    (readable), gamma's one in a project alice may not read (hidden: the nearest enclosing brain is shown)."""
    _brain(vault / "hidden", "Hidden", 1)
    _brain(vault / "hidden" / "top", "Top", 1)
    for project, parent in (("alpha", None), ("beta", "alpha/b0"), ("gamma", "hidden/top")):
        _brain(vault / project, project.title(), 40)
        for i in range(4):
            _brain(vault / project / f"b{i}", f"{project.title()} {i}", 40, parent)


EXPECTED_LARGE = [
    ("alpha", "Alpha", None), *[(f"alpha/b{i}", f"Alpha {i}", "alpha") for i in range(4)],
    ("beta", "Beta", None), *[(f"beta/b{i}", f"Beta {i}", "alpha/b0") for i in range(4)],
    ("gamma", "Gamma", None), *[(f"gamma/b{i}", f"Gamma {i}", "gamma") for i in range(4)]]


GRANTED = ("beta", "gamma")  # alice's projects in the large vault, with alpha


async def _listed(served: Served, url: str) -> tuple[list[tuple[str, str, str | None]], int]:
    """listBrains' brains (id, title, parent) and the statements its call ran."""
    answer, ran = await served.called(url, "listBrains", {})
    return [(b["id"], b["title"], b.get("parent")) for b in answer["brains"]], ran


async def test_list_brains_runs_as_many_statements_for_many_brains_as_for_one(
        store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with world(tmp_path, store_url, monkeypatch, small, large, GRANTED) as (url, served):
        one, few = await _listed(served, url)
        assert one == [("alpha", "Alpha", None)]
        served.grown()
        many, ran = await _listed(served, url)
    assert many == EXPECTED_LARGE
    assert ran == few, (ran, few)
