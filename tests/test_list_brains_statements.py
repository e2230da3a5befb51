"""listBrains reads the brains of every project the caller may read in one statement, whatever their number,
the documents their brain.md lists, or the projects their parents are declared in: it read each project's brains
whole (every brain.md's list of documents, which it does not show) with a statement a project, and asked again
for each brain whose parent is declared in another project whether the caller may read that project. Its answer
is unchanged (the ids, titles and parents as the caller sees them: a hidden parent read as the nearest enclosing
brain of the brain's own project). On both backends, over MCP."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from mcp_world import ServerThread, connect
from notewell.access.principal import LOCAL_OWNER
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import Runtime, open_runtime
from notewell.store.sqlite.database import _Connection

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


class Statements:
    """The statements run on the threads that answer requests (not the store's background threads, named
    notewell-*), counted as each backend's connections run them; not SQLite's PRAGMAs, which open a thread's
    connection (a request may come on a worker thread that has none yet)."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def counted(self, execute: Callable[..., Any]) -> Callable[..., Any]:
        def run(conn: Any, sql: Any, *args: Any, **kwargs: Any) -> Any:
            if not (threading.current_thread().name.startswith("notewell-")
                    or (isinstance(sql, str) and sql.lstrip().upper().startswith("PRAGMA"))):
                with self.lock:
                    self.count += 1
            return execute(conn, sql, *args, **kwargs)
        return run


@contextmanager
def world(tmp: Path, store_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Served]]:
    """(the MCP URL, the served vault) over a vault of alpha's root brain alone, alice granted read on it."""
    vault = tmp / "vault"
    small(vault)
    rt = open_runtime(str(vault), store_url)
    rt.indexing.sync()
    rt.administration.add_user(LOCAL_OWNER, "alice@example.com", "member", handle="alice")
    rt.administration.grant(LOCAL_OWNER, "alice@example.com", "alpha", "read")
    served = Served(rt, rt.administration.mint_token(LOCAL_OWNER, "alice@example.com", ["knowledge:read"]).secret,
                    Statements())
    monkeypatch.setattr(_Connection, "execute", served.statements.counted(_Connection.execute))
    monkeypatch.setattr(psycopg.Cursor, "execute", served.statements.counted(psycopg.Cursor.execute))
    try:
        with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False))) as server:
            yield server.url, served
    finally:
        rt.close()


@dataclass
class Served:
    rt: Runtime
    token: str
    statements: Statements

    def grown(self) -> None:
        """The large vault (``large``), synced, alice granted read on beta and gamma too."""
        large(self.rt.settings.vault)
        self.rt.indexing.sync()
        for project in ("beta", "gamma"):
            self.rt.administration.grant(LOCAL_OWNER, "alice@example.com", project, "read")

    async def listed(self, url: str) -> tuple[list[tuple[str, str, str | None]], int]:
        """listBrains' brains (id, title, parent) and the statements its call ran (the second of two calls in
        one session: the first warms the session and the connections)."""
        async with connect(url, self.token) as client:
            await client.call_tool("listBrains", {})
            before = self.statements.count
            result = await client.call_tool("listBrains", {})
            ran = self.statements.count - before
        assert not result.is_error, result.content
        brains = result.structured_content["brains"]  # type: ignore[index]
        return [(b["id"], b["title"], b.get("parent")) for b in brains], ran


async def test_list_brains_runs_as_many_statements_for_many_brains_as_for_one(
        store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with world(tmp_path, store_url, monkeypatch) as (url, served):
        one, few = await served.listed(url)
        assert one == [("alpha", "Alpha", None)]
        served.grown()
        many, ran = await served.listed(url)
    assert many == EXPECTED_LARGE
    assert ran == few, (ran, few)
