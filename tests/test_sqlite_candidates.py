"""SQLite finds candidates two ways (few trigram matches by id, many by walking the order); both give
the same documents, in the same order, page by page."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import index_into, make_vault
from notewell.records.documents import Scope
from notewell.search.literals import plain_plan, regex_plan
from notewell.store.sqlite import documents as sqlite_documents


def test_few_and_many_matches_give_the_same_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"{project}/{folder}/n{n:02}.md": f"note {n}\n{'needle ' if n % 3 else ''}text {n % 5}\n"
             for project in ("alpha", "beta") for folder in ("a", "b") for n in range(12)}
    indexed = index_into(make_vault(tmp_path, files), tmp_path / "index.db")
    documents = indexed.store.documents
    scope = Scope(projects=["alpha", "beta"], prefix="")
    plans = [plain_plan("needle"), plain_plan("note"), plain_plan("text 4"), regex_plan(r"needle|zzz"), None]

    def pages(plan: object) -> list[list[str]]:
        out, after = [], None
        while True:
            page = documents.candidates(scope, plan, after=after, limit=5)  # type: ignore[arg-type]
            out.append([f"{c.project}/{c.path}" for c in page])
            if len(page) < 5:
                return out
            after = (page[-1].project, page[-1].path)

    by_id = [pages(plan) for plan in plans]
    monkeypatch.setattr(sqlite_documents, "FEW_MATCHES", 0)  # every plan walks the order now
    assert [pages(plan) for plan in plans] == by_id
    assert sum(len(p) for p in by_id[0]) == 32 and sum(len(p) for p in by_id[4]) == 48
    indexed.runtime.close()
