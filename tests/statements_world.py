"""A served vault whose tool calls' statements are counted (tests of what a call costs as the vault grows):
the statements run on the threads that answer requests, counted as each backend's connections run them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
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

_IN_TOOL_CALL: ContextVar[bool] = ContextVar("in_tool_call", default=False)


class _ToolCallsMarked:
    """The app, each of its requests that calls a tool (a POST whose JSON-RPC method is tools/call) marked in
    ``_IN_TOOL_CALL`` for the statements it runs (on whichever thread: a context goes with its work): the session's
    other requests (its notification, its stream, its close) may be answered while a call is counted, later on a
    loaded machine, and their statements are not the call's."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        messages, more = [], True
        while more:
            message = await receive()
            messages.append(message)
            more = bool(message.get("more_body", False))
        body = b"".join(m.get("body", b"") for m in messages)
        replay = iter(messages)

        async def received() -> Any:
            return next(replay, None) or await receive()
        marked = _IN_TOOL_CALL.set(b'"tools/call"' in body)
        try:
            await self.app(scope, received, send)
        finally:
            _IN_TOOL_CALL.reset(marked)


class Statements:
    """The statements run on the threads that answer requests (not the store's background threads, named
    notewell-*); not SQLite's PRAGMAs, which open a thread's connection (a request may come on a worker thread
    that has none yet); with ``tool_calls_only``, those of requests that call a tool only (``_ToolCallsMarked``).
    ``run``: their text, in order (an executemany's once a row)."""

    def __init__(self, tool_calls_only: bool = False) -> None:
        self.count = 0
        self.run: list[str] = []
        self.lock = threading.Lock()
        self.tool_calls_only = tool_calls_only

    def counted(self, execute: Callable[..., Any], rows: bool = False) -> Callable[..., Any]:
        """``execute`` counting its statement; ``rows``: an executemany, counting one a row of its second
        argument."""
        def run(conn: Any, sql: Any, *args: Any, **kwargs: Any) -> Any:
            if rows:
                args = (list(args[0]), *args[1:])
            if not (threading.current_thread().name.startswith("notewell-")
                    or (self.tool_calls_only and not _IN_TOOL_CALL.get())
                    or (isinstance(sql, str) and sql.lstrip().upper().startswith("PRAGMA"))):
                with self.lock:
                    times = len(args[0]) if rows else 1
                    self.count += times
                    self.run += [str(sql)] * times
            return execute(conn, sql, *args, **kwargs)
        return run


def counting(monkeypatch: pytest.MonkeyPatch, tool_calls_only: bool = False) -> Statements:
    """The statements both backends' connections run from now on, an executemany's counted once a row."""
    statements = Statements(tool_calls_only)
    for cls in (_Connection, psycopg.Cursor):
        monkeypatch.setattr(cls, "execute", statements.counted(cls.execute))
        monkeypatch.setattr(cls, "executemany", statements.counted(cls.executemany, rows=True))
    return statements


@dataclass
class Served:
    rt: Runtime
    token: str
    statements: Statements
    large: Callable[[Path], None]
    projects: Sequence[str]

    def grown(self) -> None:
        """The large vault, synced, alice granted read on ``projects`` too."""
        self.large(self.rt.settings.vault)
        self.rt.indexing.sync()
        for project in self.projects:
            self.rt.administration.grant(LOCAL_OWNER, "alice@example.com", project, "read")

    async def called(self, url: str, tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """The tool's answer and the statements its call ran (the second of two calls in one session: the first
        warms the session and the connections)."""
        async with connect(url, self.token) as client:
            await client.call_tool(tool, args)
            before = self.statements.count
            result = await client.call_tool(tool, args)
            ran = self.statements.count - before
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content, ran


@contextmanager
def world(tmp: Path, store_url: str, monkeypatch: pytest.MonkeyPatch, small: Callable[[Path], None],
          large: Callable[[Path], None], projects: Sequence[str]) -> Iterator[tuple[str, Served]]:
    """(the MCP URL, the served vault) over the ``small`` vault, alice granted read on alpha; ``Served.grown``
    makes it the ``large`` one, alice granted read on ``projects`` too."""
    vault = tmp / "vault"
    small(vault)
    rt = open_runtime(str(vault), store_url)
    rt.indexing.sync()
    rt.administration.add_user(LOCAL_OWNER, "alice@example.com", "member", handle="alice")
    rt.administration.grant(LOCAL_OWNER, "alice@example.com", "alpha", "read")
    served = Served(rt, rt.administration.mint_token(LOCAL_OWNER, "alice@example.com", ["knowledge:read"]).secret,
                    counting(monkeypatch, tool_calls_only=True), large, projects)
    try:
        with ServerThread(_ToolCallsMarked(build_app(rt, ServeOptions(choose(None), watch=False)))) as server:
            yield server.url, served
    finally:
        rt.close()
