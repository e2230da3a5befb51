"""Short and CJK queries at scale: searchKnowledge for runs of one or two characters against ripgrep on the
same files in the same run.

    .venv/bin/python bench/short_bench.py --corpus DIR --db PATH_OR_URL [--runs 20] [--rg-runs 5]

``--corpus`` is a vault whose top-level folders are the projects (bench/search_bench.py --scale builds the
1 GB standard library corpus; add real Chinese and Japanese prose beside it, for example Debian's
manpages-zh and manpages-ja unpacked into folders ``zh`` and ``ja``); ``--db`` a store already indexed
from it with search_bench's file types (an empty one is built first). Each query goes through
KnowledgeService.search_knowledge, as the MCP tool calls it (its 40 results, in order, complete), in
this process; ripgrep runs with the same file set and stops at each file's first match, as
search_bench.py runs it. Prints p50 / p95 in ms, the ratio of ripgrep's p50 to Notewell's p95, whether
the answer was complete, and its hits.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

from notewell.access.principal import LOCAL_OWNER
from notewell.config import Settings
from notewell.indexer import sync
from notewell.runtime import open_runtime
from search_bench import FILE_TYPES, Query, children_cpu, rg_command, timed

QUERIES = [
    Query("2 letters, rare", "qz", False, "Sasha's two-character minimum"),
    Query("2 characters, none", "ζq", False, "a Greek letter and a Latin one, found nowhere"),
    Query("2 letters, common", "th", False, "a pair found nearly everywhere"),
    Query("Chinese word", "中文", False, "two CJK characters"),
    Query("Chinese word", "系统", False, "'system', in the Chinese manual pages"),
    Query("Japanese word", "設定", False, "'settings', in the Japanese manual pages"),
    Query("Chinese word", "文件", False, "'file', two characters"),
    Query("Japanese kana", "して", False, "two kana found nearly everywhere in Japanese"),
    Query("3 letters, common", "the", False, "the walk in batches"),
    Query("selective", "levenshtein", False, "for comparison: a rare word"),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rg-runs", type=int, default=5)
    args = parser.parse_args(argv)
    rt = open_runtime(str(args.corpus), args.db)
    try:
        if not rt.store.documents.state():
            started = time.perf_counter()
            sync(Settings(vault=args.corpus, db=args.db, file_types=FILE_TYPES), rt.store)
            print(f"built in {time.perf_counter() - started:.1f} s")
        # the projects of the indexed folders, as notewell serve makes them: after the build, since on an empty
        # store there are none yet, and every search of the owner would find nothing
        rt.indexing.sync_projects()
        projects = sorted(p.name for p in args.corpus.iterdir() if p.is_dir() and not p.name.startswith("."))
        print("| query | what | Notewell p50 / p95 ms | ripgrep p50 ms | ratio (rg p50 / p95) | complete | hits |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for query in QUERIES:
            answer = rt.knowledge.search_knowledge(LOCAL_OWNER, query.text)
            ours = timed(lambda q=query.text: rt.knowledge.search_knowledge(LOCAL_OWNER, q), args.runs)
            rg = timed(lambda q=query: subprocess.run(rg_command(q, projects), cwd=args.corpus, capture_output=True,
                                                      check=False), args.rg_runs, children_cpu)
            print(f"| `{query.text}` | {query.what} | {ours.p50_ms:.1f} / {ours.p95_ms:.1f} | {rg.p50_ms:.0f} |"
                  f" {rg.p50_ms / ours.p95_ms:.0f}x | {answer.complete} | {len(answer.hits)} |", flush=True)
    finally:
        rt.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
