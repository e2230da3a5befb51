"""Fixtures shared by every test file: vault builders, an indexed engine, the CLI, the example vault.

Add new shared fixtures here in their own section; keep each one small and independent of the others.
"""

from __future__ import annotations

import logging
import os
import pty
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from notewell.cli.app import app
from notewell.config import load_settings
from notewell.indexer import IndexReport, sync
from notewell.records.documents import Scope
from notewell.runtime import Runtime, build_runtime, open_runtime
from notewell.search.engine import CaseMode, SearchEngine, SearchRequest, SearchResult
from notewell.store.base import Store

REPO_ROOT = Path(__file__).resolve().parent.parent
NORTHWIND = REPO_ROOT / "examples" / "northwind"


# --- the environment --------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _no_notewell_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the caller's NOTEWELL_VAULT / NOTEWELL_DB; a test that wants them sets them."""
    monkeypatch.delenv("NOTEWELL_VAULT", raising=False)
    monkeypatch.delenv("NOTEWELL_DB", raising=False)


# --- building vaults --------------------------------------------------------------------------------


def make_vault(tmp_path: Path, files: dict[str, str | bytes], name: str = "vault") -> Path:
    """Write ``files`` (vault-relative path -> text or bytes) under ``tmp_path/name`` and return that folder.

    Text is written as UTF-8 with no newline translation. Calling it again adds or overwrites files.
    """
    vault = tmp_path / name
    vault.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
    return vault


# --- an indexed vault and its engine ---------------------------------------------------------------


@dataclass
class IndexedVault:
    """A vault synced into its own SQLite store; ``engine`` is the search engine over it."""

    runtime: Runtime
    report: IndexReport

    @property
    def engine(self) -> SearchEngine:
        return self.runtime.engine

    @property
    def store(self) -> Store:
        return self.runtime.store

    @property
    def db(self) -> str:
        return self.runtime.settings.db

    @property
    def vault(self) -> Path:
        return self.runtime.settings.vault

    def sync(self) -> IndexReport:
        """Sync again (after the test changed the vault) and return the new report."""
        self.report = sync(self.runtime.settings, self.runtime.store)
        return self.report

    def search(
        self,
        query: str,
        *,
        projects: Sequence[str] | None = None,
        prefix: str = "",
        file_types: Sequence[str] = (),
        regex: bool = False,
        case: CaseMode = "insensitive",
        all_lines: bool = False,
        limit: int = 1000,
        offset: int = 0,
    ) -> SearchResult:
        """Search as the local owner; ``projects`` defaults to every project of the vault."""
        scope = Scope(projects=list(projects if projects is not None else self.store.documents.vault_projects()),
                      prefix=prefix, file_types=tuple(file_types))
        return self.engine.search(SearchRequest(query=query, scope=scope, regex=regex, case=case,
                                                all_lines=all_lines, limit=limit, offset=offset))


def index_into(vault: Path, db: Path | str) -> IndexedVault:
    """Sync ``vault`` into the store at ``db`` (a SQLite file, created when missing, or a PostgreSQL URL).
    The caller closes it."""
    rt = open_runtime(str(vault), str(db))
    return IndexedVault(rt, rt.indexing.sync())


@pytest.fixture
def index_vault(tmp_path: Path) -> Iterator[Callable[[Path], IndexedVault]]:
    """A factory: ``index_vault(vault)`` indexes into a fresh tmp SQLite store; closed after the test."""
    opened: list[IndexedVault] = []

    def build(vault: Path) -> IndexedVault:
        indexed = index_into(vault, tmp_path / f"index-{len(opened)}.db")
        opened.append(indexed)
        return indexed

    yield build
    for indexed in opened:
        indexed.runtime.close()


# --- the command line -------------------------------------------------------------------------------


def run_on_terminal(args: Sequence[str], env: dict[str, str]) -> tuple[int, bytes]:
    """``python -m notewell ARGS`` on a real pseudo-terminal: its exit code and everything it wrote there."""
    controller, terminal = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "notewell", *args], stdout=terminal, stderr=terminal, env=env)
    os.close(terminal)
    output = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed: the process has ended
            break
        if not chunk:
            break
        output += chunk
    os.close(controller)
    return proc.wait(timeout=60), output


def run_cli(*args: str, env: dict[str, str] | None = None) -> Result:
    """Run ``notewell ARGS`` in-process; ``result.stdout``, ``result.stderr`` and ``exit_code`` are separate."""
    return CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)


def run_module(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m notewell ARGS`` in a real subprocess (the installed entry point, for end-to-end tests)."""
    return subprocess.run([sys.executable, "-m", "notewell", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


# --- the bundled example vault ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def northwind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexedVault]:
    """examples/northwind indexed into a tmp store (never into examples/northwind/.notewell)."""
    indexed = index_into(NORTHWIND, tmp_path_factory.mktemp("northwind") / "index.db")
    yield indexed
    indexed.runtime.close()


@pytest.fixture(scope="session")
def rg() -> str:
    """The ripgrep executable. Missing is a failure, not a skip: .ci/run installs Debian's ripgrep."""
    exe = shutil.which("rg")
    if exe is None:
        pytest.fail("ripgrep (rg) is not installed: apt-get install ripgrep (.ci/run does it)")
    return exe


# --- PostgreSQL: a throwaway cluster, fresh databases, the store_url backend parameter (tests/pg.py) ---

from pg import pg_cluster, pg_url, pgvector, plain_pg_url, store_url  # noqa: E402, F401

# --- MCP: the example vault with people and real tokens, served over real HTTP (tests/mcp_world.py) ---


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def mcp_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from mcp_world import build_world

    world = build_world(tmp_path_factory.mktemp("mcp-world"))
    yield world
    world.runtime.close()


@pytest.fixture(scope="session")
def mcp_url(mcp_world: object) -> Iterator[str]:
    """The URL of a Notewell MCP server (every toolset) over mcp_world, on a free localhost port."""
    from mcp_world import serve_world

    with serve_world(mcp_world) as server:  # type: ignore[arg-type]
        yield server.url


# --- REST: the example vault with people, memories and tokens behind /api/v1, per backend (tests/rest_world.py) ---

from loop_world import loop_runtime, loop_vault  # noqa: E402, F401
from rest_world import rest  # noqa: E402, F401

# --- web: the MCP world with passwords behind the whole HTTP app, and Debian's chromium (tests/web_world.py) ---


@pytest.fixture(scope="session")
def web_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A world of its own (the web tests add users and grants), every person with a password."""
    from mcp_world import build_world
    from notewell.access.principal import LOCAL_OWNER
    from web_world import PASSWORDS, email

    world = build_world(tmp_path_factory.mktemp("web-world"))
    for handle, password in PASSWORDS.items():
        world.runtime.sign_in.set_password(LOCAL_OWNER, email(handle), password)
    yield world
    world.runtime.close()


@pytest.fixture(scope="session")
def web_url(web_world: object) -> Iterator[str]:
    """The base URL (no trailing slash) of the whole HTTP app over web_world: pages at "/", MCP at /mcp."""
    from mcp_world import serve_world

    with serve_world(web_world) as server:  # type: ignore[arg-type]
        yield f"http://127.0.0.1:{server.port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's chromium under Playwright, once per module (the browser tests live in one); missing fails under
    CI=true (.ci/run installs it). Not per session: Playwright's sync API holds an event loop in this thread
    until it stops, and the anyio tests that run after the browser tests need the thread free."""
    import os

    from web_world import CHROMIUM

    if not Path(CHROMIUM).exists():
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does it)", pytrace=False)
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()
# --- every service over an open store -----------------------------------------------------------------


def runtime_over(store: Store, vault: Path) -> Runtime:
    """The composition root over a store already open (either backend), with ``vault`` as the vault folder."""
    return build_runtime(load_settings(str(vault)), store)


# --- the MCP door's log lines (op=...), captured while a test runs ---------------------------------


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextmanager
def captured_lines(name: str = "notewell.mcp") -> Iterator[list[str]]:
    """The log lines (op=…) the logger ``name`` writes inside the block, at level INFO whatever it was set to."""
    logger = logging.getLogger(name)
    handler, level = _Lines(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.fixture
def log_lines() -> Iterator[list[str]]:
    """The notewell.mcp log lines (op=…) written while the test runs."""
    with captured_lines() as lines:
        yield lines
