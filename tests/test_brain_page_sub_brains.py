"""getBrain lists a brain's own documents in one statement that leaves its sub-brains' folders out, whatever they
hold: it read the brain's folder 1,000 documents at a time by path and passed over the sub-brains' documents, so a
sub-brain of 1,100 documents sorting before the brain's own cost two more statements and 1,100 rows it did not
show. Its sub-brains are looked up by their parent through the brains_parent index, not a walk of every brain. On
both backends, over MCP."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from notewell.store.shared.documents import SqlDocuments
from statements_world import Served, world
from test_brain_page_statements import EXPECTED_SMALL, GRANTED, _page, large, small
from test_list_brains_statements import _brain

pytestmark = pytest.mark.anyio

ARCHIVED = 1100  # more than a page of the old listing (1,000)


def _archive(vault: Path) -> None:
    """alpha/b0/archive, a sub-brain of alpha/b0 sorting before alpha/b0's own documents, holding ``ARCHIVED``
    documents its brain.md does not list, and a brain of its own inside it."""
    archive = vault / "alpha" / "b0" / "archive"
    _brain(archive, "Archive", 0)
    for i in range(ARCHIVED):
        (archive / f"page-{i:04d}.md").write_text(f"# Page {i}\n\nOld text {i}.\n", encoding="utf-8")
    _brain(archive / "inner", "Inner", 2)


class Rows:
    """The rows the documents repository's reads return."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.asked: list[tuple[str, list[Any]]] = []  # each statement, with its parameters
        rows = SqlDocuments._rows

        def counted(repository: SqlDocuments, sql: str, params: Sequence[Any] = ()) -> list[Any]:
            found = rows(repository, sql, params)
            self.count += len(found)
            self.asked.append((sql, list(params)))
            return found
        monkeypatch.setattr(SqlDocuments, "_rows", counted)


async def _called(served: Served, url: str, rows: Rows, brain: str) -> tuple[dict[str, Any], int, int]:
    """getBrain's answer, the statements its call ran and the rows the documents repository returned to it."""
    before = rows.count
    answer, ran = await served.called(url, "getBrain", {"brain": brain})
    return answer, ran, (rows.count - before) // 2  # called runs the call twice (the first warms the session)


async def test_get_brain_reads_none_of_its_sub_brains_documents(
        store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with world(tmp_path, store_url, monkeypatch, small, large, GRANTED) as (url, served):
        rows = Rows(monkeypatch)
        few, ran_few, read_few = await _called(served, url, rows, "alpha/b0")
        _archive(served.rt.settings.vault)
        served.rt.indexing.sync()
        many, ran_many, read_many = await _called(served, url, rows, "alpha/b0")
        plan = _listing_plan(served, rows, store_url.startswith("postgres"))
        root, _, read_root = await _called(served, url, rows, "alpha")
    assert _page(few) == EXPECTED_SMALL
    assert _page(many) == {**EXPECTED_SMALL, "subBrains": [{"id": "alpha/b0/archive", "title": "Archive"},
                                                           *EXPECTED_SMALL["subBrains"]]}
    assert [d["path"] for d in root["documents"]] == ["alpha/doc-000.md", "alpha/needle-0.md"]
    assert ran_many == ran_few, (ran_many, ran_few)
    # three rows more: the two brains inside alpha/b0, and archive again as a brain whose parent is alpha/b0; none
    # of their documents is read
    assert read_many == read_few + 3, (read_many, read_few)
    assert read_root < 20, read_root
    if store_url.startswith("postgres"):
        assert "documents_project_path_key" in plan and "Seq Scan" not in plan, plan
    else:  # the folder's range of the (project, path) index, in order, not the project's
        assert "USING INDEX sqlite_autoindex_documents_1 (project=? AND path>? AND path<?)" in plan, plan
        assert "TEMP B-TREE" not in plan, plan


def _listing_plan(served: Served, rows: Rows, postgres: bool) -> str:
    """The plan of the last getBrain's statement listing the documents brain.md does not list."""
    sql, params = [(sql, params) for sql, params in rows.asked if "NOT (d.path" in sql][-1]
    documents: Any = served.rt.store.documents
    with documents.dialect.reading() as conn:
        if postgres:
            conn.execute("ANALYZE documents")
            return "\n".join(row[0] for row in conn.execute("EXPLAIN " + sql, params).fetchall())
        return "\n".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall())


async def test_sub_brains_are_found_by_their_parent_through_its_index(
        store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The statement that finds the brains declaring a parent (getBrain's sub-brains from other projects) is a
    lookup in brains_parent, not a scan of the brains table."""
    with world(tmp_path, store_url, monkeypatch, small, large, GRANTED) as (url, served):
        documents: Any = served.rt.store.documents
        asked: list[tuple[str, list[Any]]] = []
        rows = documents._rows
        monkeypatch.setattr(documents, "_rows",
                            lambda sql, params=(): asked.append((sql, list(params))) or rows(sql, params))
        page, _ = await served.called(url, "getBrain", {"brain": "alpha/b0"})
        assert page["subBrains"] == EXPECTED_SMALL["subBrains"]
        sql, params = next((sql, params) for sql, params in asked if "WHERE parent = ?" in sql)
        with documents.dialect.reading() as conn:
            if store_url.startswith("postgres"):
                conn.execute("SET enable_seqscan = off")  # a table this small is scanned whatever its indexes
                try:
                    plan = "\n".join(row[0] for row in conn.execute("EXPLAIN " + sql, params).fetchall())
                finally:
                    conn.execute("RESET enable_seqscan")
                assert "brains_parent" in plan and "Seq Scan" not in plan, plan
            else:
                plan = "\n".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall())
                assert "USING INDEX brains_parent (parent=?)" in plan, plan
