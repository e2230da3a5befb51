"""getBrain and searchBrain run as many statements for many projects, brains and documents as for few: getBrain
read every brain of every project the caller may read (a statement a project, each brain's list of documents
too) to find the brain's sub-brains, and each document its brain.md lists alone; searchBrain read every brain of
each project on its chain of parents, and each hit's title brain.md does not give alone. Their answers are
unchanged: the sub-brains declaring the brain their parent from other projects, a brain whose declared parent is
hidden shown under its nearest enclosing brain, a link to a missing document left out, a link given twice listed
once, the hits' titles. On both backends, over MCP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from statements_world import world
from test_list_brains_statements import _brain

pytestmark = pytest.mark.anyio


def _needles(folder: Path, count: int) -> None:
    """``count`` documents that brain.md does not list, each holding the word needle once."""
    for i in range(count):
        (folder / f"needle-{i}.md").write_text(f"# Needle {folder.name} {i}\n\nA needle here.\n", encoding="utf-8")


def small(vault: Path) -> None:
    """alpha (readable): its root brain, alpha/b0 (whose brain.md also links a missing document and one document
    twice) and alpha/b0/deep, which declares a parent in hidden (not readable: shown under alpha/b0)."""
    _brain(vault / "hidden", "Hidden", 1)
    _brain(vault / "hidden" / "top", "Top", 1)
    _brain(vault / "alpha", "Alpha", 1)
    _brain(vault / "alpha" / "b0", "Alpha 0", 1)
    with (vault / "alpha" / "b0" / "brain.md").open("a", encoding="utf-8") as brain_md:
        brain_md.write("- [Missing](missing.md)\n- [Again](doc-000.md)\n")
    _brain(vault / "alpha" / "b0" / "deep", "Deep", 1, "hidden/top")
    for folder in ("alpha", "alpha/b0", "alpha/b0/deep"):
        _needles(vault / folder, 1)


def large(vault: Path) -> None:
    """The small vault grown: 40 documents a brain, 4 needles each, alpha/b0 with four more sub-brains; beta's
    four sub-brains declare alpha/b0 their parent, gamma's the hidden hidden/top; eight more projects of five brains
    each (the caller may read them all but hidden)."""
    _brain(vault / "alpha", "Alpha", 40)
    _brain(vault / "alpha" / "b0", "Alpha 0", 40)
    with (vault / "alpha" / "b0" / "brain.md").open("a", encoding="utf-8") as brain_md:
        brain_md.write("- [Missing](missing.md)\n- [Again](doc-000.md)\n")
    _brain(vault / "alpha" / "b0" / "deep", "Deep", 40, "hidden/top")
    for i in range(4):
        _brain(vault / "alpha" / "b0" / f"s{i}", f"Sub {i}", 40)
    for folder in ("alpha", "alpha/b0", "alpha/b0/deep"):
        _needles(vault / folder, 4)
    for project, parent in (("beta", "alpha/b0"), ("gamma", "hidden/top"), *((f"p{i}", None) for i in range(8))):
        _brain(vault / project, project.title(), 40)
        for i in range(4):
            _brain(vault / project / f"b{i}", f"{project.title()} {i}", 40, parent)


def _docs(folder: str, listed: int, needles: int) -> list[tuple[str, str, bool]]:
    return ([(f"alpha/{folder}/doc-{i:03d}.md", f"Document {i}", True) for i in range(listed)]
            + [(f"alpha/{folder}/needle-{i}.md", f"Needle {folder.rpartition('/')[2]} {i}", False)
               for i in range(needles)])


EXPECTED_SMALL = {
    "parent": {"id": "alpha", "title": "Alpha"},
    "subBrains": [{"id": "alpha/b0/deep", "title": "Deep"}],
    "documents": _docs("b0", 1, 1),
}
EXPECTED_LARGE = {
    "parent": {"id": "alpha", "title": "Alpha"},
    "subBrains": [{"id": "alpha/b0/deep", "title": "Deep"}, *({"id": f"alpha/b0/s{i}", "title": f"Sub {i}"}
                                                              for i in range(4)),
                  *({"id": f"beta/b{i}", "title": f"Beta {i}"} for i in range(4))],
    "documents": _docs("b0", 40, 4),
}


def _hits(needles: int) -> list[tuple[str, str, str]]:
    """searchBrain's hits for needle from alpha/b0/deep with its parents: (brain, path, document title)."""
    return [(brain, f"{folder}/needle-{i}.md", f"Needle {folder.rpartition('/')[2]} {i}")
            for brain, folder in (("alpha/b0/deep", "alpha/b0/deep"), ("alpha/b0", "alpha/b0"), ("alpha", "alpha"))
            for i in range(needles)]


GRANTED = ("beta", "gamma", *(f"p{i}" for i in range(8)))  # alice's projects in the large vault, with alpha


def _page(answer: dict[str, Any]) -> dict[str, Any]:
    return {"parent": answer["parent"], "subBrains": answer["subBrains"],
            "documents": [(d["path"], d["title"], d["listed"]) for d in answer["documents"]]}


async def test_get_brain_runs_as_many_statements_for_many_projects_brains_and_documents_as_for_few(
        store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with world(tmp_path, store_url, monkeypatch, small, large, GRANTED) as (url, served):
        few, ran_few = await served.called(url, "getBrain", {"brain": "alpha/b0"})
        assert _page(few) == EXPECTED_SMALL
        served.grown()
        many, ran_many = await served.called(url, "getBrain", {"brain": "alpha/b0"})
        deep, _ = await served.called(url, "getBrain", {"brain": "alpha/b0/deep"})
    assert _page(many) == EXPECTED_LARGE
    assert many["contents"].startswith("# Alpha 0\n")
    assert (deep["parent"], deep["subBrains"]) == ({"id": "alpha/b0", "title": "Alpha 0"}, [])
    assert ran_many == ran_few, (ran_many, ran_few)


async def test_search_brain_with_parents_runs_as_many_statements_for_many_projects_brains_and_documents_as_for_few(
        store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = {"brain": "alpha/b0/deep", "query": "needle", "includeParents": True}
    with world(tmp_path, store_url, monkeypatch, small, large, GRANTED) as (url, served):
        few, ran_few = await served.called(url, "searchBrain", args)
        served.grown()
        many, ran_many = await served.called(url, "searchBrain", args)
    for answer, needles in ((few, 1), (many, 4)):
        assert answer["searched"] == ["alpha/b0/deep", "alpha/b0", "alpha"]
        assert sorted((h["brain"], h["path"], h["document"]) for h in answer["results"]) == sorted(_hits(needles))
        assert answer["truncated"] is False
    assert ran_many == ran_few, (ran_many, ran_few)


async def test_search_brain_over_a_brain_of_a_thousand_sub_brains_leaves_them_out(
        store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each sub-brain left out was a clause of the search's statement, ANDed in a chain: SQLite refused one of
    1,000 (an internal error); they are a balanced tree, the outermost sub-brains alone."""
    with world(tmp_path, store_url, monkeypatch, small, large, GRANTED) as (url, served):
        many = served.rt.settings.vault / "alpha" / "many"
        _brain(many, "Many", 1)
        _needles(many, 1)
        for i in range(1100):
            _brain(many / f"s{i:04d}", f"Sub {i}", 0)
        _brain(many / "s0000" / "nested", "Nested", 0)
        _needles(many / "s0000", 1)
        _needles(many / "s0000" / "nested", 1)
        served.rt.indexing.sync()
        answer, _ = await served.called(url, "searchBrain", {"brain": "alpha/many", "query": "needle"})
    assert [(h["brain"], h["path"]) for h in answer["results"]] == [("alpha/many", "alpha/many/needle-0.md")]
