"""Note writing benchmark: edits of a 1 MB note through the note writing service, each found by search when
it returns; then W writers editing W different notes, and W writers appending to one note, for S seconds.

    python bench/note_write_bench.py [--edits N] [--writers W] [--seconds S] [--db URL_OR_PATH]

The first part times ``edit_note`` (append, then replace_section) on a note of about 1 MB and checks after
each that ``search_knowledge`` finds the new text (the index follows in the same call). Target (issue 26):
p95 <= 50 ms. The second part counts errors and lost edits: every edit's word must be in its note exactly
once at the end, and on the shared note the words' order must be the journal's (its entries one chain of
versions, from the note before the race to the note after). Targets: 0 errors, 0 lost, 0 breaks.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import Runtime, open_runtime
from notewell.services.note_diff import version_of
from notewell.services.note_edits import Edit

LINE = "The quarterly pricing review keeps the retainer floor and the discount ladder as they are.\n"


def _vault(root: Path, writers: int) -> Path:
    vault = root / "vault"
    (vault / "bench").mkdir(parents=True)
    body = "".join(f"## Section {i}\n" + LINE * 40 for i in range(260))  # about 1 MB
    (vault / "bench" / "big.md").write_text("# Big\n\n" + body)
    for i in range(writers):
        (vault / "bench" / f"own{i}.md").write_text(f"# Own {i}\n")
    (vault / "bench" / "shared.md").write_text("# Shared\n")
    return vault


def _edits(rt: Runtime, count: int) -> list[float]:
    times = []
    for i in range(count):
        word = f"zqxedit{i:05d}"
        edit = Edit("append", word) if i % 2 else Edit("replace_section", LINE + word, heading="## Section 7")
        start = time.perf_counter()
        rt.notes.edit_note(LOCAL_OWNER, "bench/big.md", edit, tool="bench")
        found = rt.knowledge.search_knowledge(LOCAL_OWNER, word)
        times.append(time.perf_counter() - start)
        assert [h.path for h in found.hits] == ["bench/big.md"], word
    return times


def _race(rt: Runtime, writers: int, seconds: float, shared: bool) -> tuple[int, int, int]:
    """(edits, errors, lost) of ``writers`` threads appending for ``seconds``, to one note or each its own."""
    done: list[list[str]] = [[] for _ in range(writers)]
    errors: list[BaseException] = []
    stop = time.monotonic() + seconds

    def work(n: int) -> None:
        path = "bench/shared.md" if shared else f"bench/own{n}.md"
        i = 0
        while time.monotonic() < stop:
            word = f"w{n:02d}x{i:06d}"
            try:
                rt.notes.edit_note(LOCAL_OWNER, path, Edit("append", word), tool="bench")
            except Exception as exc:  # counted, not raised: the benchmark reports them
                errors.append(exc)
            else:
                done[n].append(word)
            i += 1

    threads = [threading.Thread(target=work, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lost = 0
    for n in range(writers):
        text = (rt.settings.vault / ("bench/shared.md" if shared else f"bench/own{n}.md")).read_text()
        lines = text.splitlines()
        lost += sum(1 for word in done[n] if lines.count(word) != 1)
    return sum(len(d) for d in done), len(errors), lost


def _journal_breaks(rt: Runtime, path: str, first: bytes, edits: int) -> int:
    """How far the journal of ``path`` is from one chain: each entry's before version the previous entry's
    after version, from ``first`` (the note's bytes before the race) to the note as it is. With every append
    present once and each at the end, one chain means the note's order is the journal's."""
    project, rel = path.split("/", 1)
    entries = rt.store.journal.entries([project], paths=[rel], limit=edits + 1)[::-1]
    versions = [version_of(first), *(e.after_version for e in entries)]
    breaks = sum(1 for e, before in zip(entries, versions, strict=False) if e.before_version != before)
    last = version_of((rt.settings.vault / path).read_bytes())
    return breaks + (versions[-1] != last) + (len(entries) != edits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = _vault(Path(tmp), args.writers)
        rt = open_runtime(str(vault), args.db or str(Path(tmp) / "index.db"))
        try:
            rt.indexing.sync()
            times = sorted(_edits(rt, args.edits))
            p95 = times[int(len(times) * 0.95) - 1] if len(times) >= 20 else times[-1]
            print(f"1 MB note: {len(times)} edits, median {statistics.median(times) * 1000:.1f} ms, "
                  f"p95 {p95 * 1000:.1f} ms (each found by search in the same call)")
            for shared in (False, True):
                first = (vault / "bench/shared.md").read_bytes()
                edits, errors, lost = _race(rt, args.writers, args.seconds, shared)
                where = "one note" if shared else "their own notes"
                breaks = _journal_breaks(rt, "bench/shared.md", first, edits) if shared else 0
                order = f", journal order breaks {breaks}" if shared else ""
                print(f"{args.writers} writers on {where} for {args.seconds:g} s: {edits} edits, {errors} errors, "
                      f"{lost} lost{order}")
        finally:
            rt.close()


if __name__ == "__main__":
    main()
