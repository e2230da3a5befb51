"""Listings at scale: listProjects and a listDocs page over a store of many documents, against what they
cost before the store kept the counts and paged in SQL (every document's metadata read per call), in the
same run.

    .venv/bin/python bench/listing_bench.py [--documents N] [--projects P] [--db URL_OR_PATH] [--calls C]

The documents are written through the store's writer (short texts: the listings read no text); listProjects
goes through KnowledgeService.projects_with_counts as the doors call it; "before" is the count the service
made until this change (len(metas(project)) for each project) and a listDocs that read the whole project to
return its first page; and the project's last page by its cursor (after) against by its offset. Prints p50 / p95
in ms.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memory_bench import percentile
from notewell.access.principal import LOCAL_OWNER
from notewell.limits import LIST_DOCS_DEFAULT
from notewell.records.documents import DocumentInput
from notewell.runtime import open_runtime
from notewell.store.factory import open_store


def _fill(db: str, documents: int, projects: int) -> None:
    store = open_store(db)
    try:
        with store.documents.writer() as writer:
            writer.set_projects([f"p{n}" for n in range(projects)])  # as an index of the vault's folders would
            for n in range(documents):
                text = f"# Note {n}\n\nline {n} of project {n % projects}\n"
                writer.upsert(DocumentInput(f"p{n % projects}", f"notes/{n:07d}.md", f"Note {n}", "", len(text),
                                            1, hashlib.sha256(text.encode()).hexdigest(), text))
    finally:
        store.close()


def _timed(calls: int, run: Callable[[], object]) -> list[float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return times


def _row(name: str, now: list[float], before: list[float]) -> None:
    p50, p95 = statistics.median(now), percentile(now, 95)
    b50, b95 = statistics.median(before), percentile(before, 95)
    print(f"| {name} | {p50:.2f} | {p95:.2f} | {b50:.2f} | {b95:.2f} | {b50 / p50:.0f}x |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=140_000)
    parser.add_argument("--projects", type=int, default=7)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--db", default="", help="a PostgreSQL URL (an empty database), or a SQLite path")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        vault.mkdir()
        db = args.db or str(Path(tmp) / "store.db")
        start = time.perf_counter()
        _fill(db, args.documents, args.projects)
        print(f"{args.documents:,} documents in {args.projects} projects written in "
              f"{time.perf_counter() - start:.1f} s ({'PostgreSQL' if '://' in db else 'SQLite'})\n")
        rt = open_runtime(str(vault), db)
        try:
            rt.indexing.sync_projects()  # the projects of the vault's folders, as notewell serve makes them
            knowledge, docs = rt.knowledge, rt.store.documents
            print("| call | p50 ms | p95 ms | before p50 | before p95 | p50 ratio |")
            print("| --- | --- | --- | --- | --- | --- |")
            _row("listProjects", _timed(args.calls, lambda: knowledge.projects_with_counts(LOCAL_OWNER)),
                 _timed(args.calls, lambda: [len(docs.metas(pr.id)) for pr in knowledge.projects(LOCAL_OWNER)]))
            _row(f"listDocs page ({LIST_DOCS_DEFAULT})",
                 _timed(args.calls, lambda: knowledge.list_docs(LOCAL_OWNER, "p0", limit=LIST_DOCS_DEFAULT)),
                 _timed(args.calls, lambda: docs.metas("p0")[:LIST_DOCS_DEFAULT]))
            # the last page of the project: by its cursor (one range of the index) against by its offset (the rows
            # before it skipped one by one), in the same run
            paths = [m.path for m in docs.metas("p0")]
            last_page = max(len(paths) - LIST_DOCS_DEFAULT, 0)
            cursor = paths[last_page - 1] if last_page else None
            _row(f"listDocs last page: after (before: offset {last_page:,})",
                 _timed(args.calls, lambda: knowledge.list_docs(LOCAL_OWNER, "p0", limit=LIST_DOCS_DEFAULT,
                                                                after=cursor)),
                 _timed(args.calls, lambda: knowledge.list_docs(LOCAL_OWNER, "p0", limit=LIST_DOCS_DEFAULT,
                                                                offset=last_page)))
        finally:
            rt.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
