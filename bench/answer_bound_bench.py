"""A bench check (not a timed test) of the answer bound at scale: every listing, read and search an agent
makes on a large vault's largest project answers within notewell.answer_bound.ANSWER_BYTES_MAX bytes of
JSON, and a cut answer says so (``truncated`` and a ``note``).

    .venv/bin/python bench/answer_bound_bench.py --corpus DIR --db PATH_OR_URL [--project P]

``--db`` is a store already indexed from ``--corpus`` (bench/search_bench.py --scale builds the 1 GB
corpus; bench/short_bench.py indexes it with search_bench's file types). The vault is served in this
process (the MCP door of ``notewell serve``, without the watcher, so the store is not synced with other
file types) and called over Streamable HTTP with the MCP SDK's client, which validates each answer
against the tool's output schema. Prints each call's answer size and whether it was cut; exits 1 if an
answer passes the bound or is cut without saying so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from mcp_world import ServerThread, connect  # the tests' served-app thread and the SDK client
from notewell.access.principal import LOCAL_OWNER
from notewell.answer_bound import ANSWER_BYTES_MAX
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import open_runtime

BENCH_USER = "bound-bench@example.test"


def calls(project: str, largest: str) -> list[tuple[str, dict[str, Any]]]:
    """What an agent asks of a large project: the listings at their largest, the largest document read in
    its largest parts, searches for words found nearly everywhere, the links and context around it."""
    return [
        ("listProjects", {}),
        ("listDocs", {"project": project, "limit": 1000}),
        ("readDoc", {"path": f"{project}/{largest}", "limit": 2000}),
        ("searchKnowledge", {"query": "the", "project": project}),
        ("searchKnowledge", {"query": "th"}),
        ("search_notes", {"query": "def", "limit": 100, "repo": project}),
        ("search_notes", {"query": "^.*$", "regex": True, "limit": 100, "repo": project}),
        ("listBrains", {}),
        ("getLinks", {"path": f"{project}/{largest}", "limit": 200}),
        ("buildContext", {"query": "import", "depth": 2, "max_tokens": 100_000}),
        ("getDocs", {}),
    ]


async def check(url: str, token: str, plan: list[tuple[str, dict[str, Any]]]) -> bool:
    good = True
    async with connect(url, token) as client:
        print("| tool | arguments | answer bytes | truncated | note |")
        print("| --- | --- | --- | --- | --- |")
        for tool, args in plan:
            result = await client.call_tool(tool, args)
            text = result.content[0].text  # type: ignore[union-attr]
            size = len(text.encode())
            answer = json.loads(text) if not result.is_error else {"error": text}
            cut = bool(answer.get("truncated"))
            note = str(answer.get("note") or "")[:60]
            good &= size <= ANSWER_BYTES_MAX and not result.is_error and (size < ANSWER_BYTES_MAX * 0.9 or cut)
            print(f"| {tool} | `{json.dumps(args, ensure_ascii=False)}` | {size:,} | {cut} | {note} |", flush=True)
    return good


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--project", help="default: the project with the most documents")
    args = parser.parse_args(argv)
    rt = open_runtime(str(args.corpus), args.db)
    try:
        rt.indexing.sync_projects()
        counts = {p: len(rt.store.documents.metas(p)) for p in rt.store.documents.vault_projects()}
        project = args.project or max(counts, key=lambda p: counts[p])
        metas = rt.store.documents.metas(project)
        largest = max(metas, key=lambda m: m.size).path
        if rt.store.identity.user_by_email(BENCH_USER) is None:
            rt.administration.add_user(LOCAL_OWNER, BENCH_USER, "admin", handle="boundbench", home_folder=False)
        token = rt.administration.mint_token(LOCAL_OWNER, BENCH_USER, ["knowledge:read"]).secret
        print(f"{project}: {counts[project]:,} documents; largest {largest} ({max(m.size for m in metas):,} bytes);"
              f" bound {ANSWER_BYTES_MAX:,} bytes")
        with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False))) as running:
            good = asyncio.run(check(running.url, token, calls(project, largest)))
    finally:
        rt.close()
    print("every answer within the bound, and every cut one said so" if good else "FAILED: see the table")
    return 0 if good else 1


if __name__ == "__main__":
    raise SystemExit(main())
