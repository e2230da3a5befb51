"""Meeting action items: what they cost the indexer, against the same notes outside a meetings folder.

    python bench/meeting_bench.py [--notes N] [--edits E] [--db-dir DIR]

Two vaults of N notes with the same text (a heading, a paragraph, an Actions section of 10 items naming the
team's 20 people): in one the notes sit in a ``meetings`` folder (each yields 10 action items), in the peer
they do not (nothing is derived). Printed: the first full index of each (seconds and the ratio), a second
full index with nothing changed (the meeting vault reads its notes holding live items again), and E edits of
one note (a line ticked, then unticked) synced as the watcher does (``sync_paths``), p50 and p95 of each.
SQLite files under a temporary folder (or --db-dir).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import Runtime, open_runtime

PEOPLE = [(f"person{i}@bench.test", f"Person{i} Surname{i}", f"person{i}") for i in range(20)]


def _note(i: int, ticked: bool = False) -> str:
    lines = [f"- [{'x' if ticked and k == 0 else ' '}] Person{(i + k) % 20}: follow up item {k} of note {i} "
             f"by 2026-0{1 + k % 9}-1{k % 9}" for k in range(10)]
    return (f"# Meeting {i}\n\nWe met about topic {i} and agreed the next steps below.\n\n## Actions\n\n"
            + "\n".join(lines) + "\n")


def _vault(root: Path, folder: str, notes: int) -> Path:
    vault = root / folder
    for i in range(notes):
        path = vault / "team" / folder / f"2026-01-{1 + i % 28:02d}-meeting-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_note(i), encoding="utf-8")
    return vault


def _open(vault: Path, db: Path) -> Runtime:
    rt = open_runtime(str(vault), str(db))
    for email, name, handle in PEOPLE:
        rt.administration.add_user(LOCAL_OWNER, email, "member", name=name, handle=handle, home_folder=False)
    return rt


def _timed(run: object) -> float:
    start = time.perf_counter()
    run()  # type: ignore[operator]
    return time.perf_counter() - start


def _edits(rt: Runtime, folder: str, count: int) -> list[float]:
    rel = f"{folder}/2026-01-01-meeting-0.md"
    path = rt.settings.vault / "team" / rel
    times = []
    for n in range(count):
        path.write_text(_note(0, ticked=n % 2 == 0), encoding="utf-8")
        times.append(_timed(lambda: rt.indexing.sync_paths([f"team/{rel}"])))
    return times


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--db-dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.db_dir or Path(tmp)
        results = {}
        for folder in ("meetings", "notes"):
            vault = _vault(Path(tmp), folder, args.notes)
            rt = _open(vault, root / f"{folder}.db")
            try:
                first = _timed(rt.indexing.sync)
                again = _timed(rt.indexing.sync)
                edits = _edits(rt, folder, args.edits)
                live = len(rt.store.brain.noted_paths())
            finally:
                rt.close()
            results[folder] = (first, again, edits)
            print(f"{folder:8}: first index {first:.2f} s, nothing changed {again * 1000:.0f} ms, edit synced p50 "
                  f"{statistics.median(edits) * 1000:.1f} ms p95 {_p95(edits) * 1000:.1f} ms "
                  f"({live} notes holding live items)")
        (mf, ma, me), (pf, pa, pe) = results["meetings"], results["notes"]
        print(f"ratio meetings/notes: first index {mf / pf:.2f}, nothing changed {ma / pa:.2f}, edit p50 "
              f"{statistics.median(me) / statistics.median(pe):.2f}, p95 {_p95(me) / _p95(pe):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
