"""Index-build benchmark: a corpus into a fresh SQLite store, with CPU time and peak memory beside the wall clock.

    python bench/build_bench.py --corpus DIR [--runs N] [--peer SRC] [--out FILE]

Each build runs in a child process of its own (its peak RSS is the build's), with search_bench.py's file
types and its ``build`` (``notewell.indexer.sync`` into an empty store, timed). With ``--peer SRC`` (the
``src`` folder of another checkout, e.g. ``git archive <commit> src | tar -x -C /tmp/peer``) the runs
alternate between this checkout and the peer, so that both see the same machine, and the report gives
their ratio. The machines these run on are shared: CPU seconds, and MB per CPU second, move far less with
the load than the wall clock does; the load average is reported before each run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

FIGURES = (("wall_s", "wall-clock s"), ("cpu_s", "CPU s (all threads)"), ("main_cpu_s", "CPU s of the main thread"),
           ("mb_per_s", "MB/s (wall clock)"), ("mb_per_cpu_s", "MB per CPU second"), ("peak_rss_mb", "peak RSS MB"))


def child(corpus: Path, db: str) -> dict[str, object]:
    """One build of ``corpus`` into the empty SQLite file ``db``, in this process."""
    sys.path.insert(0, str(Path(__file__).parent))
    from notewell.config import Settings
    from search_bench import FILE_TYPES, build, open_bench_store, rss_mb

    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    store = open_bench_store(db)
    try:
        main_started = time.thread_time()
        figures = build(Settings(vault=corpus, db=db, file_types=FILE_TYPES), store)
        main_cpu = time.thread_time() - main_started
    finally:
        store.close()
    mb = figures.text_bytes / 1e6
    return {"files": figures.documents, "mb": mb, "wall_s": figures.seconds, "cpu_s": figures.cpu_seconds,
            "main_cpu_s": main_cpu, "mb_per_s": mb / figures.seconds, "mb_per_cpu_s": mb / figures.cpu_seconds,
            "peak_rss_mb": rss_mb()[1], "load": load}


def run_child(corpus: Path, folder: Path, src: Path | None) -> dict[str, object]:
    db = folder / f"build-{time.monotonic_ns()}.db"
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    try:
        out = subprocess.run([sys.executable, __file__, "--child", str(db), "--corpus", str(corpus)],
                             env=env, capture_output=True, text=True, check=False)
    finally:
        for path in folder.glob(f"{db.name}*"):
            path.unlink()
    if out.returncode != 0:
        raise SystemExit(f"a build failed (exit {out.returncode}):\n{out.stderr}")
    answer: dict[str, object] = json.loads(out.stdout)
    return answer


def report(corpus: Path, runs: dict[str, list[dict[str, object]]]) -> str:
    some = next(iter(runs.values()))
    lines = [f"Corpus: {corpus} ({some[0]['files']} files, {float(str(some[0]['mb'])):.1f} MB of text); "
             f"medians of {len(some)} runs each",
             "", "| figure | " + " | ".join(runs) + (" | this / peer |" if len(runs) == 2 else " |"),
             "| --- |" + " ---: |" * (len(runs) + (len(runs) == 2))]
    for key, label in FIGURES:
        medians = [statistics.median(float(str(r[key])) for r in rs) for rs in runs.values()]
        row = f"| {label} | " + " | ".join(f"{m:.2f}" if m < 100 else f"{m:.0f}" for m in medians)
        lines.append(row + (f" | {medians[0] / medians[1]:.2f}x |" if len(runs) == 2 else " |"))
    lines += ["", "Each run (load average at its start):", ""]
    for name, rs in runs.items():
        lines += [f"- {name}: " + "; ".join(f"{float(str(r['wall_s'])):.1f} s wall, {float(str(r['cpu_s'])):.1f} s CPU"
                                            f" (load {r['load']})" for r in rs)]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, required=True, help="folder to index; its top-level folders are "
                                                                   "the projects")
    parser.add_argument("--runs", type=int, default=3, help="builds per checkout (default 3)")
    parser.add_argument("--peer", type=Path, metavar="SRC", help="another checkout's src folder, built in turns")
    parser.add_argument("--out", type=Path, help="also write the markdown report to this file")
    parser.add_argument("--child", metavar="DB", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        parser.error(f"--corpus: {args.corpus} is not a folder")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.peer is not None and not (args.peer / "notewell").is_dir():
        parser.error(f"--peer: {args.peer} holds no notewell package (give a checkout's src folder)")
    if args.child:
        print(json.dumps(child(args.corpus.resolve(), args.child)))
        return 0
    sources: dict[str, Path | None] = {"this checkout": None}
    if args.peer is not None:
        sources["peer"] = args.peer.resolve()
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in sources}
    with tempfile.TemporaryDirectory(prefix="notewell-build-bench-") as tmp:
        for n in range(args.runs):
            for name, src in sources.items():
                print(f"run {n + 1}/{args.runs}: {name} ...", file=sys.stderr)
                runs[name].append(run_child(args.corpus.resolve(), Path(tmp), src))
    text = report(args.corpus, runs)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
