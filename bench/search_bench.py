"""Search benchmark: index a real corpus, then time a fixed query set against ripgrep in the same run.

    python bench/search_bench.py --corpus DIR [--db URL_OR_PATH] [--runs N] [--rg-runs N] [--out FILE]
    python bench/search_bench.py --scale DIR [--copies 1,6] [--pg ADMIN_URL] [--runs N] [--rg-runs N] [--out FILE]

Scale mode builds its corpora under DIR (once; later runs reuse them): the standard library's text files
(from sysconfig's paths, its site-packages included) copied once and six times over by default (--copies
1,6; 60 makes about 10 GB), one project per copy (about 165 MB and 1 GB of text), and beside them, where
Debian's manpages-zh and manpages-ja are installed, their pages unpacked into the projects zh and ja
(real Chinese and Japanese prose, 30 MB). Each is indexed in a child process (its peak memory is the
build's), then queried in another child, which also reports its memory after 1,000 mixed queries;
with --pg the same runs go to fresh databases on that PostgreSQL server. The report puts the sizes
and backends side by side.

The corpus is read as a vault (each top-level folder is a project) with the file types below; the
corpus folder is never written to: without --db the store goes to a temporary folder. Each query runs
through notewell.search.engine.SearchEngine in first-match-per-file mode with the default limit (40),
warm (one untimed run first), and ripgrep runs the same search over the same files (`rg -i -m1 -n`,
its default parallel mode, no result limit). See docs/performance.md for the figures and targets.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from notewell.config import DEFAULT_MAX_FILE_BYTES, Settings, is_postgres_url
from notewell.errors import NotewellError
from notewell.indexer import sync
from notewell.records.documents import Scope
from notewell.search.engine import SearchEngine, SearchRequest, SearchResult
from notewell.store.base import Store
from notewell.store.factory import open_store
from notewell.vault.scan import IGNORE_FILES, ROOT_PROJECT

DEFAULT_CORPUS = Path(sysconfig.get_paths()["stdlib"])  # the running Python's standard library
FILE_TYPES: tuple[str, ...] = (".py", ".txt", ".rst", ".html", ".c", ".h")
MIN_TEXT_BYTES = 100_000_000
LIMIT = 40


@dataclass(frozen=True)
class Query:
    name: str
    text: str
    regex: bool
    what: str  # why this query is in the set
    scoped: bool = False  # asked of the first project only (scale mode: copy1), else of every project


# Fixed set, chosen for the Python standard library corpus (docs/performance.md explains each one).
QUERIES: tuple[Query, ...] = (
    Query("rare literal", "levenshtein", False, "a word in a handful of files: the selective case"),
    Query("common word", "return", False, "in most files: the first 40 files in order answer it"),
    Query("common 3 letters", "the", False, "a trigram most regions hold: PostgreSQL once scanned them all for it"),
    Query("rare literal, one project", "levenshtein", False, "the selective case scoped to one project", True),
    Query("2 characters", "qz", False, "no trigram: the trigrams that start with the pair, from the vocabulary"),
    Query("CJK word", "中文", False, "two Chinese characters: in scale mode, the Chinese manual pages"),
    Query("regex with a literal", r"def \w+_callback\(", True, "candidates from the literal '_callback('"),
    Query("regex without a literal", r"\b[0-9a-f]{32}\b", True, "no literal: a scan until 40 files match"),
)
# What a server answers between the timed queries, for its memory after many (scale mode).
MIXED: tuple[Query, ...] = (*QUERIES, *(Query(text, text, regex, "mixed") for text, regex in (
    ("kerberos", False), ("deprecated", False), ("import os", False), ("TODO", False),
    (r"class \w+Error\(", True), ("asyncio.run(", False), ("utf-8", False), ("Straße", False))))
MIXED_RUNS = 1000
SCALE_COPIES = (1, 6)
MANUAL_PAGES = {"zh": ("zh_CN", "zh_TW"), "ja": ("ja",)}  # a project: Debian's manual page folders it holds


@dataclass(frozen=True)
class Timing:
    p50_ms: float
    p95_ms: float
    cpu_p50_ms: float  # CPU time (user + system) per run: what the run cost, whatever else the machine does


@dataclass(frozen=True)
class QueryFigures:
    query: Query
    notewell: Timing
    files: int  # files in Notewell's (limited) answer
    candidates: int
    scanned: bool
    rg: Timing
    rg_files: int  # files ripgrep reports (no limit)


@dataclass(frozen=True)
class BuildFigures:
    documents: int
    text_bytes: int
    seconds: float
    cpu_seconds: float  # of this process (SQLite runs in it): shows what other load on the machine took
    index_bytes: int  # the trigram index tables
    db_bytes: int | None  # the whole database file (SQLite); None for a server database


def percentile(samples: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(samples)
    rank = max(1, round(pct / 100 * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


def own_cpu() -> float:
    return time.process_time()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(fn: Callable[[], object], runs: int, cpu: Callable[[], float] = own_cpu) -> Timing:
    fn()  # warm: the first run fills the caches and is not counted
    samples, cpu_samples = [], []
    for _ in range(runs):
        started, cpu_started = time.perf_counter(), cpu()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
        cpu_samples.append((cpu() - cpu_started) * 1000)
    return Timing(statistics.median(samples), percentile(samples, 95), statistics.median(cpu_samples))


def rg_command(query: Query, projects: Sequence[str]) -> list[str]:
    """ripgrep over Notewell's file set: same types, size limit, hidden and ignore-file rules, project folders.

    Run in the corpus folder. Like Notewell it honours .gitignore files without needing a git repository
    and reads no global or parent ignore files; it cannot read .notewellignore (the file-set check says
    when the two sets differ).
    """
    globs = [arg for t in FILE_TYPES for arg in ("--iglob", f"*{t}")]
    flags = ["--no-config", "--no-messages", "--no-require-git", "--no-ignore-dot", "--no-ignore-global",
             "--no-ignore-exclude", "--no-ignore-parent", f"--max-filesize={DEFAULT_MAX_FILE_BYTES}"]
    mode = [] if query.regex else ["-F"]
    return ["rg", *flags, *globs, "-i", *mode, "-m1", "-n", "--", query.text, *projects]


def rg_files(query: Query, corpus: Path, projects: Sequence[str]) -> int:
    out = subprocess.run(rg_command(query, projects), cwd=corpus, capture_output=True, check=False).stdout
    return len({line.split(b":", 1)[0] for line in out.splitlines()})


def rg_file_set(corpus: Path, projects: Sequence[str]) -> set[str]:
    cmd = rg_command(QUERIES[0], projects)
    args = [*cmd[: cmd.index("-i")], "--files", *projects]
    out = subprocess.run(args, cwd=corpus, capture_output=True, check=True, text=True).stdout
    return set(out.splitlines())


def build(settings: Settings, store: Store) -> BuildFigures:
    if store.documents.state():
        raise NotewellError(f"--db: the store at {store.url} already holds documents; give an empty database "
                            "so that the build is measured")
    started, cpu_started = time.perf_counter(), time.process_time()
    report = sync(settings, store)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    documents, text_bytes, index_bytes = store.documents.sizes()
    if not text_bytes:
        raise NotewellError(f"--corpus: no files of types {' '.join(FILE_TYPES)} in its project folders")
    if documents != report.added:
        raise NotewellError(f"--corpus: {report.added} files indexed but the store holds {documents}")
    return BuildFigures(documents, text_bytes, seconds, cpu_seconds, index_bytes, None)


def sqlite_file_bytes(db: str) -> int:
    """The database file once closed (its write-ahead log checkpointed and gone)."""
    return Path(db).stat().st_size


def run_query(engine: SearchEngine, query: Query, scope: Scope) -> SearchResult:
    return engine.search(SearchRequest(query=query.text, scope=scope, regex=query.regex, limit=LIMIT))


def measure(engine: SearchEngine, scope: Scope, corpus: Path, query: Query, runs: int, rg_runs: int) -> QueryFigures:
    if query.scoped:
        scope = Scope(projects=scope.projects[:1])
    result = run_query(engine, query, scope)
    notewell = timed(lambda: run_query(engine, query, scope), runs)
    command = rg_command(query, scope.projects)
    rg = timed(lambda: subprocess.run(command, cwd=corpus, capture_output=True, check=False), rg_runs, children_cpu)
    return QueryFigures(query, notewell, len(result.matches), result.candidates, result.scanned, rg,
                        rg_files(query, corpus, scope.projects))


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f}"


def machine() -> str:
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores, {model}, Python {platform.python_version()}, SQLite {_sqlite_version()}"


def _sqlite_version() -> str:
    import sqlite3

    return sqlite3.sqlite_version


def targets(build_figures: BuildFigures, figures: Sequence[QueryFigures],
            postgres: bool = False) -> list[tuple[str, str, str, bool]]:
    """The design's targets; on PostgreSQL the selective substring target is 30 ms (the rest are SQLite's)."""
    by_name = {f.query.name: f for f in figures}
    rare, regex = by_name["rare literal"], by_name["regex with a literal"]
    speed = build_figures.text_bytes / 1e6 / build_figures.seconds
    ratio = build_figures.index_bytes / build_figures.text_bytes
    faster = rare.rg.p95_ms / rare.notewell.p95_ms
    selective = 30 if postgres else 10
    return [
        ("selective substring p95", f"<= {selective} ms", f"{rare.notewell.p95_ms:.2f} ms",
         rare.notewell.p95_ms <= selective),
        ("selective substring vs ripgrep (p95)", ">= 20x faster", f"{faster:.0f}x", faster >= 20),
        ("regex with a literal p95", "<= 50 ms", f"{regex.notewell.p95_ms:.2f} ms", regex.notewell.p95_ms <= 50),
        ("index build", ">= 10 MB/s", f"{speed:.1f} MB/s", speed >= 10),
        ("index size", "<= 1x the text", f"{ratio:.3f}x", ratio <= 1),
    ]


@dataclass(frozen=True)
class Setting:
    """What a report says about the run besides the figures."""

    corpus: Path
    store: str
    projects: int
    runs: int
    rg_runs: int
    file_set: str
    load: str


def report(setting: Setting, build_figures: BuildFigures, figures: Sequence[QueryFigures]) -> str:
    b = build_figures
    lines = [
        f"Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}  ",
        f"Machine: {machine()}, ripgrep {_rg_version()}; load average at start {setting.load}  ",
        f"Corpus: {setting.corpus} ({b.documents} files of types {' '.join(FILE_TYPES)}, {_mb(b.text_bytes)} MB "
        f"of text, {setting.projects} projects); store: {setting.store}  ",
        f"Files: {setting.file_set}",
        "",
        "| index build | figure |",
        "| --- | --- |",
        f"| text indexed | {_mb(b.text_bytes)} MB in {b.documents} files |",
        f"| build time | {b.seconds:.1f} s, {b.text_bytes / 1e6 / b.seconds:.1f} MB/s "
        f"(CPU of this process {b.cpu_seconds:.1f} s) |",
        f"| trigram index | {_mb(b.index_bytes)} MB, {b.index_bytes / b.text_bytes:.3f}x the text |",
    ]
    if b.db_bytes is not None:
        lines.append(f"| whole database file (text, metadata, index) | {_mb(b.db_bytes)} MB, "
                     f"{b.db_bytes / b.text_bytes:.3f}x the text |")
    lines += [
        "",
        f"First match per file, limit {LIMIT}, case-insensitive; Notewell {setting.runs} warm runs, ripgrep "
        f"{setting.rg_runs} warm runs.",
        "",
        "| query | pattern | files (candidates) | Notewell p50 ms | p95 ms | CPU p50 ms | rg files | rg p50 ms "
        "| p95 ms | CPU p50 ms | rg/Notewell p50 | p95 |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for f in figures:
        cands = "scan" if f.scanned else str(f.candidates)
        nw, rg = f.notewell, f.rg
        lines.append(
            f"| {f.query.name} | `{f.query.text}` | {f.files} ({cands}) | {nw.p50_ms:.2f} | {nw.p95_ms:.2f} "
            f"| {nw.cpu_p50_ms:.2f} | {f.rg_files} | {rg.p50_ms:.1f} | {rg.p95_ms:.1f} | {rg.cpu_p50_ms:.1f} "
            f"| {rg.p50_ms / nw.p50_ms:.1f}x | {rg.p95_ms / nw.p95_ms:.1f}x |"
        )
    lines += ["", "| target | goal | measured | met |", "| --- | --- | --- | --- |"]
    for name, goal, measured, met in targets(build_figures, figures, postgres=setting.store.startswith("PostgreSQL")):
        lines.append(f"| {name} | {goal} | {measured} | {'met' if met else 'MISSED'} |")
    return "\n".join(lines) + "\n"


def _rg_version() -> str:
    out = subprocess.run(["rg", "--version"], capture_output=True, text=True, check=True).stdout
    return out.split()[1]


def file_set_check(store: Store, corpus: Path, projects: Sequence[str]) -> str:
    ours = {f"{p}/{m.path}" for p in projects for m in store.documents.metas(p)}
    theirs = rg_file_set(corpus, projects)
    if ours == theirs:
        return f"ripgrep and Notewell read the same {len(ours)} files."
    return (f"ripgrep reads {len(theirs)} files, Notewell {len(ours)}: {len(theirs - ours)} only in ripgrep's "
            f"set, {len(ours - theirs)} only in Notewell's.")


def open_bench_store(db: str) -> Store:
    try:
        return open_store(db)
    except ModuleNotFoundError as exc:
        raise NotewellError(f"--db: {db} needs the PostgreSQL store ({exc.name}), which this checkout does not "
                            "have yet; run without --db to benchmark SQLite") from None


# ---- scale mode -------------------------------------------------------------------------------------


def scale_source() -> Path:
    """What scale mode copies: the standard library (its site-packages included), wherever it is."""
    return Path(sysconfig.get_paths()["stdlib"])


def scale_corpus(root: Path, copies: int) -> Path:
    """The standard library's text files ``copies`` times over, one project per copy (built once)."""
    corpus = root / f"stdlib-x{copies}"
    complete = corpus / ".corpus-complete"  # hidden: neither indexed nor read by ripgrep
    if complete.exists():
        return corpus
    source = scale_source()
    if corpus.exists():
        shutil.rmtree(corpus)
    print(f"Copying the text files of {source} {copies} time(s) into {corpus} ...", file=sys.stderr)
    for n in range(1, copies + 1):
        copy_text_files(source, corpus / f"copy{n}")
    for project, folders in MANUAL_PAGES.items():
        for folder in folders:
            unpack_manual_pages(manual_pages() / folder, corpus / project / folder)
    complete.write_text(f"{source}\n", encoding="utf-8")
    return corpus


def manual_pages() -> Path:
    """Where Debian keeps the manual pages (manpages-zh and manpages-ja add zh_CN, zh_TW and ja)."""
    return Path("/usr/share/man")


def unpack_manual_pages(source: Path, target: Path) -> None:
    """Each gzipped manual page under ``source`` as a .txt file under ``target`` (none when not installed)."""
    for page in sorted(source.rglob("*.gz")) if source.is_dir() else []:
        out = target / page.relative_to(source).with_suffix(".txt")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(gzip.decompress(page.read_bytes()))


def copy_text_files(source: Path, target: Path) -> None:
    """The files the benchmark indexes (its types, the size limit, not hidden) and the ignore files."""
    for folder, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") and name not in IGNORE_FILES:
                continue
            if not name.startswith(".") and not name.lower().endswith(FILE_TYPES):
                continue
            src = Path(folder, name)
            if src.is_symlink() or not src.is_file() or src.stat().st_size > DEFAULT_MAX_FILE_BYTES:
                continue
            dst = target / src.relative_to(source)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)


def rss_mb() -> tuple[float, float]:
    """This process's resident memory now and at its peak, in MB (Linux /proc)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def child_build(corpus: Path, db: str) -> dict[str, object]:
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    settings = Settings(vault=corpus, db=db, file_types=FILE_TYPES)
    store = open_bench_store(db)
    try:
        b = build(settings, store)
        store_bytes = store_size_postgres(db) if settings.is_postgres else 0
    finally:
        store.close()
    if not settings.is_postgres:
        store_bytes = sqlite_file_bytes(db)
    return {"documents": b.documents, "text_bytes": b.text_bytes, "seconds": b.seconds,
            "cpu_seconds": b.cpu_seconds, "index_bytes": b.index_bytes, "store_bytes": store_bytes,
            "peak_rss_mb": rss_mb()[1], "load": load}


def store_size_postgres(db: str) -> int:
    import psycopg

    with psycopg.connect(db) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0


def child_serve(corpus: Path, db: str, runs: int, rg_runs: int) -> dict[str, object]:
    """The timed queries beside ripgrep, then MIXED_RUNS mixed ones: this process's memory as a server's."""
    store = open_bench_store(db)
    try:
        projects = store.documents.vault_projects()
        engine = SearchEngine(store.documents)
        scope = Scope(projects=projects)
        figures = {}
        for query in QUERIES:
            print(f"  {query.name}: {query.text}", file=sys.stderr)
            f = measure(engine, scope, corpus, query, runs, rg_runs)
            figures[query.name] = {"files": f.files, "candidates": f.candidates, "scanned": f.scanned,
                                   "nw": [f.notewell.p50_ms, f.notewell.p95_ms, f.notewell.cpu_p50_ms],
                                   "rg": [f.rg.p50_ms, f.rg.p95_ms, f.rg.cpu_p50_ms], "rg_files": f.rg_files}
        started = time.perf_counter()
        for n in range(MIXED_RUNS):
            run_query(engine, MIXED[n % len(MIXED)], scope)
        mixed_s = time.perf_counter() - started
    finally:
        store.close()
    rss, peak = rss_mb()
    return {"queries": figures, "rss_mb": rss, "peak_rss_mb": peak, "mixed_s": mixed_s}


def saved_path(corpus: Path, backend: str, child: str) -> Path:
    """Where a child leaves its answer: beside the corpus, so that a report can combine runs."""
    return corpus.parent / f"{corpus.name}.{backend}.{child}.json"


def run_child(args: list[str]) -> None:
    """This script in a child process (it saves its answer as JSON, see saved_path)."""
    code = subprocess.run([sys.executable, __file__, *args], check=False).returncode
    if code != 0:
        raise NotewellError(f"the child {' '.join(args[:2])} failed (exit {code})")


def fresh_postgres_database(url_template: str, name: str) -> str:
    """An empty database ``name`` (dropped first if it exists) on the server of ``url_template``, a URL
    with ``{db}`` where the database name goes; its URL."""
    import psycopg

    with psycopg.connect(url_template.format(db="postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return url_template.format(db=name)


@dataclass(frozen=True)
class ScaleRun:
    backend: str
    load: str
    build: dict[str, object]
    build_peak_mb: float
    serve: dict[str, object]


def scale_run(backend: str, corpus: Path, db: str, runs: int, rg_runs: int) -> None:
    for child in ("build", "serve"):
        saved_path(corpus, backend, child).unlink(missing_ok=True)
    print(f"{backend}, {corpus}: building ...", file=sys.stderr)
    run_child(["--child", "build", "--corpus", str(corpus), "--db", db])
    print(f"{backend}, {corpus}: querying ...", file=sys.stderr)
    run_child(["--child", "serve", "--corpus", str(corpus), "--db", db, "--runs", str(runs), "--rg-runs", str(rg_runs)])


def saved_run(corpus: Path, backend: str) -> ScaleRun | None:
    paths = [saved_path(corpus, backend, child) for child in ("build", "serve")]
    if not all(path.exists() for path in paths):
        return None
    built, served = (json.loads(path.read_text(encoding="utf-8")) for path in paths)
    return ScaleRun(backend, str(built.get("load", "?")), built, float(built["peak_rss_mb"]), served)


def scale_report(runs: Sequence[ScaleRun], copies: Sequence[int]) -> str:
    def size(r: ScaleRun) -> str:
        return f"{float(r.build['text_bytes']) / 1e6:,.0f} MB"  # type: ignore[arg-type]

    head = "| figure | " + " | ".join(f"{r.backend} {size(r)}" for r in runs) + " |"
    lines = [f"Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}  ",
             f"Machine: {machine()}, ripgrep {_rg_version()}  ",
             f"Corpus: the text files of {scale_source()} ({' '.join(FILE_TYPES)}), "
             f"copied {' and '.join(str(c) for c in copies)} times, one project per copy", "",
             head, "| --- |" + " ---: |" * len(runs)]

    def row(name: str, cell: Callable[[ScaleRun], str]) -> None:
        lines.append(f"| {name} | " + " | ".join(cell(r) for r in runs) + " |")

    def num(r: ScaleRun, key: str) -> float:
        return float(r.build[key])  # type: ignore[arg-type]

    row("load average at the start", lambda r: r.load)
    row("files", lambda r: f"{int(num(r, 'documents')):,}")
    row("build MB/s", lambda r: f"{num(r, 'text_bytes') / 1e6 / num(r, 'seconds'):.1f}")
    row("build: peak memory of the indexer process", lambda r: f"{r.build_peak_mb:.0f} MB")
    row("whole store / text", lambda r: f"{num(r, 'store_bytes') / num(r, 'text_bytes'):.2f}x")
    row("trigram index / text", lambda r: f"{num(r, 'index_bytes') / num(r, 'text_bytes'):.3f}x")
    for query in QUERIES:
        def cell(r: ScaleRun, name: str = query.name) -> str:
            q = r.serve["queries"].get(name)  # type: ignore[attr-defined]
            if q is None:
                return "not run"  # a run saved before the query was in the set
            nw, rg = q["nw"], q["rg"]
            return f"{nw[0]:.1f} / **{nw[1]:.1f}** ({rg[1] / nw[1]:.0f}x)"

        def found(r: ScaleRun, name: str = query.name) -> str:
            q = r.serve["queries"].get(name)  # type: ignore[attr-defined]
            if q is None:
                return "not run"
            return f"{q['files']} ({'scan' if q['scanned'] else q['candidates']}); {q['rg_files']}"
        row(f"{query.name} `{query.text}` p50 / p95 ms (rg p95 / Notewell p95)", cell)
        row(f"{query.name}: files (candidates); rg files", found)
    row(f"queries' memory: RSS after {MIXED_RUNS:,} mixed queries (peak)",
        lambda r: f"{float(r.serve['rss_mb']):.0f} MB ({float(r.serve['peak_rss_mb']):.0f})")  # type: ignore[arg-type]
    return "\n".join(lines) + "\n"


def scale(root: Path, copies: Sequence[int], backends: Sequence[str], pg: str | None, runs: int, rg_runs: int) -> str:
    """Run the scale benchmark on ``backends``, then report every run saved under ``root`` (so that one
    backend can be run again and reported beside the other's last run)."""
    root.mkdir(parents=True, exist_ok=True)
    corpora = [scale_corpus(root, n) for n in copies]
    for corpus in corpora:
        if "sqlite" in backends:
            db = root / f"{corpus.name}.db"
            for leftover in root.glob(f"{db.name}*"):
                leftover.unlink()
            scale_run("SQLite", corpus, str(db), runs, rg_runs)
        if "postgresql" in backends and pg:
            scale_run("PostgreSQL", corpus, fresh_postgres_database(pg, f"notewell_scale_{corpus.name}"), runs, rg_runs)
    found = [saved_run(corpus, backend) for backend in ("SQLite", "PostgreSQL") for corpus in corpora]
    return scale_report([run for run in found if run is not None], copies)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                        help=f"folder to index; its top-level folders are the projects (default {DEFAULT_CORPUS})")
    parser.add_argument("--db", help="an empty store: a SQLite path or a postgresql:// URL "
                                     "(default: a SQLite file in a temporary folder)")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per query (default 20)")
    parser.add_argument("--rg-runs", type=int, default=5, help="timed ripgrep runs per query (default 5)")
    parser.add_argument("--out", type=Path, help="also write the markdown report to this file")
    parser.add_argument("--scale", type=Path, metavar="DIR",
                        help="scale mode: build the 1x and 6x corpora under DIR and compare them (see above)")
    parser.add_argument("--copies", default=",".join(map(str, SCALE_COPIES)),
                        help="scale mode: how many copies of the standard library each corpus holds, comma-separated "
                             "(default 1,6; 60 is about 10 GB)")
    parser.add_argument("--pg", metavar="URL", help="scale mode: also on this PostgreSQL server, a URL with {db} "
                        "for the database name (postgresql://postgres@/{db}?host=/tmp/pg&port=5432)")
    parser.add_argument("--backends", default="sqlite,postgresql",
                        help="scale mode: which to run now (comma-separated; the report also shows the saved "
                             "runs of the others); 'none' only reports")
    parser.add_argument("--child", choices=("build", "serve"), help=argparse.SUPPRESS)
    parser.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.rg_runs < 1:
        parser.error("--runs and --rg-runs must be at least 1")
    try:
        args.copies = [int(n) for n in args.copies.split(",")]
    except ValueError:
        parser.error(f"--copies: {args.copies!r} is not a comma-separated list of counts such as 1,6")
    if any(n < 1 for n in args.copies):
        parser.error("--copies: each count must be at least 1")
    if args.pg and "{db}" not in args.pg:
        parser.error("--pg: put {db} where the database name goes, e.g. postgresql://postgres@/{db}?port=5432")
    if args.scale is None and not args.corpus.is_dir():
        parser.error(f"--corpus: {args.corpus} is not a folder")
    if shutil.which("rg") is None:
        parser.error("ripgrep (rg) is not installed; install it (apt-get install ripgrep) to compare against it")
    return args


def bench(corpus: Path, db: str, store_label: str, runs: int, rg_runs: int) -> str:
    settings = Settings(vault=corpus, db=db, file_types=FILE_TYPES)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    store = open_bench_store(db)
    try:
        print(f"Indexing {corpus} into {store_label} ...", file=sys.stderr)
        build_figures = build(settings, store)
        if build_figures.text_bytes < MIN_TEXT_BYTES:
            print(f"note: only {_mb(build_figures.text_bytes)} MB of text; the targets are for 100+ MB",
                  file=sys.stderr)
        projects = [p for p in store.documents.vault_projects() if p != ROOT_PROJECT]  # the folders, as before
        engine = SearchEngine(store.documents)
        scope = Scope(projects=projects)
        figures = []
        for query in QUERIES:
            print(f"Query {query.name}: {query.text}", file=sys.stderr)
            figures.append(measure(engine, scope, corpus, query, runs, rg_runs))
        setting = Setting(corpus, store_label, len(projects), runs, rg_runs,
                          file_set_check(store, corpus, projects), load)
    finally:
        store.close()
    if not settings.is_postgres:
        build_figures = replace(build_figures, db_bytes=sqlite_file_bytes(db))
    return report(setting, build_figures, figures)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    corpus: Path = args.corpus.resolve()
    if args.child:
        answer = (child_build(corpus, args.db) if args.child == "build"
                  else child_serve(corpus, args.db, args.runs, args.rg_runs))
        backend = "PostgreSQL" if is_postgres_url(args.db) else "SQLite"
        saved_path(corpus, backend, args.child).write_text(json.dumps(answer), encoding="utf-8")
        if args.child_out:
            args.child_out.write_text(json.dumps(answer), encoding="utf-8")
        return 0
    try:
        if args.scale:
            text = scale(args.scale.resolve(), args.copies, args.backends.split(","), args.pg, args.runs, args.rg_runs)
        elif args.db:
            label = "PostgreSQL" if is_postgres_url(args.db) else f"SQLite {args.db}"
            text = bench(corpus, args.db, label, args.runs, args.rg_runs)
        else:
            with tempfile.TemporaryDirectory(prefix="notewell-bench-") as tmp:
                text = bench(corpus, str(Path(tmp) / "index.db"), "SQLite (a temporary file)", args.runs,
                             args.rg_runs)
    except NotewellError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
