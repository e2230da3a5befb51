"""Watch benchmark: the time from a file's write to its first search hit, and the watcher's idle CPU.

    python bench/watch_bench.py [--corpus DIR] [--edits N] [--peer-edits N] [--idle-seconds S] [--out FILE]

The corpus (default: the running Python's standard library, the 165 MB corpus of search_bench.py) is
copied to a temporary vault (without __pycache__), indexed with search_bench's file types, and then
watched by the same VaultWatcher `notewell serve` runs, on a thread of this process. Each of N edits
appends a line with a unique word to a file of the corpus (spread over its projects), and the clock
runs from the file's close to the first search (through SearchEngine, on a connection of its own,
every 5 ms) that finds the word. The peer, in the same run, is what a change cost before the
watcher: `notewell index` (a whole sync) after each of a few edits. Then the vault is left quiet and
the process's CPU time over a while is the watcher's idle cost.
"""

from __future__ import annotations

import argparse
import platform
import random
import resource
import shutil
import statistics
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

from notewell.config import Settings
from notewell.indexer import IndexReport, sync
from notewell.records.documents import Scope
from notewell.search.engine import SearchEngine, SearchRequest
from notewell.store import open_store
from notewell.store.leadership import open_leadership
from notewell.watcher import VaultWatcher, WatcherThread

DEFAULT_CORPUS = Path(sysconfig.get_paths()["stdlib"])
FILE_TYPES: tuple[str, ...] = (".py", ".txt", ".rst", ".html", ".c", ".h")  # as bench/search_bench.py
POLL_S = 0.005
GIVE_UP_S = 30.0


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def copy_corpus(corpus: Path, into: Path) -> Path:
    vault = into / "vault"
    shutil.copytree(corpus, vault, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), symlinks=True)
    return vault


def targets(vault: Path, settings: Settings, count: int, seed: int) -> list[Path]:
    """``count`` indexed files of the corpus, spread over its projects (a fixed seed: the same files each run)."""
    store = open_store(settings.db)
    try:
        keys = sorted(store.documents.state())
    finally:
        store.close()
    files = [vault / (path if project == "_root" else f"{project}/{path}") for project, path in keys]
    random.Random(seed).shuffle(files)
    return [files[i % len(files)] for i in range(count)]  # a small corpus: some files are edited again


def wait_for_hit(engine: SearchEngine, projects: list[str], word: str) -> bool:
    request = SearchRequest(query=word, scope=Scope(projects=projects), limit=1)
    deadline = time.monotonic() + GIVE_UP_S
    while time.monotonic() < deadline:
        if engine.search(request).matches:
            return True
        time.sleep(POLL_S)
    return False


def append_word(path: Path, word: str) -> float:
    with path.open("a", encoding="utf-8") as f:
        f.write(f"\n# {word}\n")
    return time.perf_counter()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help=f"default {DEFAULT_CORPUS}")
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--peer-edits", type=int, default=5, help="edits timed with a whole sync (the peer)")
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="watch-bench-") as tmp:
        vault = copy_corpus(args.corpus, Path(tmp))
        # the watcher reads the vault's notewell.toml again before each sync: it must name the same file types,
        # or its first sync would drop every file of other types and no edit of them would ever be found
        (vault / "notewell.toml").write_text(
            "[index]\nfile_types = [" + ", ".join(f'"{t}"' for t in FILE_TYPES) + "]\n", encoding="utf-8")
        settings = Settings(vault=vault, db=str(Path(tmp) / "index.db"), file_types=FILE_TYPES)
        writer_store = open_store(settings.db)
        started = time.perf_counter()
        built = sync(settings, writer_store)
        build_s = time.perf_counter() - started
        chosen = targets(vault, settings, args.edits + args.peer_edits, seed=13)
        reader_store = open_store(settings.db)
        engine = SearchEngine(reader_store.documents)
        projects = reader_store.documents.vault_projects()

        peer: list[float] = []
        for i, path in enumerate(chosen[args.edits:]):
            written = append_word(path, f"watchbenchpeer{i}x")
            sync(settings, writer_store)
            assert wait_for_hit(engine, projects, f"watchbenchpeer{i}x")
            peer.append((time.perf_counter() - written) * 1000)

        caught_up = threading.Event()

        def on_synced(_report: IndexReport) -> None:
            caught_up.set()

        watcher = WatcherThread(VaultWatcher(settings, writer_store, open_leadership(settings.db), on_synced)).start()
        if not caught_up.wait(120):
            raise SystemExit("the watcher did not finish its first sync in 120 s")
        latencies: list[float] = []
        missed = 0
        for i, path in enumerate(chosen[:args.edits]):
            word = f"watchbench{i}x{random.Random(i).randrange(10**6)}"
            written = append_word(path, word)
            if wait_for_hit(engine, projects, word):
                latencies.append((time.perf_counter() - written) * 1000)
            else:
                missed += 1
        time.sleep(2)  # let the last batch settle before the quiet period
        cpu_before, wall_before = cpu_seconds(), time.perf_counter()
        time.sleep(args.idle_seconds)
        idle_cpu = (cpu_seconds() - cpu_before) / (time.perf_counter() - wall_before) * 100
        watcher.stop()
        reader_store.close()
        writer_store.close()

    if not latencies:
        raise SystemExit(f"none of the {missed} edits was found by search within {GIVE_UP_S:.0f} s of its write")
    p50, p95 = statistics.median(latencies), percentile(latencies, 95)
    peer50, peer95 = statistics.median(peer), percentile(peer, 95)
    lines = [
        f"watch bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Python {platform.python_version()}, "
        f"{platform.machine()}",
        f"corpus {args.corpus}: {built.added} documents, {built.bytes_read / 1e6:.1f} MB of text, "
        f"{len(projects)} projects; first build {build_s:.1f} s",
        f"write -> first hit, watcher, {len(latencies)} edits ({missed} missed): p50 {p50:.0f} ms, p95 {p95:.0f} ms, "
        f"max {max(latencies):.0f} ms",
        f"write -> first hit, a whole sync after each edit (the peer), {len(peer)} edits: p50 {peer50:.0f} ms, "
        f"p95 {peer95:.0f} ms",
        f"watcher / peer: p50 {p50 / peer50:.2f}x, p95 {p95 / peer95:.2f}x",
        f"idle CPU over {args.idle_seconds:.0f} s of a quiet vault: {idle_cpu:.2f}% of a core",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
