"""PostgreSQL against SQLite on the same vault, in turns: each query's p50 and p95 on both, and their ratio.

    python bench/backends_bench.py --corpus DIR --sqlite PATH --pg URL [--rounds 6] [--runs 8] [--query TEXT ...]

Both stores must hold the corpus already (bench/search_bench.py --scale builds both; `notewell index` does
too). One process opens both and asks each query of each store in turn, ``--runs`` timed searches a turn
after one untimed, ``--rounds`` turns each, so that a slower minute of the machine falls on both alike:
timed one after the other in separate runs, the same code moved by 20 to 40% between runs on a
virtual machine, more than the differences measured. The queries are bench/search_bench.py's set
(each through notewell.search.engine.SearchEngine, first match per file, limit 40), plus any --query; both
stores must answer each with the same files, or the run fails. Issue 27's target: every query class
within 2x of SQLite's p95 on PostgreSQL.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from notewell.errors import NotewellError
from notewell.records.documents import Scope
from notewell.search.engine import SearchEngine, SearchRequest
from notewell.store.base import Store
from search_bench import LIMIT, QUERIES, Query, open_bench_store, percentile

BACKENDS = ("SQLite", "PostgreSQL")


def answer(engine: SearchEngine, query: Query, scope: Scope) -> list[tuple[str, str]]:
    result = engine.search(SearchRequest(query=query.text, scope=scope, regex=query.regex, limit=LIMIT))
    return [(match.project, match.path) for match in result.matches]


def in_turns(engines: dict[str, SearchEngine], query: Query, scope: Scope, rounds: int,
             runs: int) -> dict[str, list[float]]:
    """Each backend's timed searches, in ms, taken in alternating turns."""
    times: dict[str, list[float]] = {name: [] for name in engines}
    for _ in range(rounds):
        for name, engine in engines.items():
            answer(engine, query, scope)
            for _ in range(runs):
                started = time.perf_counter()
                answer(engine, query, scope)
                times[name].append((time.perf_counter() - started) * 1000)
    return times


def report(rows: Sequence[tuple[Query, int, dict[str, list[float]]]], rounds: int, runs: int) -> str:
    lines = [f"{rounds} turns of {runs} timed searches a query on each store; p50 / p95 in ms", "",
             "| query | files | SQLite p50 / p95 | PostgreSQL p50 / p95 | PostgreSQL / SQLite, p95 |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for query, files, times in rows:
        cells = [f"{percentile(times[name], 50):.2f} / {percentile(times[name], 95):.2f}" for name in BACKENDS]
        ratio = percentile(times["PostgreSQL"], 95) / percentile(times["SQLite"], 95)
        lines.append(f"| {query.name} `{query.text}` | {files} | {cells[0]} | {cells[1]} | {ratio:.2f}x |")
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, required=True, help="the vault both stores indexed")
    parser.add_argument("--sqlite", required=True, help="the SQLite store's path")
    parser.add_argument("--pg", required=True, help="the PostgreSQL store's URL")
    parser.add_argument("--rounds", type=int, default=6, help="turns on each store per query (default 6)")
    parser.add_argument("--runs", type=int, default=8, help="timed searches a turn (default 8)")
    parser.add_argument("--query", action="append", default=[], help="another literal to time (repeatable)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.runs < 1:
        parser.error("--rounds and --runs: give 1 or more")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    stores: dict[str, Store] = {}
    try:
        stores["SQLite"] = open_bench_store(args.sqlite)
        stores["PostgreSQL"] = open_bench_store(args.pg)
        projects = stores["SQLite"].documents.vault_projects()
        if not projects or stores["PostgreSQL"].documents.vault_projects() != projects:
            raise NotewellError("--sqlite, --pg: both stores must hold the same corpus; index it into both first")
        engines = {name: SearchEngine(store.documents) for name, store in stores.items()}
        scope = Scope(projects=projects)
        queries = [*QUERIES, *(Query(text, text, False, "asked for") for text in args.query)]
        rows = []
        for query in queries:
            asked = Scope(projects=projects[:1]) if query.scoped else scope
            answers = {name: answer(engine, query, asked) for name, engine in engines.items()}
            if answers["SQLite"] != answers["PostgreSQL"]:
                raise NotewellError(f"{query.text!r}: SQLite and PostgreSQL answered different files")
            print(f"  {query.name}: {query.text}", file=sys.stderr)
            rows.append((query, len(answers["SQLite"]), in_turns(engines, query, asked, args.rounds, args.runs)))
    except NotewellError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        for store in stores.values():
            store.close()
    print(report(rows, args.rounds, args.runs), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
