"""Benchmark (not a test): how many SQL statements a call of each MCP tool makes on PostgreSQL, counted by the
server's pg_stat_statements. One `notewell serve` on a fresh database (--admin-db's cluster, which must preload
pg_stat_statements and have the extension in that database), the load bench's vault, token and memories; then
for each tool: a few calls to warm up, the counters reset, --calls calls in one MCP session, the statements
counted once the embeddings those calls queued are made (the runner's statements beside the calls count too,
unless the server runs with --no-semantic, --words here). BEGIN and COMMIT count as statements (each is a
round trip); the lines each statement took are printed with --show.

    .venv/bin/python bench/statements_bench.py --admin-db 'postgresql://postgres@/postgres?host=DIR&port=PORT' \\
        [--port 8830] [--calls 10] [--words] [--show]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

from harness import indexed_example, start_server, stop
from load_bench import SCOPES, Client, Tally

TOOLS = ("searchKnowledge", "recall", "remember", "brain_start_session")
QUERIES = ("pricing", "the", "client")
DB = "notewell_statements_bench"


def url_of(admin: str, database: str) -> str:
    """The URL ``admin`` names with ``database`` for its database."""
    return urlunsplit(urlsplit(admin)._replace(path=f"/{database}"))


class Counted:
    def __init__(self, admin: str, url: str, embedding: bool) -> None:
        self.admin = psycopg.connect(admin, autocommit=True)
        self.store = psycopg.connect(url, autocommit=True)
        self.embedding = embedding  # False: nothing empties the queue (--no-semantic)

    def reset(self) -> None:
        self.admin.execute("SELECT pg_stat_statements_reset()")

    async def settled(self) -> None:
        """Once the embedding queue is empty (or 60 s passed), and a second more."""
        deadline = time.monotonic() + (60 if self.embedding else 0)
        while time.monotonic() < deadline:
            row = self.store.execute("SELECT count(*) FROM embedding_queue").fetchone()
            if row is None or row[0] == 0:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)

    def statements(self) -> list[tuple[str, int]]:
        rows = self.admin.execute(
            "SELECT s.query, s.calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid"
            " WHERE d.datname = %s AND s.query NOT ILIKE '%%pg_stat_statements%%'"
            " AND s.query NOT ILIKE '%%count(*) FROM embedding_queue%%'", (DB,)).fetchall()
        return [(str(query), int(calls)) for query, calls in rows]


async def measure(args: argparse.Namespace) -> None:
    url = url_of(args.admin_db, DB)
    with psycopg.connect(args.admin_db, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{DB}"')
        admin.execute(f'CREATE DATABASE "{DB}"')
    vault, _, token, rt = indexed_example(Path(tempfile.mkdtemp(prefix="nw-statements-")), SCOPES, url)
    person = rt.authentication.authenticate(token)
    for i in range(10):
        rt.memory.remember(person, f"The pricing review happens on Mondays (note {i}).", path=f"bench/{i % 4}")
    rt.close()
    server = start_server(vault, url, args.port, *(["--no-semantic"] if args.words else []))
    counted = Counted(args.admin_db, url, not args.words)
    try:
        client = Client(f"http://127.0.0.1:{args.port}/mcp", token, [], 1, 1)
        await client.open()
        tally, sessions = Tally(), []

        async def call(tool: str, i: int) -> None:
            arguments: dict[str, Any] = {"query": QUERIES[i % len(QUERIES)]}
            if tool == "remember":
                arguments = {"content": f"Statements note {i} {time.time()}", "path": "load/1"}
            elif tool == "brain_start_session":
                arguments = {"prompt": "pricing work", "clientType": "statements_bench"}
            answer = await client.tool(tally, tool, arguments)
            if tool == "brain_start_session" and answer is not None:
                sessions.append(answer["sessionId"])

        for tool in TOOLS:
            for i in range(3):
                await call(tool, i)
            await counted.settled()
            counted.reset()
            for i in range(args.calls):
                await call(tool, i)
            await counted.settled()
            found = counted.statements()
            total = sum(calls for _, calls in found)
            ends = sum(calls for query, calls in found if query.strip().upper() in ("BEGIN", "COMMIT", "ROLLBACK"))
            print(f"{tool}: {total / args.calls:.1f} statements a call "
                  f"({ends / args.calls:.1f} of them BEGIN or COMMIT)")
            if args.show:
                for query, calls in sorted(found, key=lambda row: -row[1]):
                    print(f"  {calls:5d}  {' '.join(query.split())[:150]}")
            for session in sessions:  # closed outside the count
                await client.tool(tally, "brain_report_session_outcome", {"sessionId": session, "success": True})
            sessions.clear()
        await client.close()
        if tally.errors:
            print("errors:", *tally.errors[:3], sep="\n  ")
    finally:
        stop(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--admin-db", required=True, help="a database of the cluster (postgresql://...)")
    parser.add_argument("--port", type=int, default=8830)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--words", action="store_true", help="serve with --no-semantic: the calls' own statements")
    parser.add_argument("--show", action="store_true", help="print each statement and how often it ran")
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
