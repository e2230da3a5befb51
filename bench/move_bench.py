"""Move benchmark: ``move_note`` of a note that N notes link to, in a project of D notes, through the note
writing service in-process (each linking note rewritten and indexed before the move answers).

    python bench/move_bench.py [--documents D] [--linking N] [--moves M] [--db URL_OR_PATH]

Each move takes the note to a new folder and name and checks, when it returns, that every linking note names
its new place on disk and that getLinks' backlinks of it count every linking note (the index follows in the
same call). The moves go back and forth, so each rewrites all N notes. Reported: each move's wall-clock time,
and its median.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime

PROJECT = "bench"


def _vault(root: Path, documents: int, linking: int) -> Path:
    vault = root / "vault"
    notes = vault / PROJECT / "notes"
    notes.mkdir(parents=True)
    (vault / PROJECT / "target.md").write_text("# Target\n\nThe note every linking note names.\n")
    for i in range(documents - 1):
        links = "See [[target]] and [the target](../target.md).\n" if i < linking else ""
        (notes / f"n{i:05d}.md").write_text(f"# Note {i}\n\nSome text of note {i}.\n{links}")
    return vault


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--linking", type=int, default=300)
    parser.add_argument("--moves", type=int, default=3)
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = _vault(Path(tmp), args.documents, args.linking)
        rt = open_runtime(str(vault), args.db or str(Path(tmp) / "index.db"))
        try:
            rt.indexing.sync()
            places = [f"{PROJECT}/target.md", f"{PROJECT}/moved/target-2.md"]
            times = []
            for i in range(args.moves):
                old, new = places[i % 2], places[(i + 1) % 2]
                start = time.perf_counter()
                answer = rt.notes.move_note(LOCAL_OWNER, old, new, tool="bench")
                times.append(time.perf_counter() - start)
                assert not answer.unlinked, answer.unlinked
                links = rt.links.links(LOCAL_OWNER, new, direction="backlinks", limit=1)
                assert links.backlinks_total == 2 * args.linking, (links.backlinks_total, answer.summary)
                name = new.rsplit("/", 1)[1].removesuffix(".md")
                assert all(f"[[{name}]]" in (vault / PROJECT / "notes" / f"n{n:05d}.md").read_text()
                           for n in range(args.linking))
                print(f"move {i + 1}: {times[-1]:.2f} s ({args.linking} notes rewritten)")
            print(f"{args.documents} documents, {args.linking} linking notes: median move "
                  f"{statistics.median(times):.2f} s over {len(times)}")
        finally:
            rt.close()


if __name__ == "__main__":
    main()
